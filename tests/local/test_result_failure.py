"""The closing report's failed container when the job's pods are gone: found among the
attempts kept of the job's pods (`runtime.loghistory`), the pod's own failure rather than a
sibling the runtime stopped, and never a pod of an older vcjob of the same name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vcflow.api.vcjob import VCJob
from vcflow.local.result import failure_of
from vcflow.runtime import loghistory
from vcflow.store import MemoryStore

JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {"name": "r", "namespace": "default"},
    "spec": {
        "minAvailable": 1,
        "tasks": [
            {"name": "t", "replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}
        ],
    },
}


def kept(
    state_dir: Path, pod: str, number: int, *, group: str, code: int, at: str, reason: str = ""
) -> None:
    """Attempt `number` of `pod`, kept, its container `c` ended with `code` at `at`."""
    directory = loghistory.history_dir(state_dir, "default", pod) / str(number)
    directory.mkdir(parents=True)
    (directory / "c.0.log").write_text(f"{pod} attempt {number}\n")
    terminated = {"exitCode": code, "reason": "Error", "finishedAt": at}
    record: dict[str, Any] = {
        "uid": f"{pod}-{number}",
        "annotations": {"scheduling.k8s.io/group-name": group},
        "containers": ["c"],
        "status": {
            "phase": "Failed",
            "reason": reason,
            "containerStatuses": [{"name": "c", "state": {"terminated": terminated}}],
        },
    }
    (directory / loghistory.RECORD).write_text(json.dumps(record))


def test_a_failed_pod_its_policy_deleted_is_found_in_its_kept_attempts(tmp_path: Path) -> None:
    store = MemoryStore()
    job = store.create(VCJob.from_dict(JOB))
    group = f"r-{job.metadata.uid}"
    kept(tmp_path, "r-t-0", 1, group=group, code=1, at="2026-01-01T00:00:01Z")
    kept(tmp_path, "r-t-0", 2, group=group, code=2, at="2026-01-01T00:00:02Z")
    # its sibling, killed when the job failed: a consequence, not the cause
    kept(
        tmp_path, "r-t-1", 1, group=group, code=143, at="2026-01-01T00:00:03Z", reason="Terminated"
    )
    # a pod of an older vcjob named r
    kept(tmp_path, "r-t-1", 2, group="r-old", code=9, at="2026-01-01T00:00:09Z")
    failure = failure_of(store, tmp_path, "default", "r")
    assert failure is not None
    assert (failure.pod, failure.exit_code, failure.attempt) == ("r-t-0", 2, 2)
    assert failure.log_tail == ("r-t-0 attempt 2",)
    assert str(failure) == "exit code 2 (Error): pod r-t-0 (attempt 2, deleted), container c"


def test_without_a_failure_of_its_own_a_job_has_none(tmp_path: Path) -> None:
    store = MemoryStore()
    job = store.create(VCJob.from_dict(JOB))
    group = f"r-{job.metadata.uid}"
    kept(
        tmp_path, "r-t-0", 1, group=group, code=143, at="2026-01-01T00:00:03Z", reason="Terminated"
    )
    assert failure_of(store, tmp_path, "default", "r") is None
