"""The state directory as a trust boundary, against another user (issue 16, item 1): a state
directory, FIFO, lock or pod directory that another uid owns or can write is refused in one
line naming the path and the fix, and what another uid planted never runs. The other user is
uid 65534 (`nobody`), acting in child processes; the tests need root to be two users."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.runtime.conftest import (
    eventually,
    finished,
    make_runner,
    pod,
    request,
    sh,
    shut_down,
    write_spec,
)

from vcflow.podserver import podfs, server
from vcflow.runtime.launch import LaunchError, build_spec
from vcflow.runtime.pods import PodRunner, UnsafeState

NOBODY = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="acting as a second uid needs root")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory both users can create entries in (as /tmp)."""
    path = Path(tempfile.mkdtemp(prefix="vcflow-owners-"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_nobody(script: str) -> None:
    """Run a shell script as uid 65534; it must succeed."""
    done = subprocess.run(
        ["sh", "-ec", script],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr


def test_a_state_directory_another_user_owns_is_refused(shared: Path) -> None:
    state = shared / "state"
    as_nobody(f"mkdir {state}")
    with pytest.raises(UnsafeState) as refused:
        PodRunner(state)
    assert str(refused.value) == (
        f"bad owner of {state}: uid {NOBODY} owns it, not you (uid 0); remove it, or run "
        "vcflow as its owner"
    )
    assert list(state.iterdir()) == []


def test_a_state_directory_others_can_write_is_refused(shared: Path) -> None:
    state = shared / "state"
    state.mkdir(mode=0o700)
    state.chmod(0o777)
    with pytest.raises(UnsafeState) as refused:
        PodRunner(state)
    assert str(refused.value) == (
        f"bad permissions on {state}: writable by group or others (mode 0777); chmod 700 {state}"
    )
    assert list(state.iterdir()) == []


def test_another_users_server_fifo_is_never_used(shared: Path) -> None:
    """The audit's attack: in a state directory whose runtime/ others could write, another
    user made server.fifo and waited to write `run` of its own pod directory into it. Each
    step is refused, saying what to do, and the other user's pod never runs."""
    state, evil = shared / "state", shared / "evil" / "ns" / "pod"
    marker = shared / "evil" / "ran"
    state.mkdir(mode=0o711)
    for name in (podfs.RUNTIME, podfs.PODS):
        (state / name).mkdir()
        (state / name).chmod(0o777)
    fifo = state / podfs.RUNTIME / server.FIFO
    spec = {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "argv": ["touch", str(marker)], "env": {}, "workingDir": "/"}],
    }
    as_nobody(
        f"mkfifo -m 666 {fifo}; mkdir -p {evil}; chmod -R a+rwx {shared / 'evil'}; "
        f"printf '%s' '{json.dumps(spec)}' > {evil / podfs.SPEC}"
    )
    writer = subprocess.Popen(
        ["sh", "-c", f"echo 'run {evil}' > {fifo}"], user=NOBODY, group=NOBODY, extra_groups=[]
    )
    try:
        with pytest.raises(UnsafeState, match=rf"bad permissions on {state / podfs.PODS}: "):
            PodRunner(state)
        for name in (podfs.RUNTIME, podfs.PODS):
            (state / name).chmod(0o700)  # the fix the message gives
        pods = make_runner(state)
        try:
            with pytest.raises(UnsafeState) as refused:
                pods.launch(request("p", pod(sh("c", "true"))))
            assert str(refused.value).startswith(f"bad owner of {fifo}: uid {NOBODY} owns it")
            fifo.unlink()  # "remove it"
            handle = pods.launch(request("p", pod(sh("c", "true"))))
            assert finished(pods, handle).phase == "Succeeded"
        finally:
            shut_down(pods)
        assert not marker.exists()
    finally:
        writer.kill()
        writer.wait()


def test_another_users_event_fifo_is_refused(shared: Path) -> None:
    state = shared / "state"
    (state / podfs.RUNTIME).mkdir(parents=True)
    (state / podfs.RUNTIME).chmod(0o777)
    events = state / podfs.RUNTIME / podfs.EVENTS_FIFO
    as_nobody(f"mkfifo -m 666 {events}")
    (state / podfs.RUNTIME).chmod(0o700)
    with pytest.raises(UnsafeState, match=f"bad owner of {events}: uid {NOBODY}"):
        PodRunner(state)


def test_a_namespace_directory_another_user_made_is_refused(shared: Path) -> None:
    """Made while pods/ was open to everyone, pods/<ns>/ would let its owner swap pod
    directories: a launch into it is refused, naming it."""
    state = shared / "state"
    pods_dir = state / podfs.PODS
    pods_dir.mkdir(parents=True)
    pods_dir.chmod(0o777)
    as_nobody(f"mkdir {pods_dir / 'ns'}")
    pods_dir.chmod(0o700)
    runner = make_runner(state)
    try:
        with pytest.raises(LaunchError, match=f"bad owner of {pods_dir / 'ns'}: uid {NOBODY}"):
            runner.launch(request("p", pod(sh("c", "true"))))
    finally:
        shut_down(runner)


def test_the_pod_server_refuses_a_pod_directory_another_user_owns(shared: Path) -> None:
    """Even with a spec.json sealed by the control plane in it, a pod directory of another
    user is not run: that user could change what is in it."""
    state = shared / "state"
    marker = shared / "ran"
    runner = make_runner(state)
    ns = runner.pods_dir / "ns"
    try:
        ns.mkdir(mode=0o777)
        ns.chmod(0o777)
        pod_dir = ns / "theirs"
        runner.state_dir.chmod(0o711)
        runner.pods_dir.chmod(0o711)
        as_nobody(f"mkdir {pod_dir}")
        ns.chmod(0o700)
        req = request("theirs", pod(sh("c", f"touch {marker}")))
        write_spec(pod_dir, build_spec(req, pod_dir, notify=runner.events))
        assert runner.adopt("ns", "theirs") is not None  # (asks the pod server to run it)
        log = runner.runtime_dir / server.LOG
        eventually(
            lambda: log.exists() and f"bad owner of {pod_dir}: uid {NOBODY}" in log.read_text(),
            what="refusal logged",
        )
        assert not marker.exists()
    finally:
        shutil.rmtree(ns / "theirs", ignore_errors=True)
        shut_down(runner)
