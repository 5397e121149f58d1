"""examples/sweep end to end with `vcflow run`: prep's list of 8 configurations fans out
into the items sweep-train-0..7 (real processes, at most 3 at once), each item gets its
configuration and index, pick gets their outputs as a list in index order and chooses the
best score, and deploy's `when` on the threshold argument goes both ways."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sweep"
NAME = "sweep"


def vcflow(state: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "vcflow", "--state-dir", str(state), *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=180)


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The largest number of (start, end) spans open at one instant."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    open_now = most = 0
    for _, step in events:  # at a tie an end (-1) sorts before a start (+1)
        open_now += step
        most = max(most, open_now)
    return most


def test_most_at_once() -> None:
    assert most_at_once([(0, 1), (1, 2)]) == 1
    assert most_at_once([(0, 3), (1, 2), (1.5, 4), (3.5, 5)]) == 3


@pytest.mark.parametrize("threshold", ["0", "2"])
def test_the_sweep_fans_out_and_deploys_only_above_the_threshold(
    tmp_path: Path, threshold: str
) -> None:
    project = tmp_path / NAME
    shutil.copytree(EXAMPLE, project)
    state = tmp_path / "state"
    done = vcflow(
        state, "run", "-f", ".", "--no-live", "--timeout", "120", "-p", f"threshold={threshold}",
        cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"flow {NAME} Succeed" in done.stdout
    shown = vcflow(state, "get", "jf", NAME, "-o", "json")
    assert shown.returncode == 0, shown.stderr
    status: dict[str, Any] = json.loads(shown.stdout)["status"]
    rows = {row["name"].removeprefix(f"{NAME}-"): row for row in status["jobStatusList"]}
    conditions = status["conditions"]

    configs = rows["prep"]["outputs"]["configs"]
    assert len(configs) == 8
    # the 8 items ran, each with its own configuration (VCFLOW_ITEM) and index (VCFLOW_INDEX)
    items = [rows[f"train-{i}"] for i in range(8)]
    assert [item["state"] for item in items] == ["Completed"] * 8
    outputs = [item["outputs"] for item in items]
    assert [out["index"] for out in outputs] == list(range(8))
    assert [out["lr"] for out in outputs] == [config["lr"] for config in configs]
    forentry = conditions[f"{NAME}-train"]
    assert (forentry["phase"], forentry["reason"]) == ("Completed", "ForEach"), forentry
    assert forentry["message"] == "8 items: 8 Completed"
    # parallelism 3: never more than 3 trainings at once (and they did overlap)
    spans = [(out["started"], out["ended"]) for out in outputs]
    assert all(start < end for start, end in spans), spans
    assert 2 <= most_at_once(spans) <= 3, spans
    # pick got the list in index order and chose the highest score
    scores = [out["score"] for out in outputs]
    best = scores.index(max(scores))
    assert rows["pick"]["outputs"] == {
        "best": best,
        "lr": configs[best]["lr"],
        "score": max(scores),
    }

    if threshold == "0":
        assert rows["deploy"]["state"] == "Completed"
        assert rows["deploy"]["outputs"] == {"deployed": best}
    else:  # no vcjob made: the entry is Skipped in the flow's conditions
        assert "deploy" not in rows
        condition = conditions[f"{NAME}-deploy"]
        assert (condition["phase"], condition["reason"]) == ("Skipped", "WhenFalse"), condition
        row = next(line for line in done.stdout.splitlines() if " deploy " in f" {line} ")
        assert "Skipped" in row and "WhenFalse" in row, done.stdout
