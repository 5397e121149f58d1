"""examples/ml-sweep-lite end to end with `vcflow run`: outputs handed from job to job
through real processes, `when` on the threshold argument with both outcomes, `switch` on the
target argument (its cpu case: the gpu template asks for a GPU), and the `notify` exit
handler told how the flow ended."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ml-sweep-lite"


def run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    project = tmp_path / "ml-sweep-lite"
    shutil.copytree(EXAMPLE, project)
    state = tmp_path / "state"
    argv = [sys.executable, "-m", "vcflow", "--state-dir", str(state)]
    done = subprocess.run(
        [*argv, "run", "-f", ".", "--no-live", "--timeout", "120", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done, state


def log(state: Path, entry: str, task: str) -> str:
    pod = state / "pods" / "default" / f"ml-sweep-lite-{entry}-{task}-0"
    return (pod / f"{task}.0.log").read_text()


def describe(state: Path) -> str:
    argv = [sys.executable, "-m", "vcflow", "--state-dir", str(state)]
    done = subprocess.run(
        [*argv, "describe", "jobflow", "ml-sweep-lite"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("threshold", ["0", "2"])
def test_the_sweep_deploys_only_above_the_threshold(tmp_path: Path, threshold: str) -> None:
    done, state = run(tmp_path, "-p", f"threshold={threshold}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "flow ml-sweep-lite Succeed" in done.stdout
    # the trainers' outputs reached evaluate, which picked the better learning rate
    evaluate = json.loads(log(state, "evaluate", "evaluate").split("outputs: ", 1)[1])
    assert evaluate["best"] == "train-b" and 0.9 <= evaluate["accuracy"] <= 1
    text = describe(state)
    assert re.search(rf"threshold +{threshold} ", text), text
    assert '"best":"train-b"' in text  # (the Outputs section)
    # serve's switch took its second case: the cpu template (the gpu one wants a GPU)
    assert log(state, "serve", "serve").strip() == "serve: on cpu (cpu)"
    assert re.search(r"ml-sweep-lite-serve +serve-cpu +1\n", text), text
    assert log(state, "notify", "notify").strip() == "notify: the flow ended Succeed"
    if threshold == "0":
        assert log(state, "deploy", "deploy").startswith("deploy: train-b (accuracy ")
    else:
        assert not (state / "pods" / "default" / "ml-sweep-lite-deploy-deploy-0").exists()
        row = next(line for line in done.stdout.splitlines() if " deploy " in f" {line} ")
        assert "Skipped" in row and "WhenFalse" in row, done.stdout


def test_the_library_returns_each_jobs_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vcflow

    project = tmp_path / "ml-sweep-lite"
    shutil.copytree(EXAMPLE, project)
    monkeypatch.chdir(project)
    result = vcflow.run(
        [project / "flow.yaml"], state_dir=tmp_path / "state", arguments={"threshold": "0"}
    )
    assert result.succeeded
    jobs = {job.entry: job for job in result.flows[0].jobs}
    assert jobs["prep"].outputs == {"seed": 7, "rows": 400}
    assert jobs["evaluate"].outputs["best"] == "train-b"
    assert jobs["deploy"].outputs == {"deployed": "train-b"}
    assert jobs["serve"].outputs == {}  # (it wrote none)
