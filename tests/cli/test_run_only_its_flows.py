"""`vcflow run -f X` runs the flows X names and no other (issue 25, defect 3), with real
processes: a flow `vcflow resubmit` created meanwhile is left as it is — its job does not
run, the run neither waits for it nor lists it — and it runs when a run names it (`vcflow
get jf NAME -o yaml | vcflow run -f -`) or by `vcflow run` without -f, which runs what the
state directory holds that has not ended."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .flows import DEADLINE, cli, jobflow, stop_pods, template


@pytest.fixture
def state_dir(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "state"
    try:
        yield where
    finally:
        stop_pods(where)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _table(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("FLOW "))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip() or line.startswith("flow "):
            break
        rows.append(line.split())
    return rows


def test_a_resubmitted_flow_is_left_to_a_run_that_names_it(tmp_path: Path, state_dir: Path) -> None:
    ran = tmp_path / "ran"
    templates = template("quick", "true") + template("mark", f"echo ran >> {ran}")
    both, only_x = tmp_path / "both.yaml", tmp_path / "x.yaml"
    both.write_text(templates + jobflow("x", "quick") + "---\n" + jobflow("y", "mark"))
    only_x.write_text(jobflow("x", "quick"))
    first = cli(state_dir, "run", "-f", str(both), "--no-live")
    assert first.returncode == 0, first.stderr
    assert _lines(ran) == 1
    made = cli(state_dir, "resubmit", "jobflow", "y", "--name", "y2")
    assert made.returncode == 0, made.stderr

    again = cli(state_dir, "run", "-f", str(only_x), "--no-live")
    assert again.returncode == 0, again.stdout + again.stderr
    assert [row[:3] for row in _table(again.stdout)] == [["x", "quick", "Completed"]]
    assert "y2" not in again.stdout + again.stderr
    assert _lines(ran) == 1  # y2's job did not run
    flows = cli(state_dir, "get", "jf", "y2", "--no-headers")
    assert flows.stdout.split()[:2] == ["y2", "Pending"], flows.stdout

    shown = cli(state_dir, "get", "jf", "y2", "-o", "yaml")
    command = ["--state-dir", str(state_dir), "run", "-f", "-", "--no-live"]
    named = subprocess.run(
        [sys.executable, "-m", "vcflow", *command],
        input=shown.stdout,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert named.returncode == 0, named.stdout + named.stderr
    assert [row[:3] for row in _table(named.stdout)] == [["y2", "mark", "Completed"]]
    assert _lines(ran) == 2


def test_run_without_manifests_runs_what_the_state_directory_has_not_ended(
    tmp_path: Path, state_dir: Path
) -> None:
    ran = tmp_path / "ran"
    manifest = tmp_path / "flows.yaml"
    manifest.write_text(
        template("quick", "true") + template("mark", f"echo ran >> {ran}") + jobflow("y", "mark")
    )
    assert cli(state_dir, "run", "-f", str(manifest), "--no-live").returncode == 0
    made = cli(state_dir, "resubmit", "jobflow", "y", "--name", "y2")
    how = f"vcflow --state-dir {shlex.quote(str(state_dir))} run"
    assert made.stdout == f"jobflow.flow.volcano.sh/y2 created; run it with: {how}\n"
    every = cli(state_dir, "run", "--no-live")  # the command it names
    assert every.returncode == 0, every.stdout + every.stderr
    assert [row[:3] for row in _table(every.stdout)] == [["y2", "mark", "Completed"]]
    assert _lines(ran) == 2
    nothing = cli(state_dir, "run", "--no-live")
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout == (
        "nothing to run: every flow and vcjob of the state directory has ended\n"
    )


def test_run_without_manifests_where_nothing_was_applied_makes_no_state_directory(
    tmp_path: Path,
) -> None:
    where = tmp_path / "typo"
    nothing = cli(where, "run", "--no-live")
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout == (
        f"nothing to run: {where} holds no flow or vcjob (apply some, or give -f)\n"
    )
    assert not where.exists()  # as `get` there: a read finds nothing and makes nothing
