"""`vcflow operator --scheduling-mode`: the mode it runs in is logged with its reason; in
`sla` every vcjob it creates carries `volcano.sh/sla-waiting-time`, in `none` (and in
`auto` where no vc-scheduler configuration can be read, as on `vcflow server`) none does;
with `--priority-ladder` (auto: `priority`) each is created on its flow's rung. A bad flag
is a one-line usage error naming it."""

from __future__ import annotations

from typing import Any

import pytest
from tests.operator.conftest import StartOperator, wait_leader
from tests.operator.fakevolcano import FakeVolcano
from tests.operator.test_operator import apply_example
from tests.server.conftest import Server, wait_until
from tests.server.test_kubectl import Kubectl
from typer.testing import CliRunner

from vcflow.api.clock import parse_go_duration, parse_rfc3339
from vcflow.cli.app import app
from vcflow.reconcile.slatime import WAITING_TIME

pytestmark = pytest.mark.process

JOBS = ("test-a", "test-b", "test-c", "test-d", "test-e")


def vcjobs(api: Server) -> list[dict[str, Any]]:
    with api.client() as client:
        found = client.get("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs").json()
    return list(found["items"])


def waiting_times(api: Server) -> dict[str, Any]:
    return {
        job["metadata"]["name"]: (job["metadata"].get("annotations") or {}).get(WAITING_TIME)
        for job in vcjobs(api)
    }


def test_sla_mode_gives_every_vcjob_the_flows_deadline(
    api: Server, start_operator: StartOperator, volcano: FakeVolcano, kubectl: Kubectl
) -> None:
    volcano.hold = {"test-e"}  # (the last: every vcjob exists while it runs)
    operator = start_operator("--scheduling-mode", "sla", "--sla-budget", "2h")
    wait_leader(api, operator)
    assert "scheduling: mode sla (--scheduling-mode)" in operator.output()
    apply_example(kubectl)
    wait_until(lambda: volcano.phase_of("test-e") == "Running", "test-e to run")
    jobs = vcjobs(api)
    with api.client() as client:
        flow = client.get("/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows/test")
    volcano.release()
    deadline = parse_rfc3339(flow.json()["metadata"]["creationTimestamp"]).timestamp() + 7200
    # the example's DAG a → b → {c, d} → e: each entry's remaining path, 1 s an entry
    ranks = {"test-a": 4, "test-b": 3, "test-c": 2, "test-d": 2, "test-e": 1}
    assert sorted(j["metadata"]["name"] for j in jobs) == sorted(JOBS)
    for job in jobs:
        meta = job["metadata"]
        waiting = parse_go_duration(meta["annotations"][WAITING_TIME])
        assert waiting is not None
        due = parse_rfc3339(meta["creationTimestamp"]).timestamp() + waiting
        # due at the flow's deadline less its rank: to the second (the creation time is
        # whole seconds, the waiting time rounded up) and the create's own latency
        assert -1 < due - (deadline - ranks[meta["name"]]) < 3, (meta["name"], due, deadline)


def test_auto_without_a_scheduler_configuration_runs_in_none(
    api: Server, start_operator: StartOperator, volcano: FakeVolcano, kubectl: Kubectl
) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    wait_until(lambda: "scheduling: mode" in operator.output(), "the mode's log line")
    assert (
        "scheduling: mode none (no volcano-system/volcano-scheduler-configmap)" in operator.output()
    )
    volcano.hold = {"test-e"}
    apply_example(kubectl)
    wait_until(lambda: volcano.phase_of("test-e") == "Running", "test-e to run")
    assert waiting_times(api) == dict.fromkeys(JOBS)
    volcano.release()


def test_auto_with_a_ladder_creates_each_vcjob_on_its_flows_rung(
    api: Server, start_operator: StartOperator, volcano: FakeVolcano, kubectl: Kubectl
) -> None:
    volcano.hold = {"test-e"}
    operator = start_operator("--priority-ladder", "low,high", "--ladder-step", "1h")
    wait_leader(api, operator)
    wait_until(lambda: "scheduling: mode" in operator.output(), "the mode's log line")
    assert (
        "scheduling: mode priority (no volcano-system/volcano-scheduler-configmap; "
        "--priority-ladder given)" in operator.output()
    )
    apply_example(kubectl)
    wait_until(lambda: volcano.phase_of("test-e") == "Running", "test-e to run")
    classes = {j["metadata"]["name"]: j["spec"].get("priorityClassName") for j in vcjobs(api)}
    volcano.release()
    assert classes == dict.fromkeys(JOBS, "low")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--sla-budget", "5x"], 'Invalid value for --sla-budget: invalid duration "5x"'),
        (["--sla-floor", "0s"], "Invalid value for --sla-floor: must be at least 1s"),
        (["--scheduling-mode", "fast"], "Invalid value for '--scheduling-mode'"),
        (["--priority-ladder", "low,,high"], "--priority-ladder: an empty PriorityClass"),
        (["--priority-ladder", "a,b", "--ladder-step", "0s"], "--ladder-step: must be more"),
        (["--scheduling-mode", "priority"], "--scheduling-mode priority: needs --priority-l"),
    ],
    ids=["budget", "floor", "mode", "ladder", "step", "priority-without-ladder"],
)
def test_a_bad_flag_is_one_line_naming_it(flags: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["operator", "--no-leader-elect", *flags])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
