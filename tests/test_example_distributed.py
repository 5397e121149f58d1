"""examples/distributed end to end with `vcflow run`: two replicas meet over TCP by the svc
plugin's host name on a fixed port — twice at once (the example's flow and a second flow of
the same template), so the two jobs' port 29500 must not collide."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vcflow.api.vcjob import VCJob
from vcflow.podserver import isolation
from vcflow.reconcile.vcjob import pods
from vcflow.runtime import jobnet

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "distributed"
SECOND = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: again}
spec:
  flows:
    - name: allreduce
"""


@pytest.mark.skipif(not isolation.usable(), reason="no private namespaces on this machine")
def test_two_distributed_jobs_rendezvous_on_the_same_port_at_once(tmp_path: Path) -> None:
    project = tmp_path / "distributed"
    shutil.copytree(EXAMPLE, project)
    (project / "again.yaml").write_text(SECOND)
    state = tmp_path / "state"
    argv = [sys.executable, "-m", "vcflow", "--state-dir", str(state), "run", "-f", "."]
    done = subprocess.run(
        [*argv, "--no-live", "--timeout", "60"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for flow in ("distributed", "again"):
        job = f"{flow}-allreduce"
        for rank in (0, 1):
            log = state / "pods" / "default" / f"{job}-worker-{rank}" / "worker.0.log"
            expected = f"rank {rank} on {job}-worker-{rank}: all-reduce of 2 replicas = 3.0\n"
            assert log.read_text() == expected


def test_a_job_can_keep_the_hosts_network_by_annotation() -> None:
    """Pure: the plan of a pod whose template asks for the host's network, and of one
    that does not."""
    task = {
        "name": "w",
        "replicas": 2,
        "template": {
            "metadata": {"annotations": {jobnet.ANNOTATION: jobnet.HOST}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "command": ["true"]}]},
        },
    }
    job = VCJob.from_dict(
        {"metadata": {"name": "j", "uid": "u"}, "spec": {"plugins": {"svc": []}, "tasks": [task]}}
    )
    assert job.spec is not None and job.spec.tasks
    pod = pods.build_pod(job, job.spec.tasks[0], 1)
    bare = pod.clone()
    del bare.metadata.annotations[jobnet.ANNOTATION]
    own = jobnet.plan(job, bare, isolated=True)
    kept = jobnet.plan(job, pod, isolated=True)
    assert own is not None and own.key == "default/j/u" and own.address == "127.0.0.3"
    assert kept is not None and kept.key is None and kept.address == "127.0.0.1"
    assert "127.0.0.1\tj-w-1.j j-w-1" in kept.hosts
