"""A full disk under the pods (a small tmpfs, as root): a pod that cannot be launched fails
saying `no space left on device: <path>` — its job and flow end Failed rather than the run
crashing with them Running — a status the full disk refuses is written once there is
room rather than forgotten (the pod would show Running for ever), and a log that cannot be
rotated stays whole."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.flows import flow, template
from tests.runtime.conftest import (
    eventually,
    finished,
    make_runner,
    pod,
    request,
    sh,
    shut_down,
    wait_until,
)

from vcflow.api.jobflow import JobFlow
from vcflow.podserver import logrotate, server
from vcflow.podserver.logrotate import Limits
from vcflow.store import SqliteStore


def mounted(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.fixture
def small_pods(tmp_path: Path) -> Iterator[Path]:
    """`<state>/pods` on a 256 KiB tmpfs (skipped where this process cannot mount one)."""
    pods = tmp_path / "state" / "pods"
    if os.geteuid() != 0 or not mounted(pods, "256k"):
        pytest.skip("mounting a tmpfs needs root")
    yield pods
    subprocess.run(["umount", "-l", str(pods)], check=False)


def fill(directory: Path) -> Path:
    """Write zeros into `directory` until its file system is full; the file written."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)
    return filler


def test_a_pod_without_room_to_launch_fails_saying_so(small_pods: Path, tmp_path: Path) -> None:
    fill(small_pods)
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(
        template("a", container="c", image="", command='["true"]') + flow("f", "{name: a}")
    )
    state = tmp_path / "state"
    command = ["--state-dir", str(state), "run", "-f", str(manifest), "--no-live"]
    done = subprocess.run(
        [sys.executable, "-m", "vcflow", *command, "--timeout", "60"],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "internal error" not in done.stderr
    assert f"no space left on device: {small_pods}/default/f-a-t-0" in done.stdout
    with SqliteStore.in_state_dir(state) as store:
        assert store.get(JobFlow, "default", "f").phase == "Failed"


def test_a_status_the_full_disk_refused_is_written_once_there_is_room(
    small_pods: Path,
) -> None:
    runner = make_runner(small_pods.parent)
    try:
        handle = runner.launch(request("late", pod(sh("c", "sleep 1; exit 3"))))
        wait_until(runner, handle, lambda s: s.phase == "Running")
        filler = fill(small_pods)
        log = runner.runtime_dir / server.LOG
        eventually(lambda: "no space left on device" in log.read_text(), what="the refusal")
        assert handle.status().phase == "Running"  # (its end not recorded yet)
        filler.unlink()
        status = finished(runner, handle)
        assert (status.phase, status.exit_code) == ("Failed", 3)
    finally:
        shut_down(runner)


def test_a_log_that_cannot_be_copied_stays_whole(small_pods: Path) -> None:
    log = small_pods / "c.0.log"
    log.write_bytes(b"x" * 100_000)
    filler = fill(small_pods)
    try:
        assert not logrotate.rotate_if_needed(str(log), Limits(4096, 3))
        assert log.stat().st_size == 100_000
        assert logrotate.copies(str(log)) == []
    finally:
        filler.unlink()
    assert logrotate.rotate_if_needed(str(log), Limits(4096, 3))  # (once there is room)


def test_a_full_disk_is_said_as_such() -> None:
    from vcflow.podserver.oserrors import describe

    error = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/x/spec.json")
    assert describe(error, "/x") == "no space left on device: /x/spec.json"
    assert describe(OSError(errno.ENOSPC, "No space left on device"), "/x") == (
        "no space left on device: /x"
    )
