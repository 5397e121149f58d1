"""A control plane restarted between a job's end and its dependent's `when` (docs/flow-features.md
part II), with real processes: `vcflow run` is SIGKILLed, run again on the same state
directory, and the dependent is decided once, on the outputs the first job wrote.

The flow: `a` draws a random number and writes `{"n": <it>}` to `$VCFLOW_OUTPUTS`; `c` waits
for a gate file the test creates; `b` depends on both with `when: "int(outputs.a.n) >= 0"`
and records the `$VCFLOW_INPUTS` it got. While `c` waits, `b` cannot be decided, so the kill
always falls in the window — after `a` ended (its outputs already in the flow's status), or
while `a` ends (the control plane down when its process exits, the outputs read after the
restart)."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest
from tests.cli import flows
from tests.cli.flows import DEADLINE, spawn, stop_pods, wait_until

from vcflow.api.jobflow import JobFlow, JobStatus
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

STEP = """
import json, os, random, sys, time
from pathlib import Path

here = Path(__file__).parent
step = sys.argv[1]
with open(here / "marks", "a") as marks:
    marks.write(step + "\\n")
if step == "a":
    with open(os.environ["VCFLOW_OUTPUTS"], "w") as out:
        json.dump({"n": random.randrange(10**9)}, out)
    with open(here / "wrote", "w") as wrote:
        wrote.write("a\\n")
if step in ("a", "c"):
    while not (here / f"gate-{step}").exists():
        time.sleep(0.02)
if step == "b":
    with open(here / "inputs", "a") as seen:
        seen.write(os.environ.get("VCFLOW_INPUTS", "") + "\\n")
"""

FLOW = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f}
spec:
  jobRetainPolicy: retain
  flows:
    - name: a
    - name: c
    - name: b
      dependsOn: {targets: [a, c]}
      when: "int(outputs.a.n) >= 0"
"""


def template(name: str, step: Path) -> str:
    command = f"[{json.dumps(sys.executable)}, {json.dumps(str(step))}, {name}]"
    return flows.template(name, image="python:3.11-slim", command=command)


def statuses(state_dir: Path) -> dict[str, JobStatus]:
    """The flow's `status.jobStatusList` by job name ({} before the flow has one)."""
    with SqliteStore.in_state_dir(state_dir) as store:
        flow = store.get(JobFlow, "default", "f")
    rows = flow.status.job_status_list if flow.status else None
    return {row.name: row for row in rows or []}


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("a_ends", ["before-the-kill", "while-down"])
def test_a_restart_before_when_decides_it_once_on_the_same_outputs(
    tmp_path: Path, a_ends: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    step = work / "step.py"
    step.write_text(STEP)
    manifest = tmp_path / "flow.yaml"
    manifest.write_text("".join(template(n, step) for n in ("a", "b", "c")) + FLOW)
    state_dir = tmp_path / "state"
    first = spawn(state_dir, manifest, "--timeout", "60")
    try:
        wait_until(lambda: lines(work / "wrote") == ["a"], "a to write its outputs")
        wait_until(lambda: "c" in lines(work / "marks"), "c to start")
        if a_ends == "before-the-kill":
            (work / "gate-a").touch()
            wait_until(
                lambda: (
                    (row := statuses(state_dir).get("f-a")) is not None and row.outputs is not None
                ),
                "a's outputs in the flow's status",
            )
            assert statuses(state_dir)["f-a"].state == "Completed"
        else:  # (a flow's status is written a little after its jobs change: wait for it)
            wait_until(
                lambda: (
                    (row := statuses(state_dir).get("f-a")) is not None and row.state == "Running"
                ),
                "a Running in the flow's status",
            )
        assert "f-b" not in statuses(state_dir)  # b waits for c: not decided yet
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=DEADLINE)
        if a_ends == "while-down":
            (work / "gate-a").touch()  # a's process ends with no control plane running
        second = spawn(state_dir, manifest, "--timeout", "60")
        try:
            (work / "gate-c").touch()
            out, err = second.communicate(timeout=DEADLINE)
        finally:
            if second.poll() is None:
                second.kill()
                second.communicate()
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
        stop_pods(state_dir)
    assert second.returncode == 0, out + err
    assert "jobflow.flow.volcano.sh/f unchanged" in out
    assert "flow f Succeed" in out
    # each job's process ran once: a was not rerun (it would have drawn another number)
    assert sorted(lines(work / "marks")) == ["a", "b", "c"]
    rows = statuses(state_dir)
    stored = rows["f-a"].outputs
    assert stored is not None and set(stored) == {"n"} and isinstance(stored["n"], int)
    # b was decided once, to run, and saw exactly the outputs kept for a
    assert rows["f-b"].state == "Completed"
    assert [json.loads(seen) for seen in lines(work / "inputs")] == [{"a": stored}]
    with SqliteStore.in_state_dir(state_dir) as store:
        for name in ("f-a", "f-b", "f-c"):
            job = store.get(VCJob, "default", name)
            assert job.status.succeeded == 1, name
            assert not job.status.retry_count, name
