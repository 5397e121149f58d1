"""Admission of vcflow's flow features (docs/flow-features.md): `retryPolicy`,
`activeDeadlineSeconds`, `dependsOn.outcome` and the probes vcflow evaluates. One line per
problem, naming the field; durations that are not Kubernetes durations (`1d`, `5min`, in
Volcano's own design doc) say what to write instead. Warnings where a combination is a
trap: retries the vcjob's own restarts multiply, `Never` with retries, a probe a local run
cannot reach. `jobflow.validate_jobflow` calls `validate`. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vcflow.admission import schema
from vcflow.api import clock, volumes
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import Duration, Flow, JobFlow, Probe, RetryPolicy
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import Action, DependencyOutcome, PodPhase, RetryStrategy
from vcflow.api.platform import Platform
from vcflow.api.vcjob import JobSpec
from vcflow.patch import merge

#: (`reconcile.probes.NETWORK_ANNOTATION`: the local runtime's network annotation)
NETWORK_ANNOTATION = "vcflow.io/network"
RESTARTS = frozenset(
    {Action.RESTART_JOB, Action.RESTART_TASK, Action.RESTART_POD, Action.RESTART_PARTITION}
)
DEFAULT_MAX_RETRY = 3  # the vcjob webhook's default for `maxRetry`


def validate(
    flow: JobFlow,
    templates: Mapping[str, JobTemplate],
    *,
    platform: Platform = Platform.LOCAL,
) -> list[FieldError]:
    """Every problem of the flow's retry policies, deadlines, outcomes and probes
    (on `Platform.LOCAL`: and what a local run's probes cannot reach)."""
    found: list[FieldError] = []
    spec = flow.spec
    if spec is not None:
        found += _retry_policy(spec.retry_policy, "spec.retryPolicy")
        found += _deadline(spec.active_deadline_seconds, "spec.activeDeadlineSeconds")
    for i, entry in enumerate(flow.flows):
        base = f"spec.flows[{i}]"
        found += _retry_policy(entry.retry_policy, f"{base}.retryPolicy")
        found += _deadline(entry.active_deadline_seconds, f"{base}.activeDeadlineSeconds")
        found += _dependency(entry, f"{base}.dependsOn")
        found += _restarts_multiply(flow, entry, base, _template_of(entry, templates))
        found += _probe_reach(flow, entry, f"{base}.dependsOn.probe", templates, platform)
    return found


# -- retry policies and deadlines -------------------------------------------------------------


def _retry_policy(policy: RetryPolicy | None, path: str) -> list[FieldError]:
    if policy is None:
        return []
    found: list[FieldError] = []
    if policy.max_retries is not None and policy.max_retries < 0:
        found.append(_at_least(policy.max_retries, f"{path}.maxRetries", 0))
    if policy.policy == RetryStrategy.NEVER and (policy.max_retries or 0) > 0:
        found.append(
            FieldError(
                f"maxRetries {policy.max_retries} is ignored: policy Never retries nothing",
                f"{path}.maxRetries",
                warning=True,
            )
        )
    backoff = policy.backoff
    if backoff is None:
        return found
    base = duration_errors(backoff.base_delay, f"{path}.backoff.baseDelay")
    cap = duration_errors(backoff.max_delay, f"{path}.backoff.maxDelay")
    found += base + cap
    jitter = backoff.jitter
    if jitter is not None and not 0 <= jitter <= 1:
        where = f"{path}.backoff.jitter"
        found.append(FieldError(f"Invalid value: {jitter}: must be between 0 and 1", where))
    if not base and not cap and backoff.base_delay is not None and backoff.max_delay is not None:
        low, high = _seconds(backoff.base_delay), _seconds(backoff.max_delay)
        if low is not None and high is not None and low > high:
            found.append(
                FieldError(
                    f"baseDelay {backoff.base_delay} is longer than maxDelay "
                    f"{backoff.max_delay}: every delay is {backoff.max_delay}",
                    f"{path}.backoff.baseDelay",
                    warning=True,
                )
            )
    return found


def _deadline(seconds: int | None, path: str) -> list[FieldError]:
    if seconds is None or seconds > 0:
        return []
    return [FieldError(f"Invalid value: {seconds}: must be greater than 0", path)]


def _at_least(value: int, path: str, low: int) -> FieldError:
    return FieldError(f"Invalid value: {value}: must be greater than or equal to {low}", path)


def _seconds(value: Duration) -> float | None:
    return clock.parse_go_duration(value) if isinstance(value, str) else None


def duration_errors(value: Duration | None, path: str) -> list[FieldError]:
    """A Kubernetes duration (Go's `time.ParseDuration`), not negative."""
    if value is None:
        return []
    if not isinstance(value, str):
        return [
            FieldError(
                f"Invalid value: {value}: must be a duration string",
                path,
                hint=f'did you mean "{compact(float(value))}"?',
            )
        ]
    text = value.strip()
    if text.startswith("-") and clock.parse_go_duration(text[1:]) is not None:
        return [FieldError(f'Invalid value: "{value}": must not be negative', path)]
    if clock.parse_go_duration(text) is not None and text == value:
        return []
    better = suggest(value)
    return [
        FieldError(
            f'Invalid value: "{value}": not a Kubernetes duration '
            "(numbers with units h, m, s, ms: 30s, 5m, 1h30m)",
            path,
            hint=f'did you mean "{better}"?' if better else "",
        )
    ]


_UNIT_SECONDS = {
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 604800.0),
    **dict.fromkeys(("d", "day", "days"), 86400.0),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600.0),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60.0),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds", ""), 1.0),
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), 0.001),
}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


def suggest(text: str) -> str:
    """The Kubernetes spelling of a duration written another way (`1d` → `24h`, `5min` →
    `5m`, `1 hour 30 minutes` → `1h30m`, `30` → `30s`); "" when it cannot be read."""
    total, at, parts = 0.0, 0, 0
    while at < len(text):
        match = _PART.match(text, at)
        if match is None or match.end() == at:
            return ""
        unit = match.group(2).lower()
        if unit not in _UNIT_SECONDS or (unit == "" and parts):
            return ""
        total += float(match.group(1)) * _UNIT_SECONDS[unit]
        at, parts = match.end(), parts + 1
    return compact(total) if parts else ""


def compact(seconds: float) -> str:
    """A duration as short as Go reads it: `24h`, `1h30m`, `90s` → `1m30s`, `300ms`."""
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        return f"{round(seconds * 1000):d}ms"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    fraction = seconds - whole
    text = f"{hours}h" if hours else ""
    text += f"{minutes}m" if minutes else ""
    if secs or fraction:
        text += f"{secs + fraction:g}s"
    return text


# -- dependencies: outcome, probes ----------------------------------------------------------


def _dependency(entry: Flow, path: str) -> list[FieldError]:
    dep = entry.depends_on
    if dep is None:
        return []
    found: list[FieldError] = []
    if dep.outcome is not None and not dep.targets:
        found.append(
            FieldError(
                "outcome requires targets: it says what of the target jobs the entry waits "
                "for, so list them in dependsOn.targets",
                f"{path}.outcome",
            )
        )
    probe = entry.probe
    if probe is None:
        return found
    if entry.outcome != DependencyOutcome.COMPLETED:
        found.append(
            FieldError(
                f"a probe applies to outcome Completed only: it says when a target is ready, "
                f"outcome {entry.outcome} waits for its end",
                f"{path}.probe",
            )
        )
    found += _probe_items(probe, f"{path}.probe")
    return found


def _probe_items(probe: Probe, path: str) -> list[FieldError]:
    found: list[FieldError] = []
    for j, http in enumerate(probe.http_get_list or []):
        where = f"{path}.httpGetList[{j}].port"
        if http.port is None:
            found.append(FieldError("Required value: an httpGet probe needs a port", where))
        elif http.port == 0:
            found.append(_port_zero(where))
    for j, tcp in enumerate(probe.tcp_socket_list or []):
        if tcp.port == 0:
            found.append(_port_zero(f"{path}.tcpSocketList[{j}].port"))
    phases = [str(p) for p in PodPhase]
    for j, item in enumerate(probe.task_status_list or []):
        found += schema.enum(item.phase, phases, f"{path}.taskStatusList[{j}].phase")
    return found


def _port_zero(path: str) -> FieldError:
    return FieldError("Invalid value: 0: must be a port between 1 and 65535", path)


# -- traps: what the templates tell ----------------------------------------------------------


def _template_of(entry: Flow, templates: Mapping[str, JobTemplate]) -> JobTemplate | None:
    """The entry's JobTemplate, if given; None for a `switch` entry (its case picks one when
    it runs: which is not known here)."""
    return templates.get(entry.template_name) if entry.switch is None else None


def _spec_of(entry: Flow, template: JobTemplate | None) -> JobSpec | None:
    if template is None or template.spec is None:
        return None
    if entry.patch is not None and entry.patch.job_spec is not None:
        return merge.patched_spec(template.spec, entry.patch.job_spec)
    return template.spec


def _restarts_multiply(
    flow: JobFlow, entry: Flow, base: str, template: JobTemplate | None
) -> list[FieldError]:
    """Retries of the flow and restarts of the vcjob multiply: say how."""
    own = entry.retry_policy
    policy = own if own is not None else (flow.spec.retry_policy if flow.spec else None)
    retries = (policy.max_retries or 0) if policy is not None else 0
    if not retries or (policy is not None and policy.policy == RetryStrategy.NEVER):
        return []
    spec = _spec_of(entry, template)
    if spec is None:
        return []
    lists = [spec.policies or [], *((t.policies or []) for t in spec.tasks or [])]
    action = next((p.action for ps in lists for p in ps if p.action in RESTARTS), None)
    if action is None:
        return []
    runs = spec.max_retry or DEFAULT_MAX_RETRY
    where = f"{base}.retryPolicy.maxRetries" if own is not None else "spec.retryPolicy.maxRetries"
    return [
        FieldError(
            f"entry {entry.name}: maxRetries {retries} and the vcjob's own {action} policy "
            f"(maxRetry {runs}) multiply: each of the {retries + 1} attempts may run its job "
            f"{runs} times, up to {(retries + 1) * runs} runs in all",
            where,
            warning=True,
        )
    ]


def _probe_reach(
    flow: JobFlow,
    entry: Flow,
    path: str,
    templates: Mapping[str, JobTemplate],
    platform: Platform,
) -> list[FieldError]:
    """A probe of a task the target lacks, or (locally) of a port a local run cannot
    reach: on a cluster every pod has its own IP."""
    probe = entry.probe
    if probe is None:
        return []
    entries = {e.name: e for e in flow.flows}
    found: list[FieldError] = []
    connects: list[str | None] = [t.task_name for t in probe.tcp_socket_list or []]
    connects += [h.task_name for h in probe.http_get_list or []]
    for target in dict.fromkeys(entry.targets):
        target_entry = entries.get(target)
        if target_entry is None:
            continue
        spec = _spec_of(target_entry, _template_of(target_entry, templates))
        if spec is None:
            continue
        tasks = {t.name or f"default{i}": t for i, t in enumerate(spec.tasks or [])}
        items = [*connects, *(t.task_name for t in probe.task_status_list or [])]
        for name in dict.fromkeys(n for n in items if n):
            if name not in tasks:
                found.append(
                    FieldError(
                        f"target {target} has no task {name!r} (tasks: {', '.join(tasks)}): "
                        "the probe never succeeds; the entry waits for the target to complete",
                        path,
                        warning=True,
                    )
                )
        plugins = spec.plugins or {}
        svc = any(p in plugins for p in volumes.SVC_PLUGINS)
        if not platform.reaches_pod_ips and connects and svc:
            probed = set(connects)
            own = [
                n
                for n, t in tasks.items()
                if (None in probed or n in probed)
                and not (
                    t.template
                    and t.template.metadata
                    and (t.template.metadata.annotations or {}).get(NETWORK_ANNOTATION) == "host"
                )
            ]
            if own:
                found.append(
                    FieldError(
                        f"target {target} has the svc plugin, so locally its pods have a "
                        "network of their own that a probe cannot reach: the entry waits for "
                        f"{target} to complete; give task {own[0]}'s pod template the "
                        f"annotation {NETWORK_ANNOTATION}: host to probe it",
                        path,
                        warning=True,
                    )
                )
    return found
