"""A suspended vcjob waits for a person, and `vcflow run` waits with it (issue 25, defect 7):
with real processes, `vcflow suspend vcjob` from another process does not end the run — it
is still running well after the stall timeout, says what resumes the job — and after
`vcflow resume vcjob` the flow goes on and the run exits 0. Ctrl-C meanwhile shows the job
suspended in the final table; the live view shows it too."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.cli.runview import LiveView
from vcflow.local.progress import Progress
from vcflow.local.session import STALL_AFTER, STALL_RETRYING_AFTER

from .flows import DEADLINE, cli, jobflow, stop_pods, template, wait_for, wait_until

NOTE = "waiting for f/a to be resumed (suspended): vcflow resume vcjob f-a resumes it"


class Run:
    """`vcflow run --no-live` as a child process, its output in files (read while it runs)."""

    def __init__(self, tmp_path: Path, state_dir: Path, manifest: Path) -> None:
        self.out, self.err = tmp_path / "run.out", tmp_path / "run.err"
        command = ["--state-dir", str(state_dir), "run", "-f", str(manifest), "--no-live"]
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "vcflow", *command], stdout=out, stderr=err, text=True
            )

    def said(self, text: str) -> bool:
        return text in self.err.read_text()


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    """Flow f: a (adds a line to `started`, then runs until `go` exists), then b; `vcflow
    run` on it. Killed, and its pods stopped, however the test ends."""
    started, go = tmp_path / "started", tmp_path / "go"
    script = f"echo up >> {started}; while [ ! -e {go} ]; do sleep 0.05; done"
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(template("a", script) + template("b", "true") + jobflow("f", "a", "b<a"))
    state_dir = tmp_path / "state"
    child = Run(tmp_path, state_dir, manifest)
    try:
        yield child
    finally:
        if child.proc.poll() is None:
            child.proc.kill()
            child.proc.wait(timeout=DEADLINE)
        stop_pods(state_dir)


def _suspend(tmp_path: Path, run: Run) -> Path:
    """a started, then suspended from another process; the state directory."""
    state_dir = tmp_path / "state"
    wait_for(tmp_path / "started", 1)
    done = cli(state_dir, "suspend", "vcjob", "f-a")
    assert done.returncode == 0, done.stderr
    wait_until(lambda: run.said(NOTE), "the run to say it waits for a resume")
    return state_dir


def test_a_suspended_job_is_waited_for_until_it_is_resumed(tmp_path: Path, run: Run) -> None:
    state_dir = _suspend(tmp_path, run)
    # nothing moves: a run that stalls ends after STALL_AFTER (STALL_RETRYING_AFTER at most)
    time.sleep(max(STALL_AFTER, STALL_RETRYING_AFTER) + 1.0)
    assert run.proc.poll() is None, run.out.read_text() + run.err.read_text()
    assert "nothing can start" not in run.err.read_text()
    (tmp_path / "go").touch()
    done = cli(state_dir, "resume", "vcjob", "f-a")
    assert done.returncode == 0, done.stderr
    assert run.proc.wait(timeout=DEADLINE) == 0, run.out.read_text() + run.err.read_text()
    out = run.out.read_text()
    assert "f/a Aborted" in out and "flow f Succeed" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("f ")]
    assert [row[:3] for row in rows] == [["f", "a", "Completed"], ["f", "b", "Completed"]]


def test_ctrl_c_shows_the_job_suspended_in_the_final_table(tmp_path: Path, run: Run) -> None:
    _suspend(tmp_path, run)
    run.proc.send_signal(signal.SIGINT)
    assert run.proc.wait(timeout=DEADLINE) == 130
    row = next(line for line in run.out.read_text().splitlines() if line.startswith("f "))
    assert row.split()[:3] == ["f", "a", "Aborted"]
    assert row.endswith("Suspended: vcflow resume vcjob f-a resumes it")


def test_the_live_view_shows_a_suspended_job_and_what_resumes_it() -> None:
    flow = JobFlow.from_dict(
        {
            "metadata": {"name": "f", "namespace": "team", "uid": "u"},
            "spec": {"flows": [{"name": "a"}]},
        }
    )
    owner = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "f"}
    job = VCJob.from_dict(
        {
            "metadata": {
                "name": "f-a",
                "namespace": "team",
                "ownerReferences": [{**owner, "uid": "u", "controller": True}],
            },
            "status": {"state": {"phase": "Aborted"}},
        }
    )
    progress = Progress([flow], now=lambda: 100.0)
    progress.observe(job, False)
    assert [j.job for j in progress.suspended()] == ["f-a"]
    text = "\n".join(
        line.plain
        for line in LiveView(progress, lambda: 40).render().renderables  # type: ignore[attr-defined]
    )
    assert "a  Aborted" in text
    assert "Suspended: vcflow resume vcjob f-a -n team resumes it" in text
