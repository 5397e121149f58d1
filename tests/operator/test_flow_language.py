"""examples/ml-sweep-lite in Kubernetes mode, as real processes: `kubectl apply` of the
example's manifest (its `threshold` argument set in the manifest text, as kubectl users give
arguments) to a `vcflow server --runtime local --controllers off` — the API server, its
admission the webhook's, and the local runtime playing Volcano's job controller and the
kubelet, with real pods — and `vcflow operator` on its kubeconfig running the JobFlow
controller. The outputs the pods write to `$VCFLOW_OUTPUTS` come back through the pods'
`terminated.message` over the API: evaluate's accuracy is in the flow's status, `deploy`'s
`when` decides on it (Completed at threshold 0, Skipped WhenFalse at 2), `serve`'s switch
takes the cpu case, and the `notify` exit handler runs last."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.operator import realpods
from tests.operator.conftest import StartOperator, flow_phase, wait_leader
from tests.server.conftest import Server, Start, wait_until
from tests.server.test_kubectl import Kubectl

NAME = "ml-sweep-lite"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the example: the directory its pods start in (they run `steps.py`)."""
    return realpods.copy_example(tmp_path, NAME)


@pytest.fixture
def api(start_server: Start, project: Path) -> Server:
    return realpods.local_runtime_server(start_server, project)


def with_threshold(manifest: Path, threshold: str) -> None:
    """The manifest's `threshold` argument given this value in its text."""
    text = manifest.read_text()
    changed = re.sub(
        r'(- name: threshold\n\s+value: )"[^"]*"', rf'\g<1>"{threshold}"', text, count=1
    )
    assert changed != text
    manifest.write_text(changed)


def flow(api: Server) -> dict[str, Any]:
    return realpods.read_flow(api, NAME)


def rows(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The flow's `status.jobStatusList` by entry name."""
    listed = (found.get("status") or {}).get("jobStatusList") or []
    return {row["name"].removeprefix(f"{NAME}-"): row for row in listed}


def log(kubectl: Kubectl, entry: str, task: str) -> str:
    return kubectl.ok("logs", f"{NAME}-{entry}-{task}-0")


@pytest.mark.parametrize("threshold", ["0", "2"])
def test_the_sweep_runs_on_the_operator_with_real_pods(
    api: Server,
    start_operator: StartOperator,
    kubectl: Kubectl,
    project: Path,
    threshold: str,
) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    manifest = project / "flow.yaml"
    with_threshold(manifest, threshold)
    applied = kubectl.ok("apply", "-f", str(manifest))
    assert f"jobflow.flow.volcano.sh/{NAME} created" in applied
    wait_until(lambda: flow_phase(api, NAME) in ("Succeed", "Failed"), "the flow to end")
    found = flow(api)
    assert flow_phase(api, NAME) == "Succeed", json.dumps(found.get("status"), indent=1)
    assert found["spec"]["arguments"][0] == {
        "name": "threshold",
        "value": threshold,
        "description": "the accuracy the best model needs to be deployed",
    }
    by_entry = rows(found)
    # the pods' outputs, read back over the API from their terminated.message
    assert by_entry["prep"]["outputs"] == {"seed": 7, "rows": 400}
    evaluate = by_entry["evaluate"]["outputs"]
    assert evaluate["best"] == "train-b" and 0.9 <= evaluate["accuracy"] <= 1
    path = f'{{.status.jobStatusList[?(@.name=="{NAME}-evaluate")].outputs.accuracy}}'
    shown = kubectl.ok("get", "jf", NAME, "-o", f"jsonpath={path}")
    assert float(shown) == evaluate["accuracy"]
    assert by_entry["serve"]["state"] == "Completed"
    assert by_entry["serve"].get("template") == "serve-cpu"
    assert log(kubectl, "serve", "serve").strip() == "serve: on cpu (cpu)"
    assert by_entry["notify"]["state"] == "Completed"
    assert log(kubectl, "notify", "notify").strip() == "notify: the flow ended Succeed"
    if threshold == "0":
        assert by_entry["deploy"]["state"] == "Completed"
        assert by_entry["deploy"]["outputs"] == {"deployed": "train-b"}
        assert log(kubectl, "deploy", "deploy").startswith("deploy: train-b (accuracy ")
    else:  # no vcjob made: the entry is Skipped in the flow's conditions
        assert "deploy" not in by_entry
        condition = found["status"]["conditions"][f"{NAME}-deploy"]
        assert (condition["phase"], condition["reason"]) == ("Skipped", "WhenFalse"), condition
        assert "NotFound" in kubectl.run("get", "vcjob", f"{NAME}-deploy").stderr
