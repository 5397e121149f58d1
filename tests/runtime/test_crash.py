"""Crash safety: exactly-once launch, re-adoption after the control plane dies (SIGKILL
included), a dead supervisor reported as SupervisorLost and reaped, exec mode, removal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vcflow.podserver import podfs
from vcflow.runtime.launch import LaunchError
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.status import adopt

from .conftest import (
    eventually,
    finished,
    launch_unasked,
    make_runner,
    pod,
    request,
    sh,
    shut_down,
    wait_until,
)


def gated(trace: Path, gate: Path) -> dict[str, object]:
    """A pod that records each run in `trace`, then waits for `gate`."""
    return pod(sh("c", f"echo run >> {trace}; while [ ! -e {gate} ]; do sleep 0.01; done"))


def runs(trace: Path) -> int:
    return len(trace.read_text().split()) if trace.exists() else 0


def alive(pid: int) -> bool:
    return podfs.process_start(pid) is not None


def test_launch_twice_runs_once(runner: PodRunner, tmp_path: Path) -> None:
    trace, gate = tmp_path / "trace", tmp_path / "gate"
    first = runner.launch(request("once", gated(trace, gate)))
    second = runner.launch(request("once", gated(trace, gate)))
    assert second.pod_dir == first.pod_dir
    wait_until(runner, first, lambda s: s.phase == "Running")
    again = make_runner(runner.state_dir)  # another control plane, after a restart
    again.launch(request("once", gated(trace, gate)))
    gate.touch()
    assert finished(runner, first).phase == "Succeeded"
    runner.launch(request("once", gated(trace, gate)))  # ended: still not started again
    again.close()
    assert runs(trace) == 1


def test_a_launch_that_died_before_asking_runs_once(runner: PodRunner, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    handle = launch_unasked(runner, request("orphan", pod(sh("c", f"echo run >> {trace}"))))
    adopted = runner.adopt("ns", "orphan")
    assert adopted is not None
    runner.adopt("ns", "orphan")  # asks again: the claim keeps it to one run
    assert finished(runner, handle).phase == "Succeeded"
    assert runs(trace) == 1


def test_wait_asks_again_for_an_unclaimed_pod(tmp_path: Path) -> None:
    pods = make_runner(tmp_path / "state", claim_timeout=0.2)
    try:
        handle = launch_unasked(pods, request("late", pod(sh("c", "true"))))
        assert finished(pods, handle).phase == "Succeeded"
    finally:
        shut_down(pods)


def test_adopt_after_the_control_plane_is_gone(runner: PodRunner, tmp_path: Path) -> None:
    trace, gate = tmp_path / "trace", tmp_path / "gate"
    handle = runner.launch(request("adopted", gated(trace, gate)))
    wait_until(runner, handle, lambda s: s.phase == "Running")
    runner.close()
    del handle
    restarted = make_runner(runner.state_dir)
    try:
        (again,) = restarted.adopt_all()
        assert (again.namespace, again.name) == ("ns", "adopted")
        status = again.status()
        assert (status.phase, status.supervisor_alive) == ("Running", True)
        gate.touch()
        assert finished(restarted, again).phase == "Succeeded"
        assert restarted.adopt("ns", "missing") is None
        assert runs(trace) == 1
    finally:
        shut_down(restarted)


CONTROL_PLANE = """
import sys, time
from pathlib import Path
from vcflow.api.vcjob import PodSpec
from vcflow.runtime.launch import PodRequest
from vcflow.runtime.pods import PodRunner

state, trace, gate = sys.argv[1:4]
runner = PodRunner(Path(state), server_idle=5)
script = f"echo run >> {trace}; while [ ! -e {gate} ]; do sleep 0.01; done"
spec = PodSpec.from_dict(
    {"restartPolicy": "Never", "containers": [{"name": "c", "command": ["sh", "-c", script]}]}
)
runner.launch(PodRequest("ns", "survivor", spec))
print("launched", flush=True)
time.sleep(60)
"""


def test_pods_survive_a_sigkilled_control_plane(tmp_path: Path) -> None:
    state, trace, gate = tmp_path / "state", tmp_path / "trace", tmp_path / "gate"
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CONTROL_PLANE), str(state), str(trace), str(gate)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "launched\n"
    proc.kill()
    proc.wait()
    proc.stdout.close()
    pods = make_runner(state)
    try:
        handle = pods.adopt("ns", "survivor")
        assert handle is not None
        wait_until(pods, handle, lambda s: s.phase == "Running")
        assert handle.status().supervisor_alive
        gate.touch()
        assert finished(pods, handle).phase == "Succeeded"
        assert runs(trace) == 1
    finally:
        shut_down(pods)


def supervisor_pid(pod_dir: Path) -> int:
    raw = podfs.read_json(str(pod_dir / podfs.STATUS))
    return int(raw["vcflow"]["supervisor"]["pid"])


def container_pid(pod_dir: Path, name: str = "c") -> int:
    raw = podfs.read_json(str(pod_dir / podfs.STATUS))
    return int(raw["vcflow"]["processes"][name]["pid"])


@pytest.mark.parametrize("mode", ["server", "exec"])
def test_sigkilled_supervisor_is_lost_then_reaped(tmp_path: Path, mode: str) -> None:
    pods = make_runner(tmp_path / "state", mode=mode)
    try:
        handle = pods.launch(request("lost", pod(sh("c", "while :; do sleep 0.01; done"))))
        wait_until(pods, handle, lambda s: s.phase == "Running" and bool(s.wire))
        eventually(
            lambda: (
                "c" in podfs.read_json(str(handle.pod_dir / podfs.STATUS))["vcflow"]["processes"]
            )
        )
        sup, child = supervisor_pid(handle.pod_dir), container_pid(handle.pod_dir)
        os.kill(sup, signal.SIGKILL)
        status = wait_until(pods, handle, lambda s: s.lost)
        assert (status.phase, status.reason) == ("Failed", "SupervisorLost")
        assert "supervisor" in (status.message or "")
        assert alive(child)  # nothing killed it yet
        pods.terminate(handle, 0.2)
        status = wait_until(pods, handle, lambda s: s.finished and not s.lost)
        assert (status.phase, status.reason) == ("Failed", "SupervisorLost")
        c = status.containers[0]
        assert (c.exit_code, c.reason) == (137, "ContainerStatusUnknown")
        eventually(lambda: not alive(child), what="the orphaned container was killed")
    finally:
        shut_down(pods)


def test_exec_mode_runs_and_terminates(tmp_path: Path) -> None:
    pods = make_runner(tmp_path / "state", mode="exec")
    try:
        ok = pods.launch(request("ok", pod(sh("c", "exit 0"))))
        looping = pods.launch(request("loop", pod(sh("c", "while :; do sleep 0.01; done"))))
        assert finished(pods, ok).phase == "Succeeded"
        wait_until(pods, looping, lambda s: s.phase == "Running")
        pods.terminate(looping, 0.2)
        assert finished(pods, looping).reason == "Terminated"
        assert (ok.pod_dir / podfs.SUPERVISOR_LOG).exists()
    finally:
        shut_down(pods)


def test_server_exits_when_idle(tmp_path: Path) -> None:
    pods = make_runner(tmp_path / "state", server_idle=0.2)
    try:
        handle = pods.launch(request("quick", pod(sh("c", "true"))))
        sup = supervisor_pid(handle.pod_dir) if finished(pods, handle) else 0
        eventually(lambda: (pods._reap_children(), not alive(sup))[1], what="server exit")
        second = pods.launch(request("again", pod(sh("c", "true"))))  # starts a new server
        assert finished(pods, second).phase == "Succeeded"
        assert supervisor_pid(second.pod_dir) != sup
    finally:
        shut_down(pods)


def test_remove_and_launch_again(runner: PodRunner, tmp_path: Path) -> None:
    trace, gate = tmp_path / "trace", tmp_path / "gate"
    handle = runner.launch(request("re", gated(trace, gate), uid="u1"))
    wait_until(runner, handle, lambda s: s.phase == "Running")
    with pytest.raises(LaunchError, match="has not ended"):
        runner.remove(handle)
    with pytest.raises(LaunchError, match="other uid"):
        runner.launch(request("re", gated(trace, gate), uid="u2"))
    gate.touch()
    finished(runner, handle)
    replaced = runner.launch(request("re", gated(trace, gate), uid="u2"))  # a new pod
    assert finished(runner, replaced).phase == "Succeeded"
    runner.remove(replaced)
    assert adopt(replaced.pod_dir) is None
    third = runner.launch(request("re", gated(trace, gate), uid="u2"))
    assert finished(runner, third).phase == "Succeeded"
    assert runs(trace) == 3


def test_wait_times_out_without_changes(runner: PodRunner, tmp_path: Path) -> None:
    handle = runner.launch(request("quiet", gated(tmp_path / "t", tmp_path / "gate")))
    wait_until(runner, handle, lambda s: s.phase == "Running")
    runner.wait([handle], 0.3)  # the Running write may still be reported
    started = time.monotonic()
    assert runner.wait([handle], 0.3) == []
    assert 0.3 <= time.monotonic() - started < 2


def test_a_status_file_cut_short_by_an_os_crash_ends_the_pod_lost(
    runner: PodRunner, tmp_path: Path
) -> None:
    """An empty status.json (an OS crash after the claim, before its data reached the disk)
    is not taken as 'not claimed yet' (the pod would wait forever, as the claim exists): the
    pod is lost, never started, and terminating it records its end."""
    trace = tmp_path / "trace"
    handle = launch_unasked(runner, request("cut", pod(sh("c", f"echo run >> {trace}"))))
    (handle.pod_dir / podfs.STATUS).write_bytes(b"")
    adopted = runner.adopt("ns", "cut")
    assert adopted is not None and adopted.last is not None
    assert (adopted.last.phase, adopted.last.reason) == ("Failed", "SupervisorLost")
    assert adopted.last.lost and "unreadable" in (adopted.last.message or "")
    runner.terminate(adopted, 0)
    status = wait_until(runner, adopted, lambda s: s.finished and not s.lost)
    assert (status.phase, status.reason) == ("Failed", "SupervisorLost")
    assert "unreadable" in (status.message or "")
    assert runs(trace) == 0
