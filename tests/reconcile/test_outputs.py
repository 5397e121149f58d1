"""An entry's outputs from the pods of its Completed vcjob (docs/flow-features.md §12): which
pods and containers count, their order, the merge, and each way it fails."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vcflow.api.pod import Pod
from vcflow.api.vcjob import Container, VCJob
from vcflow.reconcile import outputs
from vcflow.reconcile.outputs import Failure, collect, inputs_value, outputs_path

UID = "job-uid-1"


def make_job(*tasks: str, name: str = "f-eval", uid: str = UID) -> VCJob:
    return VCJob.from_dict(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": "ns", "uid": uid},
            "spec": {"tasks": [{"name": t, "replicas": 1} for t in tasks or ("main",)]},
        }
    )


def ended(name: str, message: str | None = None, code: int = 0) -> dict[str, Any]:
    terminated: dict[str, Any] = {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}
    if message is not None:
        terminated["message"] = message
    return {"name": name, "state": {"terminated": terminated}}


def make_pod(
    name: str,
    *statuses: dict[str, Any],
    phase: str = "Succeeded",
    owner: str | None = UID,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    containers: list[str] | None = None,
    inits: list[dict[str, Any]] | None = None,
) -> Pod:
    names = containers if containers is not None else [s["name"] for s in statuses]
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "f-eval",
                "uid": owner,
                "controller": True,
            }
        ]
    spec: dict[str, Any] = {"containers": [{"name": n} for n in names]}
    status: dict[str, Any] = {"phase": phase, "containerStatuses": list(statuses)}
    if inits is not None:
        spec["initContainers"] = [{"name": s["name"]} for s in inits]
        status["initContainerStatuses"] = inits
    return Pod.from_dict({"metadata": meta, "spec": spec, "status": status})


def out(value: dict[str, Any]) -> str:
    return json.dumps(value)


def test_no_pods_no_outputs() -> None:
    assert collect(make_job(), []) == {}


def test_containers_that_wrote_nothing_add_nothing() -> None:
    pods = [make_pod("f-eval-main-0", ended("c"), ended("d", ""), ended("e", " \n\t"))]
    assert collect(make_job(), pods) == {}


def test_one_container() -> None:
    pods = [make_pod("f-eval-main-0", ended("c", '{"accuracy": 0.93}\n'))]
    assert collect(make_job(), pods) == {"accuracy": 0.93}


def test_merge_order_is_task_then_index_then_container() -> None:
    job = make_job("prep", "main")
    pods = [
        make_pod("f-eval-main-10", ended("c", out({"main10": 1, "who": "main"}))),
        make_pod("f-eval-main-2", ended("c", out({"main2": 1})), ended("d", out({"d": 1}))),
        make_pod("f-eval-prep-0", ended("c", out({"prep": 1}))),
    ]
    merged = collect(job, pods)
    assert isinstance(merged, dict)
    assert list(merged) == ["prep", "main2", "d", "main10", "who"]


def test_container_order_is_the_specs_not_the_statuses() -> None:
    pod = make_pod(
        "f-eval-main-0",
        ended("b", out({"b": 1})),
        ended("a", out({"a": 1})),
        containers=["a", "b"],
    )
    merged = collect(make_job(), [pod])
    assert isinstance(merged, dict) and list(merged) == ["a", "b"]


def test_index_and_task_from_labels_and_annotations() -> None:
    job = make_job("first", "second", name="j")
    pods = [
        # names that say nothing: the labels and annotations tell task and index
        make_pod(
            "x-a",
            ended("c", out({"s1": 1})),
            labels={"volcano.sh/task-spec": "second", "volcano.sh/task-index": "1"},
        ),
        make_pod(
            "x-b",
            ended("c", out({"s0": 1})),
            annotations={"volcano.sh/task-spec": "second", "volcano.sh/task-index": "0"},
        ),
        make_pod("x-c", ended("c", out({"f": 1})), labels={"volcano.sh/task-spec": "first"}),
    ]
    merged = collect(job, pods)
    assert isinstance(merged, dict) and list(merged) == ["f", "s0", "s1"]


def test_failed_pods_and_containers_do_not_count() -> None:
    pods = [
        make_pod("f-eval-main-0", ended("c", out({"a": 1})), phase="Failed"),
        make_pod("f-eval-main-1", ended("c", out({"b": 1})), phase="Running"),
        make_pod(
            "f-eval-main-2",
            ended("ok", out({"c": 1})),
            ended("bad", out({"d": 1}), code=1),
            {"name": "run", "state": {"running": {}}},
        ),
    ]
    assert collect(make_job(), pods) == {"c": 1}


def test_a_failed_containers_invalid_output_is_ignored() -> None:
    pods = [make_pod("f-eval-main-0", ended("c", "Traceback (most recent call last)", code=1))]
    assert collect(make_job(), pods) == {}


def test_init_containers_do_not_count() -> None:
    pod = make_pod(
        "f-eval-main-0", ended("c", out({"a": 1})), inits=[ended("init", out({"init": 1}))]
    )
    assert collect(make_job(), [pod]) == {"a": 1}
    bad = make_pod("f-eval-main-0", ended("c"), inits=[ended("init", "not json")])
    assert collect(make_job(), [bad]) == {}


def test_only_pods_the_job_owns() -> None:
    pods = [
        make_pod("f-eval-main-0", ended("c", out({"mine": 1}))),
        make_pod("f-eval-main-1", ended("c", out({"old": 1})), owner="an-earlier-attempt"),
        make_pod("f-eval-main-2", ended("c", out({"none": 1})), owner=None),
    ]
    assert collect(make_job(), pods) == {"mine": 1}


def test_ownership_by_label_for_a_job_without_uid() -> None:
    label = {"volcano.sh/job-name": "f-eval"}
    pods = [
        make_pod("f-eval-main-0", ended("c", out({"mine": 1})), owner=None, labels=label),
        make_pod("f-eval-main-1", ended("c", out({"other": 1})), owner=None),
        make_pod(
            "f-eval-main-2",
            ended("c", out({"other": 2})),
            owner=None,
            labels={"volcano.sh/job-name": "g"},
        ),
    ]
    assert collect(make_job(uid=""), pods) == {"mine": 1}


def test_the_same_value_twice_is_fine() -> None:
    pods = [
        make_pod("f-eval-main-0", ended("c", out({"k": {"a": 1, "b": [1, 2]}, "n": 1}))),
        make_pod("f-eval-main-1", ended("c", out({"k": {"b": [1, 2], "a": 1}, "n": 1.0}))),
    ]
    assert collect(make_job(), pods) == {"k": {"a": 1, "b": [1, 2]}, "n": 1}


def test_conflict() -> None:
    pods = [
        make_pod("f-eval-main-1", ended("c", out({"accuracy": 0.91}))),
        make_pod("f-eval-main-0", ended("c", out({"accuracy": 0.93}))),
    ]
    assert collect(make_job(), pods) == Failure(
        "OutputConflict", 'key "accuracy": 0.93 from pod f-eval-main-0, 0.91 from f-eval-main-1'
    )


@pytest.mark.parametrize(("a", "b"), [(True, 1), (1, "1"), (None, 0), ([1, 2], [2, 1])])
def test_different_json_values_conflict(a: Any, b: Any) -> None:
    pods = [make_pod("f-eval-main-0", ended("c", out({"k": a})), ended("d", out({"k": b})))]
    found = collect(make_job(), pods)
    assert isinstance(found, Failure) and found.reason == outputs.OUTPUT_CONFLICT
    assert "from pod f-eval-main-0 container c, " in found.message
    assert found.message.endswith("from f-eval-main-0 container d")


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ("[1, 2]", "it is an array"),
        ('"text"', "it is a string"),
        ("0.93", "it is a number"),
        ("null", "it is null"),
        ('{"a": 1', "Expecting ',' delimiter at line 1 column 8"),
        ('{"a": NaN}', "NaN is not JSON"),
        ('{"a": 1} {"b": 2}', "Extra data at line 1 column 10"),
    ],
)
def test_invalid(message: str, why: str) -> None:
    pods = [
        make_pod("f-eval-main-0", ended("c", out({"a": 1}))),
        make_pod("f-eval-main-1", ended("c", message)),
    ]
    assert collect(make_job(), pods) == Failure(
        "OutputInvalid", f"pod f-eval-main-1 container c: outputs are not a JSON object: {why}"
    )


def test_truncated() -> None:
    cut = ('{"values": [' + "1234567, " * 1000)[: outputs.MESSAGE_MAX]
    found = collect(make_job(), [make_pod("f-eval-main-0", ended("c", cut))])
    assert isinstance(found, Failure) and found.reason == "OutputInvalid"
    assert found.message.startswith(
        "pod f-eval-main-0 container c: outputs are not a JSON object: it was truncated at "
        "4096 bytes"
    )


def test_short_invalid_message_does_not_say_truncated() -> None:
    found = collect(make_job(), [make_pod("f-eval-main-0", ended("c", "{" * 10))])
    assert isinstance(found, Failure) and "truncated" not in found.message


def test_too_large() -> None:
    half = "x" * 2050
    pods = [
        make_pod("f-eval-main-0", ended("c", out({"a": half}))),
        make_pod("f-eval-main-1", ended("c", out({"b": half}))),
    ]
    found = collect(make_job(), pods)
    size = len(json.dumps({"a": half, "b": half}, separators=(",", ":")))
    assert size > outputs.ENTRY_MAX
    assert isinstance(found, Failure) and found.reason == "OutputTooLarge"
    assert f"{size} bytes" in found.message and "4096" in found.message


def test_the_bound_counts_utf8_bytes_of_compact_json() -> None:
    value = "é" * 2040  # 2040 characters, 4080 bytes
    pods = [make_pod("f-eval-main-0", ended("c", json.dumps({"k": value}, indent=4)))]
    assert collect(make_job(), pods) == {"k": value}  # 4088 bytes compact: within
    more = [make_pod("f-eval-main-0", ended("c", json.dumps({"k": value + "é" * 5})))]  # 4098
    assert isinstance(collect(make_job(), more), Failure)


def test_inputs_value() -> None:
    value = inputs_value(
        {"train": {}, "evaluate": {"accuracy": 0.93, "note": "é"}, "prep": {"n": 1}}
    )
    assert value == '{"evaluate":{"accuracy":0.93,"note":"é"},"prep":{"n":1}}'
    assert inputs_value({}) == "{}"


def test_outputs_path() -> None:
    assert outputs_path(Container(name="c")) == "/dev/termination-log"
    given = Container.from_dict({"name": "c", "terminationMessagePath": "/tmp/out.json"})
    assert outputs_path(given) == "/tmp/out.json"
    assert outputs_path(Container.from_dict({"name": "c", "terminationMessagePath": ""})) == (
        outputs.DEFAULT_PATH
    )


def test_constants() -> None:
    assert (outputs.ENV_OUTPUTS, outputs.ENV_INPUTS) == ("VCFLOW_OUTPUTS", "VCFLOW_INPUTS")
    assert (outputs.MESSAGE_MAX, outputs.ENTRY_MAX, outputs.FLOW_MAX) == (4096, 4096, 262144)
