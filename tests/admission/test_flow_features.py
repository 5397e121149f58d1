"""Admission of the flow features (docs/flow-features.md): one clear line per malformed use
of `retryPolicy`, `activeDeadlineSeconds`, `dependsOn.outcome` and probes, a duration
spelling to use instead of Volcano's design doc's `1d`/`5min`, and warnings where a
combination is a trap (retries the vcjob's own restarts multiply, `Never` with retries,
`baseDelay` above `maxDelay`, a probe a local run cannot reach)."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.admission import flowfeatures, review
from vcflow.api import loading
from vcflow.api.errors import Origin
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.platform import Platform


def flow(spec: dict[str, Any]) -> dict[str, Any]:
    spec = {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}], **spec}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "f", "namespace": "default"},
        "spec": spec,
    }


def entry_b(**fields: Any) -> dict[str, Any]:
    """The flow with entry b given these fields (b depends on a unless they say otherwise)."""
    b = {"name": "b", "dependsOn": {"targets": ["a"]}, **fields}
    return flow({"flows": [{"name": "a"}, b]})


def template(name: str, **spec: Any) -> JobTemplate:
    pod = {"restartPolicy": "Never", "containers": [{"name": "m", "command": ["true"]}]}
    tasks = spec.pop("tasks", [{"name": "main", "replicas": 1, "template": {"spec": pod}}])
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": tasks, **spec}}
    )


def problems(
    data: dict[str, Any], *templates: JobTemplate, platform: Platform = Platform.LOCAL
) -> tuple[list[str], list[str]]:
    """(errors, warnings) as `path: message (hint)` lines, the model's errors included."""
    doc = loading.Document(data, Origin("flow.yaml", 0))
    obj, schema = loading.to_model(doc)
    if obj is None:
        return [f"{e.path}: {e.message}" for e in schema], []
    assert isinstance(obj, JobFlow)
    context = review.Context(
        templates={t.name: t for t in templates}, unknown_fields=False, platform=platform
    )
    found = review.review(obj, context=context)
    line = lambda e: f"{e.path}: {e.message}" + (f" ({e.hint})" if e.hint else "")  # noqa: E731
    return [line(e) for e in found if not e.warning], [line(e) for e in found if e.warning]


BAD = [
    (
        "negative-max-retries",
        flow({"retryPolicy": {"maxRetries": -1}}),
        "spec.retryPolicy.maxRetries: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "non-integer-max-retries",
        entry_b(retryPolicy={"maxRetries": 1.5}),
        "spec.flows[1].retryPolicy.maxRetries: Invalid value: 1.5: must be of type integer",
    ),
    (
        "one-day",
        flow({"retryPolicy": {"backoff": {"baseDelay": "1d"}}}),
        'spec.retryPolicy.backoff.baseDelay: Invalid value: "1d": not a Kubernetes duration '
        '(numbers with units h, m, s, ms: 30s, 5m, 1h30m) (did you mean "24h"?)',
    ),
    (
        "five-min",
        entry_b(retryPolicy={"backoff": {"maxDelay": "5min"}}),
        'spec.flows[1].retryPolicy.backoff.maxDelay: Invalid value: "5min": not a Kubernetes '
        'duration (numbers with units h, m, s, ms: 30s, 5m, 1h30m) (did you mean "5m"?)',
    ),
    (
        "a-number",
        flow({"retryPolicy": {"backoff": {"baseDelay": 90}}}),
        "spec.retryPolicy.backoff.baseDelay: Invalid value: 90: must be a duration string "
        '(did you mean "1m30s"?)',
    ),
    (
        "negative-delay",
        flow({"retryPolicy": {"backoff": {"baseDelay": "-5s"}}}),
        'spec.retryPolicy.backoff.baseDelay: Invalid value: "-5s": must not be negative',
    ),
    (
        "unknown-policy",
        flow({"retryPolicy": {"policy": "Sometimes"}}),
        'spec.retryPolicy.policy: Unsupported value: "Sometimes": supported values: '
        '"OnFailure", "Always", "Never"',
    ),
    (
        "unknown-backoff-type",
        flow({"retryPolicy": {"backoff": {"type": "Linear"}}}),
        'spec.retryPolicy.backoff.type: Unsupported value: "Linear": supported values: '
        '"Exponential", "Constant"',
    ),
    (
        "jitter-above-one",
        flow({"retryPolicy": {"backoff": {"jitter": 1.5}}}),
        "spec.retryPolicy.backoff.jitter: Invalid value: 1.5: must be between 0 and 1",
    ),
    (
        "jitter-negative",
        flow({"retryPolicy": {"backoff": {"jitter": -0.1}}}),
        "spec.retryPolicy.backoff.jitter: Invalid value: -0.1: must be between 0 and 1",
    ),
    (
        "zero-deadline",
        flow({"activeDeadlineSeconds": 0}),
        "spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0",
    ),
    (
        "negative-entry-deadline",
        entry_b(activeDeadlineSeconds=-5),
        "spec.flows[1].activeDeadlineSeconds: Invalid value: -5: must be greater than 0",
    ),
    (
        "unknown-outcome",
        entry_b(dependsOn={"targets": ["a"], "outcome": "Succeeded"}),
        'spec.flows[1].dependsOn.outcome: Unsupported value: "Succeeded": supported values: '
        '"Completed", "Failed", "Finished"',
    ),
    (
        "outcome-without-targets",
        entry_b(dependsOn={"outcome": "Failed"}),
        "spec.flows[1].dependsOn.outcome: outcome requires targets: it says what of the "
        "target jobs the entry waits for, so list them in dependsOn.targets",
    ),
    (
        "probe-without-targets",
        entry_b(dependsOn={"probe": {"tcpSocketList": [{"port": 80}]}}),
        "spec.flows[1].dependsOn.probe: probe requires targets: a probe checks the target "
        "jobs, so list them in dependsOn.targets",
    ),
    (
        "probe-with-outcome-failed",
        entry_b(
            dependsOn={
                "targets": ["a"],
                "outcome": "Failed",
                "probe": {"tcpSocketList": [{"port": 80}]},
            }
        ),
        "spec.flows[1].dependsOn.probe: a probe applies to outcome Completed only: it says "
        "when a target is ready, outcome Failed waits for its end",
    ),
    (
        "probe-port-zero",
        entry_b(dependsOn={"targets": ["a"], "probe": {"tcpSocketList": [{"port": 0}]}}),
        "spec.flows[1].dependsOn.probe.tcpSocketList[0].port: Invalid value: 0: must be a port "
        "between 1 and 65535",
    ),
    (
        "probe-port-too-high",
        entry_b(dependsOn={"targets": ["a"], "probe": {"httpGetList": [{"port": 70000}]}}),
        "spec.flows[1].dependsOn.probe.httpGetList[0].port: Invalid value: 70000: "
        "spec.flows[1].dependsOn.probe.httpGetList[0].port in body should be less than or "
        "equal to 65535",
    ),
    (
        "http-probe-without-port",
        entry_b(dependsOn={"targets": ["a"], "probe": {"httpGetList": [{"path": "/ok"}]}}),
        "spec.flows[1].dependsOn.probe.httpGetList[0].port: Required value: an httpGet probe "
        "needs a port",
    ),
    (
        "task-status-phase",
        entry_b(dependsOn={"targets": ["a"], "probe": {"taskStatusList": [{"phase": "Done"}]}}),
        'spec.flows[1].dependsOn.probe.taskStatusList[0].phase: Unsupported value: "Done": '
        'supported values: "Pending", "Running", "Succeeded", "Failed", "Unknown"',
    ),
]


@pytest.mark.parametrize(("data", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_malformed_use_is_one_clear_line(data: dict[str, Any], message: str) -> None:
    errors, _ = problems(data)
    assert errors == [message]


def test_well_formed_features_are_admitted_without_a_word() -> None:
    data = flow(
        {
            "activeDeadlineSeconds": 3600,
            "retryPolicy": {
                "maxRetries": 2,
                "policy": "OnFailure",
                "backoff": {"type": "Exponential", "baseDelay": "1.5s", "maxDelay": "1h30m"},
            },
            "flows": [
                {"name": "a", "activeDeadlineSeconds": 60},
                {
                    "name": "b",
                    "dependsOn": {
                        "targets": ["a"],
                        "probe": {
                            "tcpSocketList": [{"taskName": "main", "port": 6379}],
                            "httpGetList": [{"port": 8080, "path": "/ready"}],
                            "taskStatusList": [{"taskName": "main", "phase": "Running"}],
                        },
                    },
                },
                {"name": "c", "dependsOn": {"targets": ["a", "b"], "outcome": "Failed"}},
                {"name": "d", "dependsOn": {"targets": ["c"], "outcome": "Finished"}},
            ],
        }
    )
    assert problems(data, *(template(n) for n in "abcd")) == ([], [])


@pytest.mark.parametrize(
    ("text", "better"),
    [
        ("1d", "24h"),
        ("5d", "120h"),
        ("5min", "5m"),
        ("60min", "1h"),
        ("360min", "6h"),
        ("1 hour 30 minutes", "1h30m"),
        ("30", "30s"),
        ("2 secs", "2s"),
        ("1w", "168h"),
        ("90s", "1m30s"),
        ("250msec", "250ms"),
        ("soon", ""),
        ("5m5", ""),
    ],
)
def test_a_wrong_duration_gets_the_kubernetes_spelling(text: str, better: str) -> None:
    assert flowfeatures.suggest(text) == better


def test_kubernetes_durations_are_read_as_go_reads_them() -> None:
    for good in ("30s", "5m", "1h30m", "1.5h", ".5s", "300ms", "0"):
        assert flowfeatures.duration_errors(good, "x") == [], good


def test_retries_that_the_vcjob_restarts_multiply_are_a_warning() -> None:
    restarting = template(
        "a", maxRetry=4, policies=[{"event": "PodFailed", "action": "RestartJob"}]
    )
    _, warnings = problems(flow({"retryPolicy": {"maxRetries": 2}}), restarting, template("b"))
    assert warnings == [
        "spec.retryPolicy.maxRetries: entry a: maxRetries 2 and the vcjob's own RestartJob "
        "policy (maxRetry 4) multiply: each of the 3 attempts may run its job 4 times, up to "
        "12 runs in all"
    ]
    quiet = template("a")  # no restart policy: the vcjob's maxRetry restarts nothing
    assert problems(flow({"retryPolicy": {"maxRetries": 2}}), quiet, template("b")) == ([], [])


def test_never_with_retries_and_a_base_above_the_cap_are_warnings() -> None:
    data = flow(
        {
            "retryPolicy": {
                "maxRetries": 3,
                "policy": "Never",
                "backoff": {"baseDelay": "10m", "maxDelay": "1m"},
            }
        }
    )
    errors, warnings = problems(data)
    assert errors == []
    assert warnings == [
        "spec.retryPolicy.maxRetries: maxRetries 3 is ignored: policy Never retries nothing",
        "spec.retryPolicy.backoff.baseDelay: baseDelay 10m is longer than maxDelay 1m: every "
        "delay is 1m",
    ]


def test_a_probe_of_a_svc_job_or_of_a_missing_task_is_a_warning() -> None:
    server = template("a", plugins={"svc": []})
    data = entry_b(
        dependsOn={
            "targets": ["a"],
            "probe": {"tcpSocketList": [{"taskName": "srv", "port": 6379}, {"port": 80}]},
        }
    )
    _, warnings = problems(data, server, template("b"))
    assert warnings == [
        "spec.flows[1].dependsOn.probe: target a has no task 'srv' (tasks: main): the probe "
        "never succeeds; the entry waits for the target to complete",
        "spec.flows[1].dependsOn.probe: target a has the svc plugin, so locally its pods have "
        "a network of their own that a probe cannot reach: the entry waits for a to complete; "
        "give task main's pod template the annotation vcflow.io/network: host to probe it",
    ]
    # on a cluster (the webhook: no local runtime) each pod has its own IP: nothing to say
    _, on_cluster = problems(data, server, template("b"), platform=Platform.CLUSTER)
    assert on_cluster == warnings[:1]
    pod = {"restartPolicy": "Never", "containers": [{"name": "m", "command": ["true"]}]}
    host = {"metadata": {"annotations": {"vcflow.io/network": "host"}}, "spec": pod}
    on_host = template(
        "a", plugins={"svc": []}, tasks=[{"name": "main", "replicas": 1, "template": host}]
    )
    data = entry_b(dependsOn={"targets": ["a"], "probe": {"tcpSocketList": [{"port": 6379}]}})
    assert problems(data, on_host, template("b")) == ([], [])


def test_unknown_fields_of_the_new_models_are_warned_about() -> None:
    data = flow({"retryPolicy": {"maxRetrys": 1, "backoff": {"tpye": "Constant"}}})
    doc = loading.Document(data, Origin("flow.yaml", 0))
    obj, _ = loading.to_model(doc)
    assert obj is not None
    found = [e.message for e in review.review(obj) if e.warning]
    assert 'unknown field "spec.retryPolicy.maxRetrys"' in found
    assert 'unknown field "spec.retryPolicy.backoff.tpye"' in found
