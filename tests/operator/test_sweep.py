"""examples/sweep in Kubernetes mode, as real processes: `kubectl apply` of the example's
manifest to a `vcflow server --runtime local --controllers off` (the API server, and the
local runtime playing Volcano's job controller and the kubelet, with real pods) and
`vcflow operator` on its kubeconfig running the JobFlow controller. The for entry `train`
fans out over prep's output `configs` into the vcjobs sweep-train-0..7, at most 3
unfinished at once; the items' outputs come back through their pods' `terminated.message`
into the flow's status, pick chooses the best of them (its input a list in index order) and
deploy's `when` (threshold 0.9, the manifest's) lets it run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.operator import realpods
from tests.operator.conftest import StartOperator, flow_phase, wait_leader
from tests.server.conftest import Server, Start, wait_until
from tests.server.test_kubectl import Kubectl

NAME = "sweep"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the example: the directory its pods start in (they run `steps.py`)."""
    return realpods.copy_example(tmp_path, NAME)


@pytest.fixture
def api(start_server: Start, project: Path) -> Server:
    return realpods.local_runtime_server(start_server, project)


def flow(api: Server) -> dict[str, Any]:
    return realpods.read_flow(api, NAME)


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The largest number of (start, end) spans open at one instant."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    open_now = most = 0
    for _, step in events:  # at a tie an end (-1) sorts before a start (+1)
        open_now += step
        most = max(most, open_now)
    return most


def test_the_sweep_fans_out_on_the_operator_with_real_pods(
    api: Server, start_operator: StartOperator, kubectl: Kubectl, project: Path
) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    applied = kubectl.ok("apply", "-f", str(project / "flow.yaml"))
    assert f"jobflow.flow.volcano.sh/{NAME} created" in applied
    wait_until(lambda: flow_phase(api, NAME) in ("Succeed", "Failed"), "the flow to end", 60)
    found = flow(api)
    status = found.get("status") or {}
    assert flow_phase(api, NAME) == "Succeed", json.dumps(status, indent=1)
    rows = {row["name"].removeprefix(f"{NAME}-"): row for row in status["jobStatusList"]}

    # the pods' outputs, read back over the API from their terminated.message
    configs = rows["prep"]["outputs"]["configs"]
    assert len(configs) == 8
    items = [rows[f"train-{i}"] for i in range(8)]
    assert [item["state"] for item in items] == ["Completed"] * 8, json.dumps(rows, indent=1)
    outputs = [item["outputs"] for item in items]
    assert [out["index"] for out in outputs] == list(range(8))
    assert [out["lr"] for out in outputs] == [config["lr"] for config in configs]
    condition = status["conditions"][f"{NAME}-train"]
    assert (condition["phase"], condition["reason"]) == ("Completed", "ForEach"), condition
    assert condition["message"] == "8 items: 8 Completed"
    assert "train" not in rows  # the for entry itself is no vcjob
    # each item a vcjob of its own, made from the trainer template
    shown = kubectl.ok("get", "vcjob", f"{NAME}-train-7", "-o", "jsonpath={.status.state.phase}")
    assert shown == "Completed"
    # parallelism 3: never more than 3 trainings at once
    spans = [(out["started"], out["ended"]) for out in outputs]
    assert most_at_once(spans) <= 3, spans
    # pick: the highest score; deploy ran on it (0.9 <= the best score)
    scores = [out["score"] for out in outputs]
    best = scores.index(max(scores))
    assert rows["pick"]["outputs"] == {
        "best": best,
        "lr": configs[best]["lr"],
        "score": max(scores),
    }
    assert max(scores) >= 0.9
    assert rows["deploy"]["state"] == "Completed"
    assert rows["deploy"]["outputs"] == {"deployed": best}
    assert kubectl.ok("logs", f"{NAME}-deploy-deploy-0").startswith(f"deploy: item {best} ")
