"""Who runs the controllers on a state directory: `controller.lock` (flock), writers that
leave the reconciling to the holder, and `vcflow controller` as a real process."""

from __future__ import annotations

import fcntl
import os
import signal
from pathlib import Path

import pytest

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.local import statedir
from vcflow.store import SqliteStore

from .conftest import EXAMPLE, Vc
from .flows import DEADLINE, cli, started, wait_until


def test_flock_conflicts_between_open_files_of_one_process(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    first = os.open(path, os.O_RDWR | os.O_CREAT)
    second = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(BlockingIOError):
            fcntl.flock(second, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(first)
        os.close(second)
    with statedir.ControllerLock(tmp_path) as one, statedir.ControllerLock(tmp_path) as two:
        assert (one.acquired, two.acquired) == (True, False)


def test_holder_is_written_and_cleared(state_dir: Path) -> None:
    lock = statedir.ControllerLock(statedir.resolve(state_dir), statedir.CONTROLLER)
    with lock:
        other = statedir.ControllerLock(state_dir)
        assert other.holder() == (os.getpid(), statedir.CONTROLLER)
    assert other.holder() == (None, "")


def test_writer_leaves_reconciling_to_the_holder(vc: Vc, state_dir: Path) -> None:
    with statedir.ControllerLock(statedir.resolve(state_dir), statedir.CONTROLLER) as held:
        assert held.acquired
        result = vc("apply", "-f", EXAMPLE)
        assert result.exit_code == 0, result.output
        store = SqliteStore.in_state_dir(state_dir)
        try:
            assert store.get(JobFlow, "default", "test").status is None
            assert store.list(VCJob) == []
        finally:
            store.close()
    again = vc("apply", "-f", EXAMPLE)  # nothing to write, but the controllers run now
    assert "created" not in again.stdout
    assert "test-a" in vc("get", "vj").stdout


def test_reconcile_reports_whether_it_ran(store: SqliteStore, state_dir: Path) -> None:
    assert statedir.reconcile(store, state_dir) is True
    with statedir.ControllerLock(state_dir):
        assert statedir.reconcile(store, state_dir) is False


def test_controller_fails_at_once_when_a_controller_holds_the_lock(state_dir: Path) -> None:
    def never(seconds: float) -> None:
        raise AssertionError("must not wait for another controller")

    with statedir.ControllerLock(statedir.resolve(state_dir), statedir.CONTROLLER):
        lock = statedir.ControllerLock(state_dir, statedir.CONTROLLER)
        with pytest.raises(statedir.LockHeld, match=f"process {os.getpid()} already runs"):
            statedir.acquire_for_controller(lock, patience=60, sleep=never)
        lock.release()


def test_controller_waits_for_a_settling_writer(state_dir: Path) -> None:
    writer = statedir.ControllerLock(statedir.resolve(state_dir), statedir.WRITER)
    assert writer.try_acquire()
    lock = statedir.ControllerLock(state_dir, statedir.CONTROLLER)
    statedir.acquire_for_controller(lock, sleep=lambda seconds: writer.release())
    assert lock.acquired
    lock.release()


def test_controller_gives_up_on_a_writer_after_its_patience(state_dir: Path) -> None:
    with statedir.ControllerLock(statedir.resolve(state_dir), statedir.WRITER):
        lock = statedir.ControllerLock(state_dir, statedir.CONTROLLER)
        with pytest.raises(statedir.LockHeld):
            statedir.acquire_for_controller(lock, patience=-1)
        lock.release()


def test_controller_process(state_dir: Path, store: SqliteStore) -> None:
    controller = started(state_dir, "controller")
    lock = statedir.ControllerLock(state_dir)
    try:
        wait_until(lambda: lock.holder() == (controller.pid, "controller"), "the controller")
        second = cli(state_dir, "controller")
        assert second.returncode == 1
        assert second.stdout == ""
        assert second.stderr.count("\n") == 1
        assert f"process {controller.pid} already runs them" in second.stderr

        apply = started(state_dir, "apply", "-f", str(EXAMPLE))
        out, err = apply.communicate(timeout=DEADLINE)
        assert apply.returncode == 0, err
        assert "jobflow.flow.volcano.sh/test created" in out
        wait_until(lambda: [j.name for j in store.list(VCJob)] == ["test-a"], "test-a")
    finally:
        controller.send_signal(signal.SIGTERM)
        out, err = controller.communicate(timeout=DEADLINE)
    assert controller.returncode == 0, err
    assert out.startswith(f"vcflow controller: reconciling {state_dir} (pid {controller.pid})")
    assert err == ""
    assert lock.holder() == (None, "")
