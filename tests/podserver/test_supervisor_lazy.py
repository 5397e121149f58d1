"""A container process's start time (what tells a reaper a reused pid) is read when a status
first records the process: a container that ends before costs no /proc read, one that ended
but is not reaped yet is recorded with its own start time, and a long-running one is
recorded, terminated, adopted and reaped as before."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.runtime.conftest import (
    eventually,
    make_runner,
    pod,
    request,
    sh,
    shut_down,
    wait_until,
    write_spec,
)

from vcflow.podserver import descendants, podfs, statusfile
from vcflow.podserver.supervisor import COALESCE, PodSupervisor
from vcflow.runtime.launch import build_spec, prepare_pod_dir

LOOP = "while :; do sleep 0.01; done"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids whose start time is read from now on."""
    read: list[int] = []
    real = podfs.process_start

    def counting(pid: int, **options: bool) -> int | None:
        read.append(pid)
        return real(pid, **options)

    monkeypatch.setattr(podfs, "process_start", counting)
    return read


@pytest.fixture
def supervisor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., PodSupervisor]]:
    """Claims a pod to supervise in this process (driven by the test, not by a `Loop`); what
    still runs at the end is killed and reaped. The test's working directory is restored
    after: a supervisor spawns from its pod directory and stays there, as the pod server
    does, and the tests after this one must not start in a removed pod directory."""
    monkeypatch.chdir(tmp_path)
    made: list[PodSupervisor] = []

    def claimed(*containers: dict[str, Any]) -> PodSupervisor:
        req = request("lazy", pod(*containers))
        pod_dir = tmp_path / "pods" / "ns" / "lazy"
        prepare_pod_dir(pod_dir, req)
        write_spec(pod_dir, build_spec(req, pod_dir))
        me = os.getpid()
        sup = PodSupervisor(str(pod_dir), (me, podfs.process_start(me)), {})
        assert sup.claim()
        made.append(sup)
        return sup

    yield claimed
    for sup in made:
        for c in sup.running():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(c.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(c.pid, 0)


def status(pod_dir: Path | str) -> dict[str, Any]:
    raw = podfs.read_json(os.path.join(pod_dir, podfs.STATUS))
    assert isinstance(raw, dict)
    return raw


def processes(pod_dir: Path | str) -> dict[str, Any]:
    """The processes the status records ({} before the claim)."""
    raw = podfs.read_json(os.path.join(pod_dir, podfs.STATUS)) or {}
    return dict(raw.get("vcflow", {}).get("processes", {}))


def reap(sup: PodSupervisor, pid: int) -> None:
    _, wait_status = os.waitpid(pid, 0)
    now = time.monotonic()
    sup.exited(pid, wait_status, now)
    sup.step(now)


def proc_start(pid: int) -> int:
    """/proc/<pid>/stat field 22, read here (a zombie's too)."""
    data = Path(f"/proc/{pid}/stat").read_bytes()
    return int(data[data.rindex(b")") + 2 :].split()[19])


@pytest.mark.optimisation
def test_a_container_that_ends_before_a_status_records_it_costs_no_read(
    supervisor: Callable[..., PodSupervisor], reads: list[int]
) -> None:
    sup = supervisor({"name": "c", "command": ["true"]})
    sup.step(time.monotonic())
    pid = sup.mains[0].pid
    reap(sup, pid)
    assert sup.finished
    raw = status(sup.dir)
    assert raw["phase"] == "Succeeded"
    assert raw["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    assert raw["vcflow"]["processes"] == {}
    assert pid not in reads


def test_a_container_ended_but_not_reaped_is_recorded_with_its_own_start(
    supervisor: Callable[..., PodSupervisor],
) -> None:
    sup = supervisor({"name": "c", "command": ["true"]})
    now = time.monotonic()
    sup.step(now)
    pid = sup.mains[0].pid
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # it ended; not reaped: a zombie
    assert podfs.process_start(pid) is None  # how anyone else sees a zombie
    sup.step(now + COALESCE)  # the status write that records it
    assert processes(sup.dir) == {"c": {"pid": pid, "start": proc_start(pid)}}
    reap(sup, pid)
    assert status(sup.dir)["phase"] == "Succeeded"
    assert processes(sup.dir) == {}


def test_a_long_running_container_is_recorded_then_terminated(
    supervisor: Callable[..., PodSupervisor], reads: list[int]
) -> None:
    sup = supervisor(sh("c", LOOP))
    now = time.monotonic()
    sup.step(now)
    pid = sup.mains[0].pid
    assert pid not in reads  # not as it starts
    sup.step(now + COALESCE)
    assert processes(sup.dir) == {"c": {"pid": pid, "start": proc_start(pid)}}
    assert reads.count(pid) == 1
    (Path(sup.dir) / podfs.TERMINATE).write_text("0")
    sup.check_terminate()
    sup.step(now + 2 * COALESCE)
    reap(sup, pid)
    raw = status(sup.dir)
    assert (raw["phase"], raw["reason"]) == ("Failed", "Terminated")
    assert raw["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    assert reads.count(pid) == 1


def alive(pid: int) -> bool:
    return podfs.process_start(pid) is not None


def out_of_its_cgroup(pid: int) -> None:
    """Move `pid` to this process's cgroup, out of its container's (`descendants`), where
    the next pod server would end it with the rest of the lost pod."""
    home = descendants._own_cgroup()
    if home is not None:
        with contextlib.suppress(OSError):
            Path(home, "cgroup.procs").write_text(str(pid))


def test_recorded_start_times_adopt_and_reap_and_spare_a_reused_pid(tmp_path: Path) -> None:
    """Through the pod server: a short and two long containers; after a control-plane
    restart the pod is adopted; after the server dies, the reaper kills what the status
    recorded, but not a pid whose start time differs (as if reused by another process)."""
    state = tmp_path / "state"
    pods = make_runner(state)
    spared: list[int] = []
    try:
        handle = pods.launch(
            request("mixed", pod(sh("short", "true"), sh("a", LOOP), sh("b", LOOP)))
        )
        eventually(lambda: {"a", "b"} <= set(processes(handle.pod_dir)), what="a, b recorded")
        short = wait_until(pods, handle, lambda s: s.containers[0].state == "terminated")
        assert short.containers[0].exit_code == 0
        recorded = processes(handle.pod_dir)
        for name in ("a", "b"):
            assert recorded[name]["start"] == proc_start(recorded[name]["pid"])
        pods.close()
        pods = make_runner(state)  # the control plane, restarted
        adopted = pods.adopt("ns", "mixed")
        assert adopted is not None
        assert (adopted.status().phase, adopted.status().supervisor_alive) == ("Running", True)
        os.kill(status(handle.pod_dir)["vcflow"]["supervisor"]["pid"], signal.SIGKILL)
        wait_until(pods, adopted, lambda s: s.lost)
        raw = status(handle.pod_dir)
        raw["vcflow"]["processes"]["b"]["start"] += 1
        spared.append(recorded["b"]["pid"])
        out_of_its_cgroup(spared[0])  # (as another process, which a reused pid is)
        statusfile.write(str(handle.pod_dir), raw)
        pods.terminate(adopted, 0.2)
        ended = wait_until(pods, adopted, lambda s: s.finished and not s.lost)
        assert (ended.phase, ended.reason) == ("Failed", "SupervisorLost")
        eventually(lambda: not alive(recorded["a"]["pid"]), what="a was killed")
        assert alive(spared[0])  # not the recorded process, by its start time: spared
    finally:
        for pid in spared:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        shut_down(pods)
