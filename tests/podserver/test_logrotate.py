"""Container logs are rotated as the kubelet rotates them (`logrotate`): a running
container's log over the size limit is copied and truncated, the container goes on writing
at its new end, at most `max_files` files are kept — and a pod's kept attempt keeps the
copies with the log. `--tail` reads from the end (`logtail`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.runtime.conftest import finished, make_runner, pod, request, sh, shut_down

from vcflow.podserver import logrotate
from vcflow.podserver.logrotate import Limits
from vcflow.runtime import loghistory, logs, logtail


def test_a_log_over_the_limit_is_copied_and_truncated_keeping_the_newest(tmp_path: Path) -> None:
    log = tmp_path / "c.0.log"
    limits = Limits(max_size=1024, max_files=3)
    for round_ in range(5):
        log.write_bytes(f"round {round_}\n".encode() * 200)
        assert logrotate.rotate_if_needed(str(log), limits)
        assert log.read_bytes() == b""
    assert not logrotate.rotate_if_needed(str(log), limits)  # (under the limit)
    kept = logrotate.copies(str(log))
    assert [n for n, _ in kept] == [4, 5]  # max_files - 1 copies, the newest
    assert Path(kept[-1][1]).read_bytes() == b"round 4\n" * 200


@pytest.mark.parametrize(
    ("text", "size"),
    [("10Mi", 10 * 2**20), ("500Ki", 500 * 1024), ("2M", 2 * 10**6), ("4096", 4096)],
)
def test_sizes_as_the_kubelet_takes_them(text: str, size: int) -> None:
    assert logrotate.parse_size(text) == size


@pytest.mark.parametrize("text", ["10MB", "-1", "1.5Mi", "", "100"])
def test_what_is_not_a_size_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        logrotate.parse_size(text)


def test_fewer_than_two_files_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        logrotate.limits(None, 1)


def test_a_running_containers_log_stays_within_its_limits(tmp_path: Path) -> None:
    """A container writing 1.5 MB over three seconds, with 64 KiB × 3: at most three
    files, none far over the limit, and what it wrote last is in them, in order."""
    runner = make_runner(tmp_path / "state", log_limits=Limits(64 * 1024, 3))
    script = (
        "i=0; while [ $i -lt 300 ]; do "
        "printf 'line %06d %0400d\\n' $i 0; printf 'line %06d %0400d\\n' $i 1; "
        "printf 'line %06d %0400d\\n' $i 2; i=$((i+1)); sleep 0.01; done"
    )
    try:
        handle = runner.launch(request("chatty", pod(sh("c", script))))
        status = finished(runner, handle, timeout=30)
        assert status.phase == "Succeeded"
        log = handle.pod_dir / "c.0.log"
        kept = logrotate.copies(str(log))
        assert 1 <= len(kept) <= 2
        for path in [log, *(Path(p) for _, p in kept)]:
            assert path.stat().st_size < 64 * 1024 + 600 * 1024  # (a second's output over)
            assert b"\0" not in path.read_bytes()  # appended at the new end, never a hole
        lines = b"".join(Path(p).read_bytes() for _, p in kept) + log.read_bytes()
        numbers = [int(m.group(1)) for m in re.finditer(rb"^line (\d{6}) \d{400}$", lines, re.M)]
        assert numbers == sorted(numbers) and numbers[-1] == 299  # (a line cut by a rotation
        # — its end written between the copy and the truncation — is the loss window)
        runner.remove(handle)
        (attempt,) = loghistory.kept(loghistory.history_dir(runner.state_dir, "ns", "chatty"))
        names = sorted(p.name for p in attempt.directory.iterdir())
        assert "c.0.log" in names and [n for n in names if n.startswith("c.0.log.")]
    finally:
        shut_down(runner)


def _lines(count: int) -> bytes:
    return b"".join(b"line %08d\n" % i for i in range(count))


def test_a_flooded_log_is_copied_its_newest_part_only(tmp_path: Path) -> None:
    log = tmp_path / "c.0.log"
    limits = Limits(max_size=4096, max_files=3)
    log.write_bytes(_lines(10_000))  # (140 KB: a flood between two looks)
    assert logrotate.rotate_if_needed(str(log), limits)
    (copy,) = [Path(p).read_bytes() for _, p in logrotate.copies(str(log))]
    assert len(copy) <= logrotate.COPY_FACTOR * 4096
    assert copy.startswith(b"line ") and copy.endswith(b"line 00009999\n")  # the newest, whole
    assert log.read_bytes() == b""


def test_an_ended_containers_flooded_log_keeps_its_newest_part(tmp_path: Path) -> None:
    log = tmp_path / "c.0.log"
    limits = Limits(max_size=4096, max_files=3)
    log.write_bytes(_lines(300))  # (4.2 KB: a little over, as a look finds it: kept)
    assert not logrotate.trim_if_needed(str(log), limits)
    log.write_bytes(_lines(10_000))
    assert logrotate.trim_if_needed(str(log), limits)
    kept = log.read_bytes()
    assert len(kept) <= 4096 and kept.startswith(b"line ") and kept.endswith(b"line 00009999\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.0.log"]


def test_a_flooding_container_keeps_its_logs_within_their_bounds(tmp_path: Path) -> None:
    """`yes` for a second or two, with 1 MiB × 3: each copy and the log, once it has
    ended, at most `COPY_FACTOR` MiB, however fast it wrote (gigabytes before)."""
    runner = make_runner(tmp_path / "state", log_limits=Limits(2**20, 3))
    script = (
        "end=$(($(date +%s) + 2)); while [ $(date +%s) -lt $end ]; do yes | head -c 8000000; done"
    )
    try:
        handle = runner.launch(request("flood", pod(sh("c", script))))
        assert finished(runner, handle, timeout=60).phase == "Succeeded"
        log = handle.pod_dir / "c.0.log"
        kept = [Path(p) for _, p in logrotate.copies(str(log))]
        assert len(kept) <= 2
        for path in [log, *kept]:
            assert path.stat().st_size <= logrotate.COPY_FACTOR * 2**20, path
        assert log.read_bytes().endswith(b"y\n")
    finally:
        shut_down(runner)


TEXT = st.lists(st.sampled_from(["a", "bc", "\n", "\r", "\r\n", "x" * 9]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(0, 12))
def test_the_last_lines_read_from_the_end_are_the_last_lines(parts: list[str], lines: int) -> None:
    data = "".join(parts).encode()
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"vcflow-logtail-{os.getpid()}"
    path.write_bytes(data)
    try:
        old, logtail.BLOCK = logtail.BLOCK, 3  # (small blocks: the doubling is exercised)
        with path.open("rb") as f:
            got = logtail.last_lines(f, lines)
    finally:
        logtail.BLOCK = old
        path.unlink()
    assert got == b"".join(data.splitlines(keepends=True)[-lines:] if lines else [])


def test_the_last_line_of_a_gigabyte_log_costs_the_line(tmp_path: Path) -> None:
    """`logs --tail 1` of a 1 GB log took 2.7 GB and 4.1 s: it read the file whole."""
    log = tmp_path / "c.0.log"
    with log.open("wb") as f:
        f.truncate(2**30)  # (sparse: no disk taken)
        f.seek(2**30)
        f.write(b"\nbefore\nlast\n")
    script = (  # (VmHWM: the peak since exec; ru_maxrss would count the forking parent's)
        "import sys; from pathlib import Path; from vcflow.runtime import logs; "
        "out = logs.read_path(Path(sys.argv[1]), 1); "
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
        "print(out.decode().strip(), hwm)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(log)], capture_output=True, text=True, timeout=60
    )
    text, rss = done.stdout.split()
    assert text == "last"
    assert int(rss) < 200 * 1024  # KB


def test_follow_goes_on_after_a_rotation(tmp_path: Path) -> None:
    """A follower holding the log open reads it again from its start once truncated."""
    runner = make_runner(tmp_path / "state", log_limits=Limits(4096, 2))
    script = "i=0; while [ $i -lt 60 ]; do printf '%0200d\\n' $i; i=$((i+1)); sleep 0.05; done"
    try:
        handle = runner.launch(request("followed", pod(sh("c", script))))
        seen = b"".join(logs.follow(handle.pod_dir, "c", poll_interval=0.02))
        numbers = [int(m.group(0)) for m in re.finditer(rb"^\d{200}$", seen, re.M)]
        assert numbers[-1] == 59 and numbers == sorted(numbers)
        assert logrotate.copies(str(handle.pod_dir / "c.0.log"))  # (it was rotated)
    finally:
        shut_down(runner)
