"""Embedded, with a `vcflow controller` process running the controllers: a flow deleted
(`vcflow delete`) and applied again (`vcflow apply`) creates its vcjob every time; the
vcjob the store collects after its flow is not an outcome of the next flow of that name
(issue 25, defect 1). `vcflow controller` runs no pods: the test completes the vcjob."""

from __future__ import annotations

import signal
from pathlib import Path

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.local import statedir
from vcflow.store import SqliteStore

from .flows import DEADLINE, cli, jobflow, started, template, wait_until


def vcflow(state_dir: Path, *args: str) -> None:
    done = cli(state_dir, *args)
    assert done.returncode == 0, done.stderr


def jobs(store: SqliteStore) -> list[VCJob]:
    return store.list(VCJob, "default")


def phase(store: SqliteStore) -> str:
    found = store.list(JobFlow, "default")
    return found[0].phase if found else ""


def test_a_flow_deleted_and_applied_again_creates_its_job_each_time(
    state_dir: Path, store: SqliteStore, tmp_path: Path
) -> None:
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(template("a", "true") + jobflow("f", "a"))
    vcflow(state_dir, "apply", "-f", str(manifest))  # (the store exists before the lock)
    controller = started(state_dir, "controller")
    uids, err = set(), ""
    try:
        lock = statedir.ControllerLock(state_dir)
        wait_until(lambda: lock.holder()[0] == controller.pid, "the controller")
        for run in range(1, 5):
            if run > 1:
                vcflow(state_dir, "apply", "-f", str(manifest))
            wait_until(lambda: jobs(store) or phase(store) == "Succeed", f"apply {run} to act")
            assert jobs(store), f"apply {run}: the flow ended without creating its vcjob"
            job = store.get(VCJob, "default", "f-a")
            uids.add(job.metadata.uid)
            job.status = VCJobStatus(state=JobState(phase="Completed"))
            store.update_status(job)
            wait_until(lambda: phase(store) == "Succeed", f"the flow of apply {run} to succeed")
            vcflow(state_dir, "delete", "jobflow", "f")
            wait_until(lambda: not store.list(VCJob, "default"), "the vcjob to be collected")
    finally:
        controller.send_signal(signal.SIGTERM)
        try:
            _, err = controller.communicate(timeout=DEADLINE)
        finally:
            if controller.poll() is None:
                controller.kill()
                controller.wait()
    assert controller.returncode == 0, err
    assert len(uids) == 4
