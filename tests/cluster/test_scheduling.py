"""Flow-aware scheduling on a real control plane (docs/scheduling.md, On a cluster): the
operator, as the user vcflow-operator with deploy/'s RBAC, against Volcano v1.10's job
controller and vc-scheduler and kwok's nodes (8 declared `nvidia.com/gpu` each, 16 in all).

- A flow's `queue` and `priorityClassName` reach its vcjobs and their PodGroups.
- A pending vcjob's `priorityClassName` may be changed and its PodGroup follows (what the
  priority ladder relies on), and the PodGroup says why it waits; the operator's ladder
  raises a waiting vcjob when its flow is one step old.
- Two flows compete for the cluster's GPUs — flow a `prep → train → eval`, flow b four
  independent jobs applied while prep runs; every job takes all 16 GPUs (2 pods of 8), so
  they run one at a time — with vc-scheduler's default configuration (the operator in mode
  none) and with the sla plugin on (the operator reads it: mode sla). What each mode
  guarantees is asserted; the figures are printed (`-s`).
- A flow with `admission: Hold` is held against its Queue's capability, read from the API.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.cluster.deployed import BATCH, Scene, jobflow, template
from tests.cluster.fixtures import Kube, kubecluster

SCHEDULING = "/apis/scheduling.volcano.sh/v1beta1"
PRIORITY = "/apis/scheduling.k8s.io/v1/priorityclasses"
SLA_CONF = kubecluster.SCHEDULER_CONF.replace(
    "  - name: conformance\n", "  - name: conformance\n  - name: sla\n"
)
RUN = 2.0  # seconds each competing job's pods run
RIVALS = ["s1", "s2", "s3", "s4"]


def gpu_template(
    name: str, *, gpus: int = 8, replicas: int = 2, run: float = RUN
) -> dict[str, Any]:
    """`template` whose pods each ask `gpus` GPUs: 2 × 8, all of the cluster's."""
    found = template(name, run_seconds=run, replicas=replicas)
    container = found["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    amount = {"nvidia.com/gpu": str(gpus)}
    container["resources"] = {"requests": dict(amount), "limits": dict(amount)}
    return found


@pytest.fixture
def cluster_objects(kube: Kube) -> Iterator[list[str]]:
    """Paths of cluster-scoped objects a test made (Queues, PriorityClasses), deleted after."""
    made: list[str] = []
    yield made
    for path in made:
        kube.delete(path)


def podgroup_of(scene: Scene, job: dict[str, Any]) -> dict[str, Any] | None:
    """The PodGroup Volcano's job controller made for a vcjob (the one it controls); it
    deletes it when the vcjob completes."""
    uid = job["metadata"]["uid"]
    for group in scene.kube.items(f"{SCHEDULING}/namespaces/{scene.namespace}/podgroups"):
        if any(ref.get("uid") == uid for ref in group["metadata"].get("ownerReferences") or []):
            return group
    return None


def test_a_flows_queue_and_priority_class_reach_its_vcjobs_and_podgroups(
    scene: Scene, kube: Kube, cluster_objects: list[str]
) -> None:
    queue, klass = f"q-{scene.namespace}", f"pc-{scene.namespace}"
    made = kube.create(
        f"{SCHEDULING}/queues",
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
         "metadata": {"name": queue}, "spec": {"weight": 2}},
    )  # fmt: skip
    cluster_objects.append(f"{SCHEDULING}/queues/{made['metadata']['name']}")
    kube.create(PRIORITY, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": klass}, "value": 1000})  # fmt: skip
    cluster_objects.append(f"{PRIORITY}/{klass}")
    scene.wait(
        lambda: (
            ((kube.get(f"{SCHEDULING}/queues/{queue}") or {}).get("status") or {}).get("state")
            == "Open"
        ),
        f"queue {queue} Open (vc-controller-manager)",
    )
    operator = scene.operator()
    scene.wait_leader(operator)
    scene.apply(
        template("a", run_seconds=RUN),
        template("b", run_seconds=RUN),
        jobflow("f", "a", "b<a", queue=queue, priorityClassName=klass),
    )
    groups: dict[str, tuple[str, str]] = {}  # by its vcjob's uid (gone once that completes)
    path = f"{SCHEDULING}/namespaces/{scene.namespace}/podgroups"
    end = time.monotonic() + 60
    while scene.phase("f") != "Succeed":
        assert time.monotonic() < end, scene.explain()
        for group in scene.kube.items(path):
            for ref in group["metadata"].get("ownerReferences") or []:
                groups[ref["uid"]] = (group["spec"]["queue"], group["spec"]["priorityClassName"])
        time.sleep(0.1)
    jobs = scene.vcjobs()
    assert sorted(jobs) == ["f-a", "f-b"]
    for job in jobs.values():
        assert (job["spec"]["queue"], job["spec"]["priorityClassName"]) == (queue, klass)
        assert groups[job["metadata"]["uid"]] == (queue, klass)


def test_a_pending_vcjobs_priority_class_can_be_raised_and_its_podgroup_follows(
    scene: Scene, kube: Kube, cluster_objects: list[str]
) -> None:
    """The field the issue's priority ladder would climb: Volcano's job controller copies a
    changed spec.priorityClassName to the waiting PodGroup (createOrUpdatePodGroup), and
    the PodGroup's Unschedulable condition says why it waits. (Volcano's own webhook, not
    run here, lets the field change: admit_job.go validateJobUpdate, v1.10.0.)"""
    klass = f"pc-{scene.namespace}"
    kube.create(PRIORITY, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": klass}, "value": 100})  # fmt: skip
    cluster_objects.append(f"{PRIORITY}/{klass}")
    too_big = gpu_template("big", gpus=100, replicas=1)
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "big"}, "spec": too_big["spec"]}  # fmt: skip
    path = f"{BATCH}/namespaces/{scene.namespace}/jobs"
    made = kube.create(path, job)

    def waiting() -> dict[str, Any] | None:
        group = podgroup_of(scene, made)
        conditions = ((group or {}).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c.get("type") == "Unschedulable"), None)

    condition = scene.wait(waiting, "the PodGroup's Unschedulable condition")
    print(f"\nPodGroup Unschedulable: {condition.get('reason')}: {condition.get('message')}")
    assert condition["reason"] == "NotEnoughResources"
    answer = kube.http.patch(
        f"{path}/big",
        json={"spec": {"priorityClassName": klass}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert answer.status_code == 200, answer.text
    scene.wait(
        lambda: (podgroup_of(scene, made) or {}).get("spec", {}).get("priorityClassName") == klass,
        "the PodGroup to take the vcjob's new priorityClassName",
    )
    assert scene.job_phase("big") == "Pending"


class Timeline:
    """When each vcjob of the namespace was first seen Running and Completed (monotonic),
    polled every 0.1 s; `order` is the jobs by their start."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.running: dict[str, float] = {}
        self.completed: dict[str, float] = {}

    def poll(self) -> None:
        now = time.monotonic()
        for name, job in self.scene.vcjobs().items():
            phase = ((job.get("status") or {}).get("state") or {}).get("phase")
            if phase in ("Running", "Completing", "Completed"):
                self.running.setdefault(name, now)
            if phase == "Completed":
                self.completed.setdefault(name, now)

    def until_done(self, names: list[str], timeout: float) -> None:
        end = time.monotonic() + timeout
        while not set(names) <= set(self.completed):
            assert time.monotonic() < end, f"not all done: {self.completed}\n{self.scene.explain()}"
            self.poll()
            time.sleep(0.1)

    def started_between(self, after: float, before: float) -> list[str]:
        return sorted(n for n, t in self.running.items() if after < t < before)


@pytest.fixture
def scheduler_conf(cluster: Any) -> Iterator[Any]:
    """`set(conf)`: vc-scheduler's configuration for one test; the default again after."""
    yield cluster.set_scheduler_conf
    cluster.set_scheduler_conf(kubecluster.SCHEDULER_CONF)


@pytest.mark.parametrize("mode", ["none", "sla"])
def test_two_flows_compete_for_the_gpus(scene: Scene, scheduler_conf: Any, mode: str) -> None:
    """Without sla Volcano orders waiting jobs by creation: flow a's train, created when
    prep ends, waits behind every rival job created meanwhile. With sla each vcjob carries
    its flow's deadline, so a's later stages go before the younger flow's waiting jobs:
    at most the one job admitted between a stage's end and its successor's create (the
    hand-over gap, not built) starts in between."""
    if mode == "sla":
        scheduler_conf(SLA_CONF)
    operator = scene.operator()
    scene.wait_leader(operator)
    reason = {
        "none": "mode none (volcano-scheduler-configmap does not enable the sla plugin)",
        "sla": "mode sla (volcano-scheduler-configmap enables the sla plugin)",
    }[mode]
    scene.wait(lambda: reason in operator.output(), f"the operator to log {reason!r}")
    timeline = Timeline(scene)
    names = ["prep", "train", "eval", *RIVALS]
    # (prep runs 4 s: the rivals, created while it runs, are older than train by seconds,
    # not within the PodGroups' one-second creation stamps)
    scene.apply(*(gpu_template(n, run=4.0 if n == "prep" else RUN) for n in names))
    began = time.monotonic()
    scene.apply(jobflow("a", "prep", "train<prep", "eval<train"))
    while "a-prep" not in timeline.running:
        assert time.monotonic() - began < 60, scene.explain()
        timeline.poll()
        time.sleep(0.1)
    scene.apply(jobflow("b", *RIVALS))
    a_jobs, b_jobs = ["a-prep", "a-train", "a-eval"], [f"b-{n}" for n in RIVALS]
    timeline.until_done(a_jobs + b_jobs, timeout=120)
    run, done = timeline.running, timeline.completed
    before_train = timeline.started_between(done["a-prep"], run["a-train"])
    before_eval = timeline.started_between(done["a-train"], run["a-eval"])
    print(
        f"\n[{mode}] order: {sorted(run, key=run.__getitem__)}; rivals before train "
        f"{len(before_train)}, before eval {len(before_eval)}; gaps prep→train "
        f"{run['a-train'] - done['a-prep']:.1f} s, train→eval "
        f"{run['a-eval'] - done['a-train']:.1f} s; a done {done['a-eval'] - began:.1f} s, "
        f"b done {max(done[j] for j in b_jobs) - began:.1f} s"
    )
    waiting = scene.vcjobs()
    stamped = {n: j["metadata"].get("annotations", {}).get("volcano.sh/sla-waiting-time")
               for n, j in waiting.items()}  # fmt: skip
    if mode == "none":
        assert set(stamped.values()) == {None}
        assert before_train == b_jobs  # every rival was created first: all go first
    else:
        assert all(stamped.values()), stamped
        assert len(before_train) <= 1 and len(before_eval) <= 1, (before_train, before_eval)


def test_the_priority_ladder_raises_a_waiting_vcjob_and_its_podgroup(
    scene: Scene, kube: Kube, cluster_objects: list[str]
) -> None:
    """Mode priority: a vcjob that can never fit (100 GPUs) is created on its flow's rung,
    and as the flow ages the operator raises it to the top; Volcano's job controller gives
    the waiting PodGroup each new class."""
    low, mid, high = (f"{rung}-{scene.namespace}" for rung in ("low", "mid", "high"))
    for name, value in ((low, 10), (mid, 15), (high, 20)):
        kube.create(PRIORITY, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                               "metadata": {"name": name}, "value": value})  # fmt: skip
        cluster_objects.append(f"{PRIORITY}/{name}")
    operator = scene.operator("--priority-ladder", f"{low},{mid},{high}", "--ladder-step", "4s")
    scene.wait_leader(operator)
    scene.apply(gpu_template("big", gpus=100, replicas=1), jobflow("f", "big"))
    first = scene.wait(lambda: scene.vcjobs().get("f-big"), "vcjob f-big")
    assert first["spec"]["priorityClassName"] in (low, mid)  # (created within 8 s)
    scene.wait(
        lambda: (podgroup_of(scene, first) or {}).get("spec", {}).get("priorityClassName") == high,
        "the PodGroup to take the ladder's next class",
        timeout=30,
    )
    assert scene.vcjobs()["f-big"]["spec"]["priorityClassName"] == high
    assert scene.job_phase("f-big") == "Pending"
    assert f"priority ladder: vcjob {scene.namespace}/f-big now {high}" in operator.output()


def test_why_a_waiting_vcjob_is_unschedulable_shows_in_its_flows_status(scene: Scene) -> None:
    """vc-scheduler's reason, from the vcjob's PodGroup, as the job's condition in the
    flow's status (where `vcflow describe` reads it), as the local runtime reports it."""
    operator = scene.operator()
    scene.wait_leader(operator)
    scene.apply(gpu_template("big", gpus=100, replicas=1), jobflow("f", "big"))
    condition = scene.wait(
        lambda: (
            ((scene.status("f").get("conditions") or {}).get("f-big") or {}).get("reason")
            and scene.status("f")["conditions"]["f-big"]
        ),
        "the flow's condition of f-big to say why it waits",
    )
    print(f"\nflow status: {condition}")
    assert condition["phase"] == "Pending"
    assert condition["reason"] == "Unschedulable"
    assert condition["message"].startswith("NotEnoughResources: ")


def test_a_flow_is_held_against_its_queues_capability_until_the_queue_grows(
    scene: Scene, kube: Kube, cluster_objects: list[str]
) -> None:
    """`admission: Hold` on a cluster: the operator reads the Queue from the API; a flow a
    stage of which can never fit the queue's capability stays Pending, says why, and
    creates no vcjob — not even its first stage's — until the capability grows."""
    queue = f"q-{scene.namespace}"
    kube.create(
        f"{SCHEDULING}/queues",
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
         "metadata": {"name": queue},
         "spec": {"weight": 1, "capability": {"nvidia.com/gpu": "2"}}},
    )  # fmt: skip
    cluster_objects.append(f"{SCHEDULING}/queues/{queue}")
    operator = scene.operator()
    scene.wait_leader(operator)
    flow = jobflow("e3", "p1", "p2<p1", queue=queue, schedulingPolicy={"admission": "Hold"})
    scene.apply(template("p1"), gpu_template("p2"), flow)
    status = scene.wait(
        lambda: (s := scene.status("e3")) and (s.get("state") or {}).get("reason") == "Held" and s,
        "flow e3 to be held",
    )
    assert status["state"]["phase"] == "Pending"
    assert status["state"]["message"] == (
        f"entry p2 needs nvidia.com/gpu 16; queue {queue} capability nvidia.com/gpu 2"
    )
    assert scene.vcjobs() == {}
    answer = kube.http.patch(
        f"{SCHEDULING}/queues/{queue}",
        json={"spec": {"capability": {"nvidia.com/gpu": "16"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert answer.status_code == 200, answer.text
    scene.wait_phase("e3", "Succeed", timeout=90)
