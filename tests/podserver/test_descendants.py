"""A container's processes end with it, also those that left its process group (`setsid`,
`setpgid`, a daemon's double fork): when it exits, when its pod is terminated, and when the
run is Ctrl-C'd — by a cgroup per container run where one can be made, else by the pod
server as a child subreaper (`descendants`). Real processes throughout."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.runtime.conftest import (
    eventually,
    finished,
    make_runner,
    pod,
    request,
    shut_down,
    wait_until,
)

from vcflow.podserver import podfs, server
from vcflow.podserver.descendants import CGROUP, SUBREAPER, Descendants
from vcflow.runtime.pods import PodRunner

ESCAPE = """
import os, sys, time
how, mark, then = sys.argv[1], sys.argv[2], float(sys.argv[3])
pid = os.fork()
if pid == 0:
    if how == "setpgid":
        os.setpgid(0, 0)
    else:
        os.setsid()
    if how == "daemon" and os.fork():
        os._exit(0)
    os.execvp("sleep", ["sleep", mark])
if how == "daemon":
    os.waitpid(pid, 0)
time.sleep(then)
"""
HOW = ["setsid", "setpgid", "daemon"]


def cgroups_here() -> bool:
    found = Descendants(cgroups=True, subreaper=False)
    try:
        return found.mode == CGROUP
    finally:
        found.close()


MODES = [
    pytest.param(
        CGROUP,
        marks=pytest.mark.skipif(not cgroups_here(), reason="cgroup v2 not writable here"),
    ),
    SUBREAPER,
]


@pytest.fixture(params=MODES)
def mode_runner(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, PodRunner]]:
    """A runner whose pod server ends descendants by cgroup or as a subreaper."""
    mode = request.param
    if mode == SUBREAPER:
        monkeypatch.setenv("VCFLOW_CGROUPS", "0")  # (the pod server's environment)
    runner = make_runner(tmp_path / "state")
    yield mode, runner
    shut_down(runner)


@pytest.fixture
def mark(request: pytest.FixtureRequest) -> Iterator[str]:
    """The argument of a `sleep` only this test starts; whatever is left is killed after."""
    text = f"300.{abs(hash(request.node.nodeid)) % 10**6:06d}"
    yield text
    for pid in sleeping(text):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def sleeping(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
                if argv[:2] == [b"sleep", mark.encode()] and state != b"Z":
                    found.append(int(entry.name))
    return found


def escaping(how: str, mark: str, then: float) -> dict[str, object]:
    return {"name": "c", "command": [sys.executable, "-c", ESCAPE, how, mark, str(then)]}


def by(runner: PodRunner, mode: str) -> None:
    log = (runner.runtime_dir / server.LOG).read_text()
    assert f"processes end with it by {mode}" in log


@pytest.mark.parametrize("how", HOW)
def test_what_a_container_left_ends_when_it_exits(
    mode_runner: tuple[str, PodRunner], mark: str, how: str
) -> None:
    mode, runner = mode_runner
    handle = runner.launch(request("left", pod(escaping(how, mark, 0.5))))
    eventually(lambda: bool(sleeping(mark)), what="the escaped process started")
    status = finished(runner, handle)
    assert (status.phase, status.exit_code) == ("Succeeded", 0)
    eventually(lambda: not sleeping(mark), timeout=5, what=f"the {how} process ended")
    by(runner, mode)


@pytest.mark.parametrize("how", HOW)
def test_what_a_terminated_pod_started_ends_with_it(
    mode_runner: tuple[str, PodRunner], mark: str, how: str
) -> None:
    mode, runner = mode_runner
    handle = runner.launch(request("stopped", pod(escaping(how, mark, 300))))
    eventually(lambda: bool(sleeping(mark)), what="the escaped process started")
    wait_until(runner, handle, lambda s: s.phase == "Running")
    runner.terminate(handle, 0.2)
    status = finished(runner, handle)
    assert (status.phase, status.reason) == ("Failed", "Terminated")
    eventually(lambda: not sleeping(mark), timeout=5, what=f"the {how} process ended")
    by(runner, mode)


def test_a_daemon_lives_while_its_container_runs(
    mode_runner: tuple[str, PodRunner], mark: str
) -> None:
    """Ended with its container, not before (it double-forked away while it ran)."""
    _mode, runner = mode_runner
    other = runner.launch(request("other", pod(escaping("setsid", mark + "1", 300))))
    handle = runner.launch(request("daemon", pod(escaping("daemon", mark, 2.5))))
    eventually(lambda: bool(sleeping(mark)), what="the daemon started")
    daemon = sleeping(mark)
    time.sleep(1.5)  # (past a subreaper's look at /proc)
    assert sleeping(mark) == daemon
    finished(runner, handle)
    eventually(lambda: not sleeping(mark), timeout=5, what="the daemon ended")
    assert sleeping(mark + "1")  # (another pod's is not touched)
    runner.terminate(other, 0)
    finished(runner, other)
    eventually(lambda: not sleeping(mark + "1"), timeout=5, what="the other pod's ended")


def test_nothing_of_a_container_is_left_in_the_cgroups(tmp_path: Path, mark: str) -> None:
    """The cgroups made for the containers go with them (and the pod server's with it)."""
    if not cgroups_here():
        pytest.skip("cgroup v2 not writable here")
    runner = make_runner(tmp_path / "state", server_idle=0.5)
    try:
        handle = runner.launch(request("tidy", pod(escaping("setsid", mark, 0.2))))
        finished(runner, handle)
        log = runner.runtime_dir / server.LOG
        eventually(lambda: "processes end with it by cgroup" in log.read_text())
        server_pid = int(log.read_text().split("vcflow supervisor ")[1].split(":")[0])
        eventually(lambda: not podfs.same_process(server_pid, None), what="the server exited")
        found = Descendants(cgroups=True, subreaper=False)
        home = found.home
        found.close()
        assert home is not None
        assert not os.path.exists(os.path.join(home, f"vcflow-{server_pid}"))
    finally:
        shut_down(runner)


def test_a_dead_servers_containers_end_when_the_next_server_starts(
    tmp_path: Path, mark: str
) -> None:
    """The pod server SIGKILLed: its pods are SupervisorLost, and what their containers left
    outside their process groups ends too (the reaper knows only the groups)."""
    if not cgroups_here():
        pytest.skip("cgroup v2 not writable here")
    runner = make_runner(tmp_path / "state")
    try:
        handle = runner.launch(request("lost", pod(escaping("setsid", mark, 300))))
        eventually(lambda: bool(sleeping(mark)), what="the escaped process started")
        log = runner.runtime_dir / server.LOG
        server_pid = int(log.read_text().split("vcflow supervisor ")[1].split(":")[0])
        os.kill(server_pid, signal.SIGKILL)
        eventually(lambda: not podfs.same_process(server_pid, None), what="the server died")
        runner.terminate(handle, 0)  # (lost: a reaper, in a new pod server)
        status = finished(runner, handle)
        assert status.reason == "SupervisorLost"
        eventually(lambda: not sleeping(mark), timeout=5, what="the escaped process ended")
    finally:
        shut_down(runner)
