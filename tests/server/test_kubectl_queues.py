"""A real kubectl against `vcflow server`: Queues and PriorityClasses are cluster-scoped
there as on a cluster — `apply -f`, `get queues` (Volcano's PARENT column), `get pc`
(kube's columns), `-n` ignored, `describe`, `delete`, and `api-resources` saying
NAMESPACED false."""

from __future__ import annotations

from pathlib import Path

from .test_kubectl import Make, kubectl, split, write

__all__ = ["kubectl"]  # (the fixture, used by name)

QUEUE = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "Queue",
    "metadata": {"name": "team-a"},
    "spec": {"weight": 3, "capability": {"cpu": "4"}},
}
CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "prod"},
    "value": 1000,
    "globalDefault": True,
}


def test_kubectl_applies_gets_and_deletes_queues_and_classes(kubectl: Make, tmp_path: Path) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    manifest = write(tmp_path / "sched.yaml", QUEUE, CLASS)
    assert kube.ok("apply", "-f", str(manifest)).splitlines() == [
        "queue.scheduling.volcano.sh/team-a created",
        "priorityclass.scheduling.k8s.io/prod created",
    ]
    assert kube.ok("apply", "-f", str(manifest)).splitlines() == [
        "queue.scheduling.volcano.sh/team-a unchanged",
        "priorityclass.scheduling.k8s.io/prod unchanged",
    ]
    assert split(kube.ok("get", "queues")) == [["NAME", "PARENT"], ["team-a"]]
    assert split(kube.ok("get", "q", "team-a", "-n", "elsewhere")) == [
        ["NAME", "PARENT"],
        ["team-a"],
    ]
    header, row = split(kube.ok("get", "pc"))
    assert header == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert row[:3] == ["prod", "1000", "true"] and row[-1] == "PreemptLowerPriority"
    assert kube.ok("get", "queue", "team-a", "-o", "jsonpath={.spec.weight}") == "3"

    resources = split(kube.ok("api-resources", "--api-group", "scheduling.volcano.sh"))
    assert resources[1][:4] == [
        "queues",
        "q,queue-v1beta1",
        "scheduling.volcano.sh/v1beta1",
        "false",
    ]
    described = split(kube.ok("describe", "queue", "team-a"))
    assert ["Kind:", "Queue"] in described and ["Weight:", "3"] in described
    assert ["Cpu:", "4"] in described

    refused = kube.run("delete", "queue", "default")
    assert refused.returncode != 0
    assert kube.ok("delete", "q", "team-a").strip() == (
        'queue.scheduling.volcano.sh "team-a" deleted'
    )
    assert kube.ok("delete", "pc", "prod").strip() == (
        'priorityclass.scheduling.k8s.io "prod" deleted'
    )
    empty = kube.run("get", "queues")
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, "", "No resources found\n")
