"""Queues and PriorityClasses are cluster-scoped kinds the CLI applies, lists (kubectl's
columns), describes and deletes; `-n` does not change what a cluster-scoped name finds;
bad ones are refused naming the object and the field; `default` cannot be deleted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from .flows import jobflow, template

Vc = Callable[..., Result]

OBJECTS = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-a}
spec:
  weight: 3
  capability: {cpu: "4", memory: 8Gi}
  guarantee: {resource: {cpu: "1"}}
  deserved: {cpu: "2"}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default, namespace: somewhere}
spec: {weight: 1}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: prod}
value: 1000
globalDefault: true
description: production flows
"""


def test_apply_get_describe_delete(vc: Vc, tmp_path: Path) -> None:
    manifest = tmp_path / "sched.yaml"
    manifest.write_text(OBJECTS)
    applied = vc("apply", "-f", manifest)
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines() == [
        "queue.scheduling.volcano.sh/team-a created",
        "queue.scheduling.volcano.sh/default created",
        "priorityclass.scheduling.k8s.io/prod created",
    ]
    again = vc("apply", "-f", manifest)
    assert again.stdout.splitlines()[0] == "queue.scheduling.volcano.sh/team-a unchanged"

    assert vc("get", "queues").stdout.split() == ["NAME", "PARENT", "default", "team-a"]
    # (`-n` is ignored for a cluster-scoped kind, as kubectl ignores it; no NAMESPACE)
    assert vc("get", "q", "team-a", "-n", "other").stdout.split() == ["NAME", "PARENT", "team-a"]
    assert vc("get", "q", "-A").stdout.split()[:2] == ["NAME", "PARENT"]
    table = vc("get", "pc").stdout.split()
    assert table[:5] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert table[5:8] == ["prod", "1000", "true"] and table[-1] == "PreemptLowerPriority"

    queue = vc("get", "queue", "team-a", "-o", "yaml").stdout
    assert "namespace" not in queue  # (no namespace, as the API server writes one)
    assert "weight: 3" in queue and "reclaimable: true" in queue  # (Volcano's default)

    described = vc("describe", "q", "team-a").stdout
    assert "Namespace:" not in described
    assert "Weight:       3" in described
    assert "cpu=4" in described and "memory=8Gi" in described and "State:  Open" in described
    pc = vc("describe", "priorityclass", "prod").stdout
    assert "Value:" in pc and "1000" in pc and "production flows" in pc

    refused = vc("delete", "queue", "default")
    assert refused.exit_code == 1
    assert "`default` queue can not be deleted" in refused.output
    deleted = vc("delete", "queue", "team-a", "-n", "other")
    assert deleted.stdout.strip() == 'queue.scheduling.volcano.sh "team-a" deleted'
    missing = vc("get", "q", "team-a")
    assert missing.exit_code == 1
    assert 'queues.scheduling.volcano.sh "team-a" not found' in missing.stderr


def test_no_queues_is_said_without_a_namespace(vc: Vc) -> None:
    empty = vc("get", "pc")
    assert (empty.exit_code, empty.stdout) == (0, "")
    assert empty.stderr == "No resources found.\n"


def test_bad_queue_and_classes_are_refused_naming_object_and_field(vc: Vc, tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
        "spec: {weight: 0, capability: {cpu: lots}}\n"
        "---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-x}\n"
        "value: 2000000000\n"
    )
    result = vc("validate", "-f", manifest)
    assert result.exit_code == 1
    text = result.stderr
    assert "Queue q: spec.weight: Invalid value: 0: spec.weight in body should be " in text
    assert "greater than or equal to 1" in text
    assert 'Queue q: spec.capability.cpu: Invalid value: "lots"' in text
    assert "PriorityClass system-x: metadata.name: Forbidden: priority class names with " in text
    assert "Traceback" not in result.output


def test_a_second_global_default_is_refused_naming_the_first(vc: Vc, tmp_path: Path) -> None:
    first = tmp_path / "first.yaml"
    first.write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: a}\n"
        "value: 10\nglobalDefault: true\n"
    )
    assert vc("apply", "-f", first).exit_code == 0
    second = tmp_path / "second.yaml"
    second.write_text(first.read_text().replace("name: a", "name: b"))
    refused = vc("apply", "-f", second)
    assert refused.exit_code == 1
    assert "PriorityClass b: globalDefault: PriorityClass a is already marked as default" in (
        refused.output
    )


def test_run_applies_queues_and_classes_with_the_flows(vc: Vc, tmp_path: Path) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "sched.yaml").write_text(OBJECTS)
    (folder / "flow.yaml").write_text(template("a", "true") + jobflow("f", "a"))
    assert vc("validate", "-f", folder).exit_code == 0
    ran = vc("run", "-f", folder)
    assert ran.exit_code == 0, ran.output
    assert "queue.scheduling.volcano.sh/team-a created" in ran.stdout
    assert "priorityclass.scheduling.k8s.io/prod created" in ran.stdout
    assert "flow f Succeed" in ran.stdout
    assert vc("get", "q", "-o", "name").stdout.split() == [
        "queue.scheduling.volcano.sh/default",
        "queue.scheduling.volcano.sh/team-a",
    ]
