"""A `vcflow run` SIGKILLed in the middle of a fan-out `for` (docs/flow-features.md section 19,
"Restart"), with real processes: run again on the same state directory and manifest, the
flow succeeds, no item is created or run twice and `parallelism` holds across the crash.

The flow: one entry `e` with `for` over 6 items, `parallelism: 2`. Each item appends
`<index> <pid> <time>` to `starts` when it starts (O_APPEND, one write), waits until a gate
file the test creates exists (`gate-<index>`, or `gate` for all), appends the same to `ends`
and exits 0. The test kills `vcflow run` while two items wait on their gates, so the kill
always falls while two items run: items 0 and 1 (their gates opened while no control plane
runs, or after the rerun adopted them), items 2 and 3 (0 and 1 completed), or items 0 and 1
with the flow's status stripped of the entry (a controller that died between creating the
item vcjobs and writing the status: the rerun expands the entry from the vcjobs it finds).

What vcflow promises of the two running items (README: "a killed `vcflow run` loses
nothing: run it again and it re-adopts running pods, collects finished ones and never starts
a pod twice"), asserted as tests/cli/test_run.py and test_language_restart.py assert it for
plain entries: their processes outlive the runner, the rerun starts no other item while
they run, each item's process ran once and that same process ended, each item vcjob was
created once (the same uid across the crash, one `Created` event) and succeeded on its first
attempt, and never more than 2 item processes ran at once (from the timestamps)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest
from tests.cli.flows import DEADLINE, flow, spawn, stop_pods, template, wait_until

from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

COUNT = 6
PARALLELISM = 2

STEP = """
import os, sys, time
from pathlib import Path

here = Path(__file__).parent
index = os.environ["VCFLOW_INDEX"]
if os.environ.get("VCFLOW_ITEM") != "item-" + index:
    sys.exit(3)


def mark(name):
    fd = os.open(here / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{index} {os.getpid()} {time.time()!r}\\n".encode())
    finally:
        os.close(fd)


mark("starts")
while not ((here / "gate").exists() or (here / f"gate-{index}").exists()):
    time.sleep(0.02)
mark("ends")
"""


def manifest(step: Path) -> str:
    items = json.dumps([f"item-{i}" for i in range(COUNT)])
    command = f"[{json.dumps(sys.executable)}, {json.dumps(str(step))}]"
    entry = f"{{name: e, for: {{items: {items}, parallelism: {PARALLELISM}}}}}"
    return template("e", image="python:3.11-slim", command=command) + flow(
        "f", entry, spec="  jobRetainPolicy: retain\n"
    )


def marks(path: Path) -> list[tuple[int, int, float]]:
    """The (index, pid, time) lines of `starts` or `ends`."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        index, pid, at = line.split()
        found.append((int(index), int(pid), float(at)))
    return found


def indexes(path: Path) -> list[int]:
    return sorted(index for index, _, _ in marks(path))


def uids(state_dir: Path) -> dict[str, str]:
    """The uid of each vcjob, by name (a vcjob deleted and created again has another)."""
    with SqliteStore.in_state_dir(state_dir) as store:
        return {job.metadata.name: str(job.metadata.uid) for job in store.list(VCJob, "default")}


def created_events(state_dir: Path) -> dict[str, int]:
    """How many times the flow controller said it created each vcjob (its Created events)."""
    counts: dict[str, int] = {}
    with SqliteStore.in_state_dir(state_dir) as store:
        for event in store.list(Event, "default"):
            if event.involved_object.name == "f" and event.reason == "Created":
                counts[event.message] = counts.get(event.message, 0) + event.count
    return counts


class Output:
    """A child's output stream, read line by line as it comes (by a thread), then closed."""

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self.stream = stream
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with self.stream:
            for line in self.stream:
                self.lines.append(line)

    def has(self, text: str) -> bool:
        return any(text in line for line in list(self.lines))

    def text(self) -> str:
        self.thread.join(DEADLINE)
        return "".join(self.lines)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def most_at_once(starts: list[tuple[int, int, float]], ends: list[tuple[int, int, float]]) -> int:
    """The most items whose process was between its start and end lines at one time (an end
    before a start at the same instant)."""
    events = sorted([(at, 1) for _, _, at in starts] + [(at, -1) for _, _, at in ends])
    most = running = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


def forget_the_entry(state_dir: Path) -> None:
    """Drop every record of entry `e` and its items from the flow's status: the status of a
    controller that died between creating the item vcjobs and writing it — the restarted one
    finds no `ForEach` condition and must expand the entry again from an item vcjob it finds
    (`reconcile.expansion.adopt`)."""
    with SqliteStore.in_state_dir(state_dir) as store:
        flow = store.get(JobFlow, "default", "f")
        status = flow.status
        assert status is not None and status.conditions is not None
        assert status.conditions["f-e"].reason == "ForEach"

        def ours(name: str) -> bool:
            return name == "f-e" or name.startswith("f-e-")

        status.conditions = {k: v for k, v in status.conditions.items() if not ours(k)}
        status.job_status_list = [r for r in status.job_status_list or [] if not ours(r.name)]
        for field in ("pending_jobs", "running_jobs", "completed_jobs", "failed_jobs"):
            setattr(status, field, [n for n in getattr(status, field) or [] if not ours(n)])
        store.update_status(flow)


@pytest.mark.parametrize(
    ("killed_while", "gate_opens"),
    [
        # 0 and 1 end while no control plane runs: the rerun collects them
        pytest.param((0, 1), "while-down", id="items-0-1-end-while-down"),
        # 0 and 1 still run: the rerun re-adopts them, creates 2 only once one ended
        pytest.param((0, 1), "after-rerun", id="items-0-1-re-adopted"),
        # 0 and 1 completed before the kill, 2 and 3 run
        pytest.param((2, 3), "after-rerun", id="items-2-3-re-adopted"),
        # as items-0-1-re-adopted, with the flow's status holding nothing of the entry
        pytest.param((0, 1), "status-lost", id="items-0-1-found-status-lost"),
    ],
)
def test_a_rerun_after_a_crash_mid_fan_out_creates_no_item_twice(
    tmp_path: Path, killed_while: tuple[int, int], gate_opens: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    step = work / "step.py"
    step.write_text(STEP)
    path = tmp_path / "flow.yaml"
    path.write_text(manifest(step))
    state_dir = tmp_path / "state"
    starts, ends = work / "starts", work / "ends"
    first = spawn(state_dir, path, "--timeout", "60")
    try:
        for index in range(killed_while[0]):  # let the items before them end
            (work / f"gate-{index}").touch()
        made = list(range(killed_while[1] + 1))  # the items started when it is killed
        wait_until(lambda: indexes(starts) == made, f"items {killed_while} to run")
        assert indexes(ends) == list(range(killed_while[0]))
        # parallelism held before the crash: no vcjob of a later item exists yet
        assert list(uids(state_dir)) == [f"f-e-{i}" for i in made]
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=DEADLINE)
        made_before = uids(state_dir)
        running = {index: pid for index, pid, _ in marks(starts) if index in killed_while}
        # the runner's death killed neither item: their processes go on under the pod server
        assert all(alive(pid) for pid in running.values()), running
        if gate_opens == "status-lost":
            forget_the_entry(state_dir)
        if gate_opens == "while-down":
            for index in killed_while:
                (work / f"gate-{index}").touch()
            wait_until(
                lambda: indexes(ends) == made,
                "the running items to end with no control plane",
            )
        second = spawn(state_dir, path, "--timeout", "60")
        output, errors = Output(second.stdout), Output(second.stderr)
        try:
            if gate_opens != "while-down":
                # the rerun sees the two items running (re-adopted) ...
                wait_until(
                    lambda: all(output.has(f"f/e-{i} Running") for i in killed_while),
                    "the rerun to show the running items",
                )
                # ... and, while they run, must create no other item
                time.sleep(0.5)
                assert indexes(starts) == made
                assert list(uids(state_dir)) == [f"f-e-{i}" for i in made]
            (work / "gate").touch()
            second.wait(DEADLINE)
        finally:
            if second.poll() is None:
                second.kill()
                second.wait()
            out, err = output.text(), errors.text()
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
        stop_pods(state_dir)
    assert second.returncode == 0, out + err
    assert "jobflow.flow.volcano.sh/f unchanged" in out
    assert "flow f Succeed" in out
    assert f"{COUNT} items: {COUNT} Completed" in out
    # each item's process ran once: one start line each, ended by that same process
    started, finished = marks(starts), marks(ends)
    assert indexes(starts) == list(range(COUNT)), started
    assert indexes(ends) == list(range(COUNT)), finished
    assert {(i, pid) for i, pid, _ in started} == {(i, pid) for i, pid, _ in finished}
    assert {i: pid for i, pid, _ in started if i in killed_while} == running
    # parallelism held across the crash: never more than 2 items running at once
    assert most_at_once(started, finished) == PARALLELISM
    # no vcjob made twice: those made before the crash are the same objects, and the flow
    # controller created each item's once
    after = uids(state_dir)
    assert sorted(after) == [f"f-e-{i}" for i in range(COUNT)]
    assert {name: after[name] for name in made_before} == made_before
    assert created_events(state_dir) == {f"create a job named f-e-{i}!": 1 for i in range(COUNT)}
    with SqliteStore.in_state_dir(state_dir) as store:
        for i in range(COUNT):
            job = store.get(VCJob, "default", f"f-e-{i}")
            assert job.status is not None, job.metadata.name
            assert job.status.succeeded == 1, job.metadata.name
            assert not job.status.retry_count, job.metadata.name
        flow = store.get(JobFlow, "default", "f")
    assert flow.status is not None and flow.status.phase == "Succeed"
    entry = (flow.status.conditions or {})["f-e"]
    assert (entry.phase, entry.reason) == ("Completed", "ForEach")
    rows = {row.name: row for row in flow.status.job_status_list or []}
    for i in range(COUNT):
        assert rows[f"f-e-{i}"].state == "Completed"
        assert (rows[f"f-e-{i}"].attempt or 1) == 1
