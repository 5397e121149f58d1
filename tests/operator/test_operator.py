"""`vcflow operator` end to end, as real processes: a bare `vcflow server` as the API
server, the operator's replicas on its kubeconfig, kubectl applying Volcano's example, and
the test playing Volcano's job controller (`FakeVolcano`). What users rely on: the flow
runs to Succeed, no vcjob is ever created twice across a SIGKILL and restart or a leader's
death, a standby takes over within the lease time, SIGTERM releases the Lease."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.operator.conftest import (
    LEASE,
    StartOperator,
    elapsed_since,
    flow_phase,
    holder,
    lease,
    wait_leader,
)
from tests.operator.fakevolcano import FakeVolcano
from tests.server.conftest import Server, wait_until
from tests.server.test_kubectl import Kubectl

EXAMPLE = Path(__file__).parents[2] / "examples" / "jobflow"
JOBS = ("test-a", "test-b", "test-c", "test-d", "test-e")
LEASE_SECONDS = 2.0


def apply_example(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", str(EXAMPLE / "JobTemplate.yaml"))
    kubectl.ok("apply", "-f", str(EXAMPLE / "JobFlow.yaml"))


def created_once(volcano: FakeVolcano) -> dict[str, int]:
    return {name: len(uids) for name, uids in volcano.created().items()}


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} in /metrics")


def test_the_volcano_example_runs_to_succeed(
    api: Server, start_operator: StartOperator, volcano: FakeVolcano, kubectl: Kubectl
) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    apply_example(kubectl)
    wait_until(lambda: flow_phase(api, "test") == "Succeed", "the flow to succeed")
    assert created_once(volcano) == {f"default/{job}": 1 for job in JOBS}
    shown = kubectl.ok("get", "jobflow", "test", "-o", "jsonpath={.status.jobStatusList[*].name}")
    assert sorted(shown.split()) == sorted(JOBS)
    metrics = operator.get("/metrics").text
    assert metric(metrics, "vcflow_dependency_met_to_vcjob_created_seconds_count") == 5
    assert metric(metrics, 'leader_election_master_status{name="vcflow-operator"}') == 1
    assert 'vcflow_workqueue_depth{name="jobflow"}' in metrics
    assert operator.get("/healthz").status_code == 200
    ready = operator.get("/readyz")
    assert (ready.status_code, ready.text) == (200, "leader, synced")


def test_a_sigkill_mid_flow_and_a_restart_create_no_vcjob_twice(
    api: Server, start_operator: StartOperator, volcano: FakeVolcano, kubectl: Kubectl
) -> None:
    volcano.hold = {"test-b"}
    first = start_operator()
    wait_leader(api, first)
    apply_example(kubectl)
    wait_until(lambda: volcano.phase_of("test-b") == "Running", "test-b to run")
    assert first.kill(signal.SIGKILL) == -signal.SIGKILL
    volcano.release()
    second = start_operator()
    wait_leader(api, second)
    wait_until(lambda: flow_phase(api, "test") == "Succeed", "the flow to succeed")
    assert created_once(volcano) == {f"default/{job}": 1 for job in JOBS}


def test_a_standby_takes_over_within_the_lease_when_the_leader_is_killed(
    api: Server, start_operator: StartOperator, volcano: FakeVolcano, kubectl: Kubectl
) -> None:
    one, two = start_operator(), start_operator()
    leader = wait_leader(api, one, two)
    standby = two if leader is one else one
    wait_until(lambda: standby.get("/readyz").text == "standby", "the standby to be ready")
    shown = standby.get("/metrics").text
    assert metric(shown, 'leader_election_master_status{name="vcflow-operator"}') == 0
    volcano.hold = {"test-c", "test-d"}
    apply_example(kubectl)
    wait_until(lambda: volcano.phase_of("test-d") == "Running", "test-d to run")
    assert not any(j.startswith("default/test-e") for j in volcano.created())
    transitions = lease(api)["spec"]["leaseTransitions"]
    leader.kill(signal.SIGKILL)
    died = time.monotonic()
    wait_until(lambda: holder(api) == standby.identity, "the standby to take the lease")
    # client-go's bound: the lease unchanged for its duration as the standby saw it, found
    # at its next try (a retry period), plus this test's polling
    assert elapsed_since(died) < LEASE_SECONDS + 0.25 + 1.5
    assert lease(api)["spec"]["leaseTransitions"] == transitions + 1
    volcano.release()
    wait_until(lambda: flow_phase(api, "test") == "Succeed", "the flow to succeed")
    assert created_once(volcano) == {f"default/{job}": 1 for job in JOBS}
    assert standby.proc.poll() is None


def test_sigterm_releases_the_lease_and_exits_0(api: Server, start_operator: StartOperator) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    began = time.monotonic()
    assert operator.kill(signal.SIGTERM) == 0
    assert elapsed_since(began) < 5.0
    spec = lease(api)["spec"]
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    # a successor need not wait out the lease: it takes it at its first try
    successor = start_operator("--lease-duration", "30", "--renew-deadline", "20")
    began = time.monotonic()
    wait_leader(api, successor)
    assert elapsed_since(began) < 10.0
    assert lease(api)["spec"]["leaseTransitions"] == 1


def test_a_leader_that_cannot_renew_exits_1(api: Server, start_operator: StartOperator) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    taken = lease(api)
    taken["spec"].update(holderIdentity="someone-else", leaseDurationSeconds=60)
    with api.client() as client:
        assert client.put(LEASE, json=taken).status_code == 200
    assert operator.proc.wait(timeout=10) == 1
    assert "lost lease default/vcflow-operator" in operator.output()
    assert holder(api) == "someone-else"
