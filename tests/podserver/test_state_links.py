"""The state directory as a trust boundary, against links and planted files (issue 16, item 2):
no state file is written or read through a link, temp files cannot be guessed, a status the
pod's supervisor did not write is rejected, and the pod server runs only pods the control
plane launched — not a planted pod directory, nor one outside pods/."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from tests.runtime.conftest import (
    eventually,
    finished,
    launch_unasked,
    make_runner,
    pod,
    request,
    sh,
    shut_down,
    wait_until,
    write_spec,
)

from vcflow.podserver import podfs, server, statusfile
from vcflow.podserver.supervisor import PodSupervisor
from vcflow.runtime.launch import LaunchError, build_spec, prepare_pod_dir
from vcflow.runtime.pods import PodRunner, UnsafeState

SUCCEEDED = {
    "phase": "Succeeded",
    "startTime": "2026-01-01T00:00:00Z",
    "containerStatuses": [
        {
            "name": "c",
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
        }
    ],
    "vcflow": {"seq": 9, "supervisor": {"pid": 1, "start": None}, "processes": {}},
}


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim"
    path.write_text("precious\n")
    return path


def test_a_planted_status_saying_succeeded_is_rejected(runner: PodRunner, tmp_path: Path) -> None:
    """A status.json planted before the claim completes nothing: the pod is lost (its
    record is not its supervisor's), never runs, and terminating it records its end."""
    trace = tmp_path / "trace"
    handle = launch_unasked(runner, request("forged", pod(sh("c", f"echo run >> {trace}"))))
    (handle.pod_dir / podfs.STATUS).write_text(json.dumps(SUCCEEDED))
    adopted = runner.adopt("ns", "forged")
    assert adopted is not None and adopted.last is not None
    assert (adopted.last.phase, adopted.last.reason) == ("Failed", "SupervisorLost")
    assert adopted.last.lost and "not written by its supervisor" in (adopted.last.message or "")
    runner.terminate(adopted, 0)
    status = wait_until(runner, adopted, lambda s: s.finished and not s.lost)
    assert (status.phase, status.reason) == ("Failed", "SupervisorLost")
    assert not trace.exists()


def test_a_status_copied_from_another_pod_is_rejected(runner: PodRunner, tmp_path: Path) -> None:
    done = runner.launch(request("done", pod(sh("c", "true"))))
    assert finished(runner, done).phase == "Succeeded"
    other = launch_unasked(runner, request("other", pod(sh("c", "true"))))
    shutil.copy(done.pod_dir / podfs.STATUS, other.pod_dir / podfs.STATUS)
    status = other.status()
    assert status.phase == "Failed" and status.lost


def test_a_status_of_another_launch_is_rejected(runner: PodRunner, tmp_path: Path) -> None:
    """A record sealed for this pod directory but written for an earlier launch (its id
    differs) does not speak for this one."""
    first = runner.launch(request("again", pod(sh("c", "true")), uid="u1"))
    assert finished(runner, first).phase == "Succeeded"
    record = (first.pod_dir / podfs.STATUS).read_bytes()
    gate = tmp_path / "gate"
    waits = sh("c", f"while [ ! -e {gate} ]; do sleep 0.01; done")
    second = runner.launch(request("again", pod(waits), uid="u2"))
    try:
        wait_until(runner, second, lambda s: s.phase == "Running")
        (second.pod_dir / "planted").write_bytes(record)
        os.replace(second.pod_dir / "planted", second.pod_dir / podfs.STATUS)
        status = second.status()
        assert status.phase == "Failed" and status.lost
    finally:
        gate.touch()


def test_a_planted_pod_directory_never_runs(runner: PodRunner, tmp_path: Path) -> None:
    """A pods/<ns>/<name>/ with a spec.json the control plane did not seal is refused by the
    pod server's scan (and by a request naming it), and never shows as launched."""
    marker = tmp_path / "ran"
    pod_dir = runner.pod_dir("default", "planted")
    req = request("planted", pod(sh("c", f"touch {marker}")))
    prepare_pod_dir(pod_dir, req)
    spec = build_spec(req, pod_dir)
    (pod_dir / podfs.SPEC).write_text(json.dumps(spec))
    runner._ask("run", pod_dir)  # as if someone wrote the request
    unrelated = runner.launch(request("unrelated", pod(sh("c", "true"))))  # the server scans
    assert finished(runner, unrelated).phase == "Succeeded"
    runner.stop_server()
    log = runner.runtime_dir / server.LOG
    eventually(lambda: "planted: cannot supervise" in log.read_text(), what="refusal logged")
    assert not marker.exists()
    assert not statusfile.claimed(str(pod_dir))
    assert runner.adopt("default", "planted") is None


def test_a_launch_replaces_a_planted_spec_of_its_own_uid(runner: PodRunner, tmp_path: Path) -> None:
    """A spec.json the control plane did not seal is not taken for its launch, even with
    the pod's uid: the directory is made again and the pod's own spec runs."""
    marker, ran = tmp_path / "planted-ran", tmp_path / "ran"
    pod_dir = runner.pod_dir("ns", "mine")
    req = request("mine", pod(sh("c", f"touch {marker}")), uid="u1")
    prepare_pod_dir(pod_dir, req)
    (pod_dir / podfs.SPEC).write_text(json.dumps(build_spec(req, pod_dir)))
    handle = runner.launch(request("mine", pod(sh("c", f"touch {ran}")), uid="u1"))
    assert finished(runner, handle).phase == "Succeeded"
    assert ran.exists() and not marker.exists()


def test_a_request_outside_the_pods_directory_is_refused(runner: PodRunner, tmp_path: Path) -> None:
    """`run <dir>` runs only `<pods>/<namespace>/<name>`: a pod directory elsewhere, even
    with a sealed spec copied into it, is never run."""
    marker = tmp_path / "ran"
    real = launch_unasked(runner, request("real", pod(sh("c", "true"))))
    elsewhere = tmp_path / "elsewhere" / "ns" / "real"
    elsewhere.mkdir(parents=True)
    spec = json.loads((real.pod_dir / podfs.SPEC).read_text())
    spec["containers"][0]["argv"] = ["touch", str(marker)]
    (elsewhere / podfs.SPEC).write_text(json.dumps(spec))
    runner._ask("run", elsewhere)
    assert finished(runner, real).phase == "Succeeded"  # (asked after it: the server read it)
    log = runner.runtime_dir / server.LOG
    eventually(lambda: f"{elsewhere}: refused" in log.read_text(), what="refusal logged")
    assert not marker.exists()


def test_a_linked_pods_directory_is_refused(tmp_path: Path) -> None:
    state, outside = tmp_path / "state", tmp_path / "outside"
    state.mkdir()
    outside.mkdir()
    (state / podfs.PODS).symlink_to(outside)
    with pytest.raises(UnsafeState, match=rf"bad file at {state / podfs.PODS}: a symbolic link"):
        PodRunner(state)
    assert list(outside.iterdir()) == []


def test_a_linked_pod_directory_is_refused(runner: PodRunner, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (runner.pods_dir / "ns").mkdir()
    (runner.pods_dir / "ns" / "linked").symlink_to(outside)
    with pytest.raises(LaunchError, match="a symbolic link, not a directory; remove it"):
        runner.launch(request("linked", pod(sh("c", "true"))))
    assert list(outside.iterdir()) == []


def test_status_temp_files_are_not_written_through_links(tmp_path: Path) -> None:
    """The status temp file's name cannot be guessed, and it is made O_EXCL: a link at the
    old name (`status.json.<pid>.tmp`) is left alone, its target untouched."""
    target = victim(tmp_path)
    req = request("tmp", pod(sh("c", "true")))
    pod_dir = tmp_path / "state" / "pods" / "ns" / "tmp"
    prepare_pod_dir(pod_dir, req)
    write_spec(pod_dir, build_spec(req, pod_dir))
    (pod_dir / f"{podfs.STATUS}.{os.getpid()}.tmp").symlink_to(target)
    me = os.getpid()
    sup = PodSupervisor(str(pod_dir), (me, podfs.process_start(me)), {})
    assert sup.claim()  # (no container started: the test drives it)
    sup.write()
    assert target.read_text() == "precious\n"
    assert statusfile.read(str(pod_dir)) is not None


def test_a_log_link_is_not_appended_to(runner: PodRunner, tmp_path: Path) -> None:
    target = victim(tmp_path)
    handle = launch_unasked(runner, request("log", pod(sh("c", "echo output"))))
    (handle.pod_dir / podfs.log_name("c", 0)).symlink_to(target)
    runner.adopt("ns", "log")  # asks for a supervisor
    status = finished(runner, handle)
    assert status.phase == "Failed"
    assert target.read_text() == "precious\n"


def test_a_linked_event_fifo_or_lock_is_never_followed(tmp_path: Path) -> None:
    """events.fifo is made anew (a link there is removed, its target left alone); a linked
    start.lock is refused, its target never created or truncated."""
    state = tmp_path / "state"
    target = victim(tmp_path)
    (state / podfs.RUNTIME).mkdir(parents=True)
    (state / podfs.RUNTIME / podfs.EVENTS_FIFO).symlink_to(target)
    (state / podfs.RUNTIME / server.START_LOCK).symlink_to(target)
    pods = make_runner(state)
    try:
        assert stat.S_ISFIFO(os.lstat(pods.events).st_mode)
        with pytest.raises(UnsafeState, match=r"start\.lock: a symbolic link"):
            pods.launch(request("p", pod(sh("c", "true"))))
        assert target.read_text() == "precious\n"
    finally:
        pods.close()


def test_fifos_are_made_anew(tmp_path: Path) -> None:
    """A FIFO vcflow did not make is never reused: events.fifo and server.fifo found at
    start are removed and made again."""
    state = tmp_path / "state"
    runtime = state / podfs.RUNTIME
    runtime.mkdir(parents=True)

    def made(name: str) -> tuple[int, int]:
        st = os.lstat(runtime / name)
        return st.st_ino, st.st_ctime_ns  # (an inode number freed is soon used again)

    old = {}
    for name in (podfs.EVENTS_FIFO, server.FIFO):
        os.mkfifo(runtime / name, 0o600)
        old[name] = made(name)
    pods = make_runner(state)
    try:
        handle = pods.launch(request("p", pod(sh("c", "true"))))
        assert finished(pods, handle).phase == "Succeeded"
        for name, before in old.items():
            assert made(name) != before, name
    finally:
        shut_down(pods)


def test_everything_in_the_state_directory_is_owner_only(runner: PodRunner, tmp_path: Path) -> None:
    handle = runner.launch(request("modes", pod(sh("c", "echo hi"))))
    assert finished(runner, handle).phase == "Succeeded"
    runner.remove(handle)
    again = runner.launch(request("modes", pod(sh("c", "echo hi")), uid="u2"))
    assert finished(runner, again).phase == "Succeeded"
    runner.terminate(again, 0)  # (a terminate file too)
    seen = []
    for root, dirs, files in os.walk(runner.state_dir):
        for name in dirs + files:
            path = Path(root) / name
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            seen.append(path.name)
            wanted = 0o700 if path.is_dir() else 0o600
            assert mode == wanted, f"{path}: {mode:04o}"
    assert {"spec.json", "status.json", "c.0.log", "launch.key", "terminate"} <= set(seen)
    assert {"server.log", "server.fifo", "events.fifo", "attempt.json"} <= set(seen)
