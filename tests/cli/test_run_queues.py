"""`vcflow run` schedules by the Queues in its manifests (docs/scheduling.md, "The local
scheduler"): a vcjob in a stored queue runs; one in a queue that does not exist waits, and
the run says why when nothing else can move."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from .flows import template

Vc = Callable[..., Result]

QUEUE = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-a}
spec: {weight: 2, capability: {cpu: "2"}}
---"""


def flow(name: str, queue: str) -> str:
    return f"""
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: {name}}}
spec:
  queue: {queue}
  flows:
    - name: step
"""


def test_a_flow_in_a_stored_queue_runs_one_in_a_missing_queue_waits_saying_why(
    vc: Vc, tmp_path: Path
) -> None:
    manifest = tmp_path / "flows.yaml"
    body = QUEUE + template("step", "true", cpu="1") + flow("ok", "team-a") + "---"
    manifest.write_text(body + flow("lost", "nowhere"))
    result = vc("run", "-f", manifest, "--no-live", "--capacity", "cpu=4", "--timeout", "60")
    out = result.stdout + result.stderr
    assert "flow ok Succeed" in out, out
    assert "lost-step is Pending (Unschedulable: queue nowhere does not exist)" in out, out
    assert "flow lost Pending" in out, out
