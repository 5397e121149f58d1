"""The text `vcflow describe` prints, built as indented sections (kubectl describe's look).

`Text` collects lines: `fields` aligns `Key:  value` pairs of one block, `table` indents an
aligned table, `heading` opens a nested section. The per-kind `Spec:`/`Status:` sections
are here; the command and the shared header and events are in `describe.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from vcflow.api import clock, compactstatus, printable
from vcflow.api import names as names_api
from vcflow.api.jobflow import (
    Argument,
    Flow,
    JobFlow,
    JobFlowStatus,
    JobStatus,
    Probe,
    RetryPolicy,
    SchedulingPolicy,
)
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobSpec, VCJob
from vcflow.cli import etatext, output
from vcflow.local.result import FAILED_PHASES
from vcflow.reconcile import flowwaits, outputs, retryrequest

NONE = "<none>"
INDENT = "  "


class Text:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def fields(self, pairs: Sequence[tuple[str, str | Sequence[str]]], level: int = 0) -> None:
        """`Key:  value` lines, values aligned; a list value continues on the next lines."""
        width = max((len(key) for key, _ in pairs), default=0) + 3
        pad = INDENT * level
        for key, value in pairs:
            values = [value] if isinstance(value, str) else list(value) or [NONE]
            self.lines.append((pad + f"{key}:".ljust(width) + values[0]).rstrip())
            self.lines += [pad + " " * width + more for more in values[1:]]

    def heading(self, key: str, level: int = 0) -> None:
        self.lines.append(INDENT * level + f"{key}:")

    def table(
        self, headers: Sequence[str], rows: Sequence[Sequence[str]], level: int, *, gap: int = 3
    ) -> None:
        self.lines += [INDENT * level + line for line in output.aligned(headers, rows, gap=gap)]

    def render(self) -> str:
        """The text, each line with its control characters escaped (a label, an annotation
        or a message may hold an ESC or OSC sequence: it is shown, not obeyed)."""
        return "\n".join(printable.escaped(line) for line in self.lines) + "\n"


def unknown(job: str) -> str:
    """Why vcjob `job` failed, when no store is at hand: not known."""
    return ""


def pairs_of(mapping: Mapping[str, str]) -> list[str]:
    """`key=value` lines of labels or annotations, sorted; `<none>` when empty."""
    return [f"{k}={v}" for k, v in sorted(mapping.items())] or [NONE]


def _or_none(value: object) -> str:
    return NONE if value is None or value == "" else str(value)


def flow_sections(
    flow: JobFlow,
    text: Text,
    now: datetime | None = None,
    jobs: Sequence[VCJob] = (),
    why: Callable[[str], str] = unknown,
) -> None:
    """`jobs`: the flow's vcjobs, for the reason a scheduler gives a waiting one; `why`:
    why the failed vcjob of a name failed (the container that failed it)."""
    text.heading("Spec")
    spec = flow.spec
    pairs: list[tuple[str, str | Sequence[str]]] = [("Job Retain Policy", str(flow.retain_policy))]
    if spec is not None and spec.retry_policy is not None:
        pairs.append(("Retry Policy", retry_text(spec.retry_policy)))
    if spec is not None and spec.active_deadline_seconds:
        pairs.append(("Active Deadline Seconds", str(spec.active_deadline_seconds)))
    if spec is not None and spec.queue is not None:
        pairs.append(("Queue", spec.queue))
    if spec is not None and spec.priority_class_name is not None:
        pairs.append(("Priority Class Name", spec.priority_class_name))
    if spec is not None and spec.scheduling_policy is not None:
        pairs.append(("Scheduling Policy", _policy_text(spec.scheduling_policy)))
    if flow.exit_handlers:
        pairs.append(("On Exit", ", ".join(flow.exit_handlers)))
    text.fields(pairs, 1)
    if spec is not None and spec.arguments is not None:
        _arguments(spec.arguments, text)
    text.heading("Flows", 1)
    entries = flow.flows
    # (vcflow's columns only when an entry uses them: a Volcano flow looks as it did)
    extra = [
        (header, cell)
        for header, cell in (
            ("OUTCOME", _outcome),
            ("RETRIES", _retries),
            ("DEADLINE", _deadline),
            ("PROBE", _probe),
            ("WHEN", _when),
        )
        if any(cell(e) for e in entries)
    ]
    # (the template column only when an entry names one: else each entry's is its name)
    named = any(entry.template is not None or entry.switch for entry in entries)
    rows = [
        [
            entry.name,
            *([_template(entry)] if named else []),
            ", ".join(entry.targets) or NONE,
            str(entry.strategy) if entry.targets else "",
            *(cell(entry) for _, cell in extra),
            "yes" if entry.patch is not None else "no",
        ]
        for entry in entries
    ]
    headers = [
        "NAME",
        *(["TEMPLATE"] if named else []),
        "DEPENDS ON",
        "STRATEGY",
        *(h for h, _ in extra),
        "PATCH",
    ]
    text.table(headers, rows, 2)
    _flow_status(flow, text, now, jobs, why)


def _arguments(arguments: Sequence[Argument], text: Text) -> None:
    """The flow's arguments with the values it runs with (a given one replaced the
    declared one in the stored flow); the description column only when one has one."""
    text.heading("Arguments", 1)
    if not arguments:
        text.lines.append(INDENT * 2 + NONE)
        return
    described = any(a.description for a in arguments)
    rows = [
        [a.name, _or_none(a.value), *([a.description or ""] if described else [])]
        for a in arguments
    ]
    text.table(["NAME", "VALUE", *(["DESCRIPTION"] if described else [])], rows, 2)


def _policy_text(policy: SchedulingPolicy) -> str:
    """`ageFrom=Flow, jobOrder=CriticalPath, handover=60s, admission=Hold` (those given)."""
    hold = policy.handover.hold_seconds if policy.handover is not None else None
    given = [
        ("ageFrom", policy.age_from),
        ("jobOrder", policy.job_order),
        ("handover", None if hold is None else f"{hold}s"),
        ("admission", policy.admission),
    ]
    return ", ".join(f"{k}={v}" for k, v in given if v is not None) or NONE


def retry_text(policy: RetryPolicy) -> str:
    """`2 retries, OnFailure, Exponential 30s..5m, jitter 0.1` (the defaults filled in)."""
    backoff = policy.backoff
    kind = str(backoff.type) if backoff and backoff.type else "Exponential"
    base = (backoff.base_delay if backoff else None) or "30s"
    cap = (backoff.max_delay if backoff else None) or "5m"
    delay = f"{kind} {base}" if kind == "Constant" else f"{kind} {base}..{cap}"
    jitter = f", jitter {backoff.jitter:g}" if backoff and backoff.jitter else ""
    count = policy.max_retries or 0
    retries = f"{count} {'retry' if count == 1 else 'retries'}"
    return f"{retries}, {policy.policy or 'OnFailure'}, {delay}{jitter}"


def _template(entry: Flow) -> str:
    """The entry's template; a `switch`'s cases as `switch: serve-gpu | serve-cpu`."""
    if entry.switch:
        return "switch: " + " | ".join(case.template for case in entry.switch)
    return entry.template_name


def _when(entry: Flow) -> str:
    """The entry's `when`, then each `switch` case's (`serve-gpu if args.target == 'gpu'`)."""
    parts = [entry.when] if entry.when is not None else []
    for case in entry.switch or []:
        parts.append(f"{case.template} if {case.when}" if case.when else f"{case.template} else")
    return "; ".join(parts)


def _outcome(entry: Flow) -> str:
    dep = entry.depends_on
    return str(dep.outcome) if dep is not None and dep.outcome is not None else ""


def _retries(entry: Flow) -> str:
    return retry_text(entry.retry_policy) if entry.retry_policy is not None else ""


def _deadline(entry: Flow) -> str:
    return f"{entry.active_deadline_seconds}s" if entry.active_deadline_seconds else ""


def _probe(entry: Flow) -> str:
    return probe_text(entry.probe) if entry.probe is not None else ""


def probe_text(probe: Probe) -> str:
    """`tcpSocket server:6379; httpGet :8080/ready; taskStatus main Running`."""
    parts = [f"tcpSocket {t.task_name or ''}:{t.port}" for t in probe.tcp_socket_list or []]
    parts += [
        f"httpGet {h.task_name or ''}:{h.port}{h.path or '/'}" for h in probe.http_get_list or []
    ]
    parts += [
        f"taskStatus {t.task_name or '*'} {t.phase or 'Running'}"
        for t in probe.task_status_list or []
    ]
    return "; ".join(parts)


def _flow_status(
    flow: JobFlow,
    text: Text,
    now: datetime | None,
    jobs: Sequence[VCJob],
    why: Callable[[str], str],
) -> None:
    text.heading("Status")
    status = flow.status
    pairs: list[tuple[str, str | Sequence[str]]] = [("Phase", _or_none(flow.phase))]
    state = status.state if status else None
    if state is not None and state.reason:
        pairs += [("Reason", state.reason), ("Message", _or_none(state.message))]
    due = retryrequest.flow_deadline(flow, status.last_retry if status else None, None)
    if due is not None and flow.phase not in ("Succeed", "Failed"):
        left = f" (in {_in((due - now).total_seconds())})" if now is not None else ""
        pairs.append(("Deadline", clock.rfc3339(due) + left))
    if now is not None and flow.flows:
        pairs += etatext.fields(flow, now)
    if status is not None and status.compact_job_status is not None:
        status, stored = _expanded(status)
        pairs.append(("Stored As", stored))
    text.fields(pairs, 1)
    if status is None:
        return
    conditions = status.conditions or {}
    if conditions:
        text.heading("Jobs", 1)
        fold = _Fold(flow, {job: c.phase or "" for job, c in conditions.items()})
        waits = flowwaits.scheduler_reasons(flow, jobs)  # (a created job's own reason)
        ranked = flowwaits.ranks(flow)  # (CriticalPath: a RANK column)
        rows = []
        for job in fold.order(conditions):
            if isinstance(job, int):
                rows.append([fold.pattern(job), "Completed", "", fold.note(job)])
            else:
                cond = conditions[job]
                reason, message = flowwaits.waiting(job, cond.to_dict(), waits)
                failure = why(job) if cond.phase in FAILED_PHASES else ""
                if failure:
                    message = f"{message}; {failure}" if message else failure
                rows.append([job, _or_none(cond.phase), reason, message])
            if ranked:
                rows[-1].insert(2, flowwaits.rank_of(rows[-1][0], ranked))
        headers = ["JOB", "PHASE", *(["RANK"] if ranked else []), "REASON", "MESSAGE"]
        text.table(headers, rows, 2)
    lists = [
        ("Pending Jobs", status.pending_jobs),
        ("Running Jobs", status.running_jobs),
        ("Completed Jobs", status.completed_jobs),
        ("Failed Jobs", status.failed_jobs),
        ("Terminated Jobs", status.terminated_jobs),
        ("Unknown Jobs", status.un_know_jobs),
    ]
    text.fields([(key, _listed(jobs)) for key, jobs in lists if jobs], 1)
    items = status.job_status_list or []
    if items:
        text.heading("Job Status List", 1)
        with_attempts = any(i.attempt or i.next_attempt_time for i in items)
        by_name = {item.name: item for item in items}
        fold = _Fold(flow, {item.name: item.state or "" for item in items})
        rows = []
        for name in fold.order(by_name):
            if isinstance(name, int):
                rows.append([fold.pattern(name), "Completed", "", "", fold.note(name)])
                continue
            item = by_name[name]
            rows.append(
                [
                    item.name,
                    _or_none(item.state),
                    _or_none(item.start_timestamp),
                    _or_none(item.end_timestamp),
                    str(item.restart_count or 0),
                    *(
                        [str(item.attempt or 1), item.next_attempt_time or ""]
                        if with_attempts
                        else []
                    ),
                ]
            )
        headers = ["NAME", "STATE", "STARTED", "ENDED", "RESTARTS"]
        text.table([*headers, *(["ATTEMPT", "NEXT ATTEMPT"] if with_attempts else [])], rows, 2)
        _language_items([by_name[n] for n in fold.order(by_name) if isinstance(n, str)], text)


def _language_items(items: Sequence[JobStatus], text: Text) -> None:
    """The template a `switch` picked and the outputs each entry handed on
    (docs/flow-features.md sections 12, 13), when any has them."""
    picked = [[i.name, i.template, str(i.switch_case)] for i in items if i.template is not None]
    if picked:
        text.heading("Switch", 1)
        text.table(["JOB", "TEMPLATE", "CASE"], picked, 2)
    handed = [[i.name, outputs.encode(i.outputs)] for i in items if i.outputs]
    if handed:
        text.heading("Outputs", 1)
        text.table(["JOB", "OUTPUTS"], handed, 2)


def _in(seconds: float) -> str:
    if seconds <= 0:
        return "passed"
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60}s" if whole >= 60 else f"{whole}s"


#: a `for` entry with more items than this lists only those that did not complete
ITEMS_LISTED = 16


def _ranks(flow: JobFlow, conditions: Mapping[str, Any]) -> dict[str, tuple[int, int, str]]:
    """Each job's place: its entry's, a `for` entry's items after it by index (-1: not an
    item); a job of no entry last, by name."""
    order = {e.name: n for n, e in enumerate(flow.flows)}
    groups = {f"{flow.name}-{e.name}-": n for n, e in enumerate(flow.flows) if e.for_each}
    ranks: dict[str, tuple[int, int, str]] = {}
    for job in conditions:
        entry = job.removeprefix(f"{flow.name}-")
        if entry in order:
            ranks[job] = (order[entry], -1, job)
            continue
        ranks[job] = (len(order), -1, job)
        for prefix, n in groups.items():
            rest = job[len(prefix) :] if job.startswith(prefix) else ""
            if rest.isdigit():
                ranks[job] = (n, int(rest), job)
    return ranks


#: the names a status list of `describe` shows, at most
NAMES_LISTED = 50


def _listed(jobs: Sequence[str]) -> str:
    shown = ", ".join(jobs[:NAMES_LISTED])
    more = len(jobs) - NAMES_LISTED
    return f"{shown} and {more:,} more" if more > 0 else shown


class _Fold:
    """Which jobs `describe` lists one by one, in flow order: a `for` entry with more than
    ITEMS_LISTED items lists the items that did not complete, and one line for the rest."""

    def __init__(self, flow: JobFlow, phases: Mapping[str, str]) -> None:
        self.flow = flow
        self.ranks = _ranks(flow, phases)
        items: dict[int, int] = {}
        for group, item, _ in self.ranks.values():
            if item >= 0:
                items[group] = items.get(group, 0) + 1
        crowded = {group for group, n in items.items() if n > ITEMS_LISTED}
        self.hidden: dict[int, int] = {}
        self.skip: set[str] = set()
        for job, (group, item, _) in self.ranks.items():
            if group in crowded and item >= 0 and phases[job] == "Completed":
                self.skip.add(job)
                self.hidden[group] = self.hidden.get(group, 0) + 1

    def order(self, jobs: Iterable[str]) -> list[str | int]:
        """The jobs to list, and in its place the group (its place) of each line that
        stands for the completed items not listed."""
        keyed: list[tuple[tuple[int, int, str], str | int]] = [
            (self.ranks[j], j) for j in jobs if j not in self.skip
        ]
        keyed += [((group, 1 << 62, ""), group) for group in self.hidden]
        return [what for _, what in sorted(keyed, key=lambda pair: pair[0])]

    def pattern(self, group: int) -> str:
        return f"{self.flow.name}-{self.flow.flows[group].name}-*"

    def note(self, group: int) -> str:
        return (
            f"{self.hidden[group]:,} completed items not listed (vcflow get vcjobs -l "
            f"{names_api.LABEL_CREATED_BY_FLOW}={self.flow.namespace}.{self.flow.name})"
        )


def _expanded(status: JobFlowStatus) -> tuple[JobFlowStatus, str]:
    """A compact status with every record back in Volcano's fields (`describe` shows them
    all; `get -o yaml` the stored form), and what to say of how it is stored."""
    field = status.compact_job_status
    count = field.counts.get("jobStatusList", 0) if field is not None else 0
    try:
        full = JobFlowStatus.model_validate(compactstatus.expand(status.to_dict()))
    except compactstatus.Unreadable as exc:
        return status, f"compact, unreadable ({exc}): only the entries shown as stored"
    return full, f"compact (status.compactJobStatus: {count:,} job records, all shown here)"


def job_spec_section(spec: JobSpec | None, text: Text) -> None:
    text.heading("Spec")
    if spec is None:
        return
    text.fields(
        [
            ("Min Available", _or_none(spec.min_available)),
            ("Queue", _or_none(spec.queue)),
            ("Scheduler Name", _or_none(spec.scheduler_name)),
            ("Max Retry", _or_none(spec.max_retry)),
        ],
        1,
    )
    if spec.tasks:
        text.heading("Tasks", 1)
        rows = []
        for task in spec.tasks:
            pod = task.template.spec if task.template else None
            images = [c.image or "" for c in (pod.containers or [])] if pod else []
            rows.append(
                [
                    _or_none(task.name),
                    _or_none(task.replicas),
                    _or_none(task.min_available),
                    ", ".join(images) or NONE,
                ]
            )
        text.table(["NAME", "REPLICAS", "MIN AVAILABLE", "IMAGES"], rows, 2)


def vcjob_sections(job: VCJob, text: Text, why: Callable[[str], str] = unknown) -> None:
    """`why`: why the failed vcjob of a name failed (the container that failed it)."""
    job_spec_section(job.spec, text)
    text.heading("Status")
    status = job.status
    if status is None:
        text.fields([("Phase", NONE)], 1)
        return
    state = status.state
    failure = why(job.name) if job.phase in FAILED_PHASES else ""
    text.fields(
        [
            ("Phase", _or_none(job.phase)),
            ("Reason", _or_none(state.reason if state else None)),
            ("Message", _or_none(state.message if state else None)),
            *([("Failure", failure)] if failure else []),
            ("Min Available", _or_none(status.min_available)),
            ("Pending", str(status.pending or 0)),
            ("Running", str(status.running or 0)),
            ("Succeeded", str(status.succeeded or 0)),
            ("Failed", str(status.failed or 0)),
            ("Terminating", str(status.terminating or 0)),
            ("Unknown", str(status.unknown or 0)),
            ("Version", str(status.version or 0)),
            ("Retry Count", str(status.retry_count or 0)),
            ("Running Duration", _or_none(status.running_duration)),
            ("Last Transition", _or_none(state.last_transition_time if state else None)),
        ],
        1,
    )
    counts = status.task_status_count or {}
    if counts:
        text.heading("Task Status Count", 1)
        rows = [
            [task, ", ".join(f"{p}={n}" for p, n in sorted((c.phase or {}).items())) or NONE]
            for task, c in sorted(counts.items())
        ]
        text.table(["TASK", "PODS"], rows, 2)
    if status.conditions:
        text.heading("Conditions", 1)
        rows = [[c.status or "", c.last_transition_time or ""] for c in status.conditions]
        said = [c.model_extra or {} for c in status.conditions]
        if not any(x.get("reason") for x in said):
            text.table(["STATUS", "LAST TRANSITION"], rows, 2)
            return
        # why the scheduler keeps it waiting (`Unschedulable`, docs/scheduling.md)
        for row, extra in zip(rows, said, strict=True):
            row += [str(extra.get("reason") or ""), str(extra.get("message") or "")]
        text.table(["STATUS", "LAST TRANSITION", "REASON", "MESSAGE"], rows, 2)


def template_sections(template: JobTemplate, text: Text) -> None:
    job_spec_section(template.spec, text)
    text.heading("Status")
    jobs = template.status.job_depends_on_list if template.status else None
    text.fields([("Job Depends On List", ", ".join(jobs or []) or NONE)], 1)
