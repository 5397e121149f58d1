"""`vcflow run` beside objects stored before admission bounded them (an older vcflow wrote
them, or a library caller with `admit=False`): numbers past every timer's range and a pod
field a Pod cannot hold neither crash the run nor the shared pod server. Each such pod runs
with its timers clamped, or fails with a reason that says why; the other flows go on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import Result

from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

from .flows import jobflow, template

Vc = Callable[..., Result]
BIG = 10**18


def stored_job(name: str, command: list[str], **pod: Any) -> VCJob:
    task = {
        "name": "main",
        "replicas": 1,
        "template": {
            "spec": {
                **pod,
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox", "command": command}],
            }
        },
    }
    return VCJob.from_dict(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": name},
            "spec": {"minAvailable": 1, "ttlSecondsAfterFinished": BIG, "tasks": [task]},
        }
    )


def test_out_of_range_stored_vcjobs_neither_crash_the_run_nor_the_pod_server(
    vc: Vc, state_dir: Path, tmp_path: Path
) -> None:
    store = SqliteStore.in_state_dir(state_dir)
    try:
        huge = {"activeDeadlineSeconds": BIG, "terminationGracePeriodSeconds": BIG}
        # (a pod that runs a while: its deadline is a timer of the pod server)
        store.create(stored_job("huge", ["sleep", "0.5"], **huge), admit=False)
        store.create(stored_job("badprio", ["true"], priorityClassName=5), admit=False)
    finally:
        store.close()
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(template("a", "true") + jobflow("f", "a"))

    assert vc("apply", "-f", manifest).exit_code == 0
    result = vc("run", "--no-live")  # (every job of the state directory, the stored ones too)

    # (1: the run follows badprio too, which fails as it must)
    assert result.exit_code == 1, result.output + result.stderr
    assert "vcjob badprio Failed" in result.stdout
    assert "internal error" not in result.stderr
    assert "flow f Succeed" in result.stdout
    store = SqliteStore.in_state_dir(state_dir)
    try:
        assert store.get(VCJob, "default", "huge").phase == "Completed"
        assert store.get(Pod, "default", "huge-main-0").phase == "Succeeded"
        bad = store.get(Pod, "default", "badprio-main-0")
    finally:
        store.close()
    assert bad.phase == "Failed" and bad.status is not None
    assert bad.status.reason == "InvalidPodSpec"
    assert "spec.priorityClassName" in (bad.status.message or "")
    log = state_dir / "runtime" / "server.log"
    assert not log.exists() or "Traceback" not in log.read_text()
