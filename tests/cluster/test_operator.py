"""`vcflow operator` end to end on a real control plane: kube-apiserver v1.37 with deploy/'s
CRDs and RBAC (the operator runs as the user `vcflow-operator`, with exactly the rights
deploy/rbac/operator.yaml grants), the garbage collector, Volcano v1.10's job controller and
scheduler making and placing the vcjobs' pods, kwok running them (1 s, exit code 0 unless a
pod template's annotations say otherwise), and `vcflow webhook` admitting every write.
Each test has its own namespace and its own Lease; vcjobs are counted by uid from a watch
opened before the test creates anything."""

from __future__ import annotations

import signal
import time
from typing import Any

import httpx
from tests.cluster.deployed import (
    BATCH,
    DEADLINE,
    Scene,
    example,
    jobflow,
    template,
)

JOBS = ["test-a", "test-b", "test-c", "test-d", "test-e"]
#: the order a flow's phase may take (no going back)
PHASES = ["", "Pending", "Running", "Succeed"]
LEASE_SECONDS = 2.0


def states(item: dict[str, Any]) -> list[str]:
    return [h.get("state") for h in item.get("runningHistories") or []]


def test_volcanos_example_succeeds_its_vcjobs_deleted_and_its_status_right_at_every_poll(
    scene: Scene,
) -> None:
    """Volcano's example (jobRetainPolicy: delete) with the real job controller: polled every
    0.1 s the flow never lists a job in failedJobs (issue 25, defect 10: a DELETE of a
    custom resource answers a Status, which was taken for a vcjob with no phase), its phase
    never goes back; it ends Succeed with the five jobs completed, created once each in
    dependency order, then deleted with their pods."""
    operator = scene.operator()
    scene.wait_leader(operator)
    watch = scene.watch_jobs()
    scene.apply(*example())
    seen: list[dict[str, Any]] = []
    end = time.monotonic() + DEADLINE

    def finished(status: dict[str, Any]) -> bool:
        succeed = (status.get("state") or {}).get("phase") == "Succeed"
        return succeed and sorted(status.get("completedJobs") or []) == JOBS

    while not (seen and finished(seen[-1]) and not scene.vcjobs()):
        assert time.monotonic() < end, f"the flow did not end: {seen[-1:]}\n{scene.explain()}"
        seen.append(scene.status("test"))
        time.sleep(0.1)
    assert len(seen) > 50  # (polled all along: the flow takes ~12 s)
    phases = [(s.get("state") or {}).get("phase") or "" for s in seen]
    assert [PHASES.index(p) for p in phases] == sorted(PHASES.index(p) for p in phases)
    assert set(phases) >= {"Running", "Succeed"}
    for status in seen:
        assert not status.get("failedJobs"), status
        running = set(status.get("runningJobs") or [])
        assert not running & set(status.get("completedJobs") or []), status
    for item in seen[-1]["jobStatusList"]:
        assert item["state"] == "Completed", item
        assert states(item) == ["Pending", "Running", "Completed"], item
    assert watch.counts() == {job: 1 for job in JOBS}
    order = [name for name, _, _ in watch.owned()]
    assert order[:2] == ["test-a", "test-b"] and order[4] == "test-e"
    assert set(order[2:4]) == {"test-c", "test-d"}
    scene.wait(lambda: not scene.pods(), "the deleted vcjobs' pods to go")
    assert not watch.errors
    assert "Forbidden" not in operator.output()  # deploy/'s RBAC is all it needed


def test_a_pod_that_exits_3_fails_its_job_and_its_flow(scene: Scene) -> None:
    """kwok ends the pod with exit code 3, Volcano's job controller fails the vcjob, the
    flow fails with it; its dependent is never created."""
    scene.operator()
    watch = scene.watch_jobs()
    scene.apply(template("bad", exit_code=3), template("after"), jobflow("f", "bad", "after<bad"))
    status = scene.wait_phase("f", "Failed")
    assert status["failedJobs"] == ["f-bad"]
    assert not status.get("completedJobs")
    assert status["conditions"]["f-bad"]["phase"] == "Failed"
    [item] = status["jobStatusList"]
    assert item["name"] == "f-bad" and states(item)[-1] == "Failed"
    assert scene.job_phase("f-bad") == "Failed"
    [pod] = scene.pods("volcano.sh/job-name=f-bad")
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (pod["status"]["phase"], terminated["exitCode"]) == ("Failed", 3)
    time.sleep(1)  # (a dependent would have been created at once)
    assert watch.counts() == {"f-bad": 1}


def test_a_retried_entry_runs_a_new_vcjob_after_its_backoff(scene: Scene) -> None:
    """vcflow's retryPolicy on Volcano: attempt 1's pod exits 3, the entry waits its backoff
    (Waiting/Backoff, nextAttemptTime), its vcjob is deleted and created again with
    `vcflow.io/attempt: "2"` — from the template as it is then, which the test fixed while
    attempt 1 ran: the flow Succeeds. Beside it, a flow whose job always fails spends its
    one retry and fails with RetriesExhausted.

    The operator coalesces a flow's status writes (all but a phase change) over 50x the
    last write's cost: 3 s and more on this API server (a sync at :46 written at :49), so
    a wait of a few seconds may never be written — not with a 6 s backoff in 2 runs of 3.
    Each status polled must be right; the Waiting one, when one was written, too."""
    scene.operator()
    watch = scene.watch_jobs()
    retry = {"maxRetries": 1, "backoff": {"type": "Constant", "baseDelay": "3s"}}
    scene.apply(
        template("flaky", exit_code=3, run_seconds=2),
        template("broken", exit_code=3),
        jobflow("fixed", "flaky", retryPolicy=retry),
        jobflow("spent", "broken", retryPolicy=retry),
    )
    scene.wait(lambda: "fixed-flaky" in scene.vcjobs(), "vcjob fixed-flaky")
    scene.apply(template("flaky", run_seconds=2))  # exit code 0 from attempt 2 on
    seen: list[dict[str, Any]] = []

    def succeeded() -> bool:
        seen.append(scene.status("fixed"))
        return (seen[-1].get("state") or {}).get("phase") == "Succeed"

    scene.wait(succeeded, lambda: f"flow fixed to succeed: {seen[-1:]} {scene.vcjobs()}")
    waiting = [
        s
        for s in seen
        if ((s.get("conditions") or {}).get("fixed-flaky") or {}).get("reason") == "Backoff"
    ]
    for status in waiting:
        condition = status["conditions"]["fixed-flaky"]
        assert condition["phase"] == "Waiting" and "attempt 2 of 2" in condition["message"]
        assert status["jobStatusList"][0]["nextAttemptTime"]
    for status in seen:  # a failed attempt with a retry to come fails nothing
        assert not status.get("failedJobs"), status
        assert (status.get("state") or {}).get("phase") != "Failed", status
    [item] = seen[-1]["jobStatusList"]
    assert (item["attempt"], item["restartCount"], item["state"]) == (2, 1, "Completed")
    assert states(item) == ["Pending", "Running", "Failed", "Pending", "Running", "Completed"]
    job = scene.vcjobs()["fixed-flaky"]
    assert job["metadata"]["annotations"]["vcflow.io/attempt"] == "2"
    spent = scene.wait_phase("spent", "Failed")
    assert spent["failedJobs"] == ["spent-broken"]
    assert "RetriesExhausted" in str(spent["conditions"]["spent-broken"])
    counts = watch.counts()
    assert counts == {"fixed-flaky": 2, "spent-broken": 2}
    reasons = [
        e.get("reason")
        for e in scene.kube.items(f"/api/v1/namespaces/{scene.namespace}/events")
        if (e.get("involvedObject") or {}).get("name") == "fixed"
    ]
    assert "AttemptFailed" in reasons


def test_vcflow_stop_of_a_running_flow_deletes_its_vcjobs_and_fails_it(scene: Scene) -> None:
    """`vcflow --kubeconfig ... stop jobflow` sets the stop annotation through the API; the
    operator deletes the running vcjob (and Volcano's pods go with it), creates nothing
    more, and the flow ends Failed."""
    scene.operator()
    watch = scene.watch_jobs()
    scene.apply(
        template("long", run_seconds=600), template("next"), jobflow("s", "long", "next<long")
    )
    scene.wait(lambda: scene.job_phase("s-long") == "Running", "vcjob s-long Running")
    shown = scene.vcflow.ok("stop", "jobflow", "s", "-n", scene.namespace)
    assert "s" in shown
    status = scene.wait_phase("s", "Failed")
    scene.wait(lambda: "s-long" not in scene.vcjobs(), "vcjob s-long deleted")
    scene.wait(lambda: not scene.pods(), "its pods to go")
    assert scene.flow("s")["metadata"]["annotations"].get("vcflow.io/stop")
    assert "s-next" not in str(status.get("jobStatusList"))
    assert watch.counts() == {"s-long": 1}


def test_a_finished_flow_deleted_and_applied_again_runs_its_jobs_each_time(scene: Scene) -> None:
    """Four times: apply, Succeed, `kubectl delete jf`, apply at once. The garbage collector
    deletes the old flow's vcjobs while the new flow of the same name starts: each new
    flow creates and runs its own two vcjobs (owned by it), none succeeds without running
    (issue 25, defect 1)."""
    scene.operator()
    watch = scene.watch_jobs()
    flows = []
    for round in range(4):
        scene.apply(template("a"), template("b"), jobflow("again", "a", "b<a"))
        status = scene.wait_phase("again", "Succeed")
        flow = scene.flow("again")
        flows.append(flow["metadata"]["uid"])
        assert sorted(status["completedJobs"]) == ["again-a", "again-b"], round
        for item in status["jobStatusList"]:
            assert states(item) == ["Pending", "Running", "Completed"], (round, item)
            assert item["startTimestamp"] >= flow["metadata"]["creationTimestamp"], (round, item)
        owned = [name for name, _, owner in watch.owned() if owner == flows[-1]]
        assert sorted(owned) == ["again-a", "again-b"], (round, watch.owned())
        scene.kubectl.ok("-n", scene.namespace, "delete", "jf", "again", "--wait=false")
    assert watch.counts() == {"again-a": 4, "again-b": 4}
    assert len(set(flows)) == 4


def test_deleting_a_flow_lets_the_garbage_collector_delete_its_vcjobs_and_pods(
    scene: Scene,
) -> None:
    """A retained flow's vcjobs are owned by it (controller, blockOwnerDeletion): deleting
    the flow, the garbage collector deletes them and Volcano's pods go with them. Before,
    the operator labels the flow's real Volcano pods: `kubectl get pods -l
    volcano.sh/createdByJobFlow=<ns>.<flow>` lists them, a plain vcjob's pod is left alone."""
    scene.operator()
    namespace = scene.namespace
    plain = template("plain")
    plain.update(apiVersion="batch.volcano.sh/v1alpha1", kind="Job")
    plain["metadata"]["name"] = "plain"
    scene.kube.create(f"{BATCH}/namespaces/{namespace}/jobs", plain)
    scene.apply(template("a", replicas=2), template("b"), jobflow("gc", "a", "b<a"))
    scene.wait_phase("gc", "Succeed")
    flow = scene.flow("gc")
    selector = f"volcano.sh/createdByJobFlow={namespace}.gc"

    def labelled() -> list[str]:
        shown = scene.kubectl.ok("-n", namespace, "get", "pods", "-l", selector, "-o", "name")
        return sorted(shown.split())

    expected = ["pod/gc-a-work-0", "pod/gc-a-work-1", "pod/gc-b-work-0"]
    scene.wait(lambda: labelled() == expected, f"the flow's pods labelled {selector}")
    for pod in scene.pods(selector):
        job = pod["metadata"]["labels"]["volcano.sh/job-name"]
        template_label = pod["metadata"]["labels"]["volcano.sh/createdByJobTemplate"]
        assert template_label == f"{namespace}.{job.removeprefix('gc-')}"
    [other] = scene.pods("volcano.sh/job-name=plain")
    assert "volcano.sh/createdByJobFlow" not in other["metadata"]["labels"]
    for name in ("gc-a", "gc-b"):
        [owner] = scene.vcjobs()[name]["metadata"]["ownerReferences"]
        assert owner["uid"] == flow["metadata"]["uid"] and owner["kind"] == "JobFlow"
        assert owner["controller"] is True and owner["blockOwnerDeletion"] is True
    scene.kubectl.ok("-n", namespace, "delete", "jf", "gc")
    scene.wait(
        lambda: set(scene.vcjobs()) == {"plain"},
        "the garbage collector to delete vcjobs gc-a and gc-b",
        components=("kube-controller-manager",),
    )
    scene.wait(lambda: not scene.pods(selector), "their pods to go")
    assert scene.pods("volcano.sh/job-name=plain")


def test_a_sigkilled_operator_restarted_creates_no_vcjob_twice(scene: Scene) -> None:
    """SIGKILL while test-b runs; a new operator takes the Lease once it has expired,
    resyncs from the flow's status and the vcjobs that exist, and finishes the flow:
    every vcjob was created once (one uid each)."""
    first = scene.operator()
    scene.wait_leader(first)
    watch = scene.watch_jobs()
    scene.apply(*example(run_seconds={"b": 5}))
    scene.wait(lambda: scene.job_phase("test-b") == "Running", "test-b Running")
    assert first.kill(signal.SIGKILL) == -signal.SIGKILL
    second = scene.operator()
    scene.wait_leader(second)
    scene.wait_phase("test", "Succeed")
    assert watch.counts() == {job: 1 for job in JOBS}
    assert second.alive()


def test_the_standby_takes_over_when_the_leader_is_killed_and_the_flow_finishes(
    scene: Scene,
) -> None:
    """Two replicas: one leads, the other answers /readyz `standby`. The leader SIGKILLed
    while test-c and test-d run, the standby takes the Lease within its duration and a
    retry period, finishes the flow, and no vcjob is created twice."""
    one, two = scene.operator(), scene.operator()
    leader = scene.wait_leader(one, two)
    standby = two if leader is one else one
    scene.wait(
        lambda: httpx.get(standby.health_url + "/readyz", timeout=5).text == "standby",
        "the standby to be ready",
    )
    watch = scene.watch_jobs()
    scene.apply(*example(run_seconds={"c": 5, "d": 5}))
    scene.wait(lambda: scene.job_phase("test-d") == "Running", "test-d Running")
    assert "test-e" not in scene.vcjobs()
    transitions = scene.lease()["spec"].get("leaseTransitions", 0)
    leader.kill(signal.SIGKILL)
    died = time.monotonic()
    scene.wait(lambda: scene.holder() == standby.identity, "the standby to take the lease")
    taken = time.monotonic() - died
    # the lease unchanged for its duration as the standby saw it, found at its next try
    assert taken < LEASE_SECONDS + 0.25 + 1.5, taken
    assert scene.lease()["spec"]["leaseTransitions"] == transitions + 1
    scene.wait_phase("test", "Succeed")
    assert watch.counts() == {job: 1 for job in JOBS}
    assert standby.alive()
    ready = httpx.get(standby.health_url + "/readyz", timeout=5)
    assert (ready.status_code, ready.text) == (200, "leader, synced")
