"""A log's time index (`logtimes`): the marks the pod server writes as a log grows, a line's
time from them (the first mark at or past its end), the fallbacks (the log's modification
time past the last mark, or with no index), a line held until its end while following, a
rotation that starts the index again, a trimmed log's marks moved with its bytes, the
thinned index of a long run, and kubectl's time format."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import pytest
from tests.runtime.conftest import finished, make_runner, pod, request, sh, shut_down

from vcflow.podserver import logrotate, logtimes
from vcflow.podserver.logtimes import Index, Stamper, View
from vcflow.runtime import loghistory, logs

T = 1_700_000_000 * 10**9  # (2023-11-14T22:13:20Z)
STAMPS = View(timestamps=True)


def at(seconds: float) -> int:
    return T + int(seconds * 10**9)


def stamp(seconds: float) -> bytes:
    return logtimes.rfc3339(at(seconds)).encode() + b" "


def log_with(tmp_path: Path, data: bytes, *marks: tuple[int, float], mtime: float = 9) -> str:
    """A log holding `data`, its index the `marks` (offset, seconds after T), its
    modification time `mtime` seconds after T."""
    log = tmp_path / "c.0.log"
    log.write_bytes(data)
    for offset, seconds in marks:
        assert logtimes.mark(str(log), offset, at(seconds))
    os.utime(log, ns=(at(mtime), at(mtime)))
    return str(log)


def whole(log: str, view: View = STAMPS, tail: int | None = None) -> bytes:
    return logs.read_path(Path(log), tail, view)


def test_a_line_has_the_time_of_the_first_mark_at_or_past_its_end(tmp_path: Path) -> None:
    # lines end at 2, 4, 6, 8: marks at 2 (exactly its end), 6 (b and c), none past 6
    log = log_with(tmp_path, b"a\nb\nc\nd\n", (2, 1), (6, 2.5))
    assert whole(log) == stamp(1) + b"a\n" + stamp(2.5) + b"b\n" + stamp(2.5) + b"c\n" + (
        stamp(9) + b"d\n"  # written since the last look: the log's modification time
    )
    assert whole(log, View(since=at(2.5))) == b"b\nc\nd\n"
    assert whole(log, View(since=at(3), timestamps=True)) == stamp(9) + b"d\n"
    assert whole(log, STAMPS, tail=2) == stamp(2.5) + b"c\n" + stamp(9) + b"d\n"
    assert whole(log, View()) == b"a\nb\nc\nd\n"  # (nothing asked: the bytes as they are)


def test_a_log_without_an_index_has_its_modification_time(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"old\nrun\n", mtime=4)
    assert not os.path.exists(logtimes.index_of(log))
    assert whole(log) == stamp(4) + b"old\n" + stamp(4) + b"run\n"
    assert whole(log, View(since=at(5))) == b""


def test_times_never_go_backwards(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"a\nb\n", (2, 5), mtime=3)  # (a clock set back)
    assert whole(log) == stamp(5) + b"a\n" + stamp(5) + b"b\n"


def test_a_last_line_without_its_end(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"a\npartial", (2, 1), (9, 2))
    assert whole(log) == stamp(1) + b"a\n" + stamp(2) + b"partial"


def test_following_holds_a_line_until_its_end(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"", (2, 1), (5, 2))
    stamper = Stamper(log, STAMPS)
    assert stamper.feed(b"a\nb", 0) == stamp(1) + b"a\n"
    assert stamper.feed(b"b", 3) == b""
    assert stamper.feed(b"\nc", 4) == stamp(2) + b"bb\n"
    assert stamper.end(at(7)) == stamp(7) + b"c"  # (past the last mark: the fallback)


def test_following_reads_the_marks_appended_since(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"")
    stamper = Stamper(log, STAMPS)
    logtimes.mark(log, 2, at(1))
    assert stamper.feed(b"a\n", 0) == stamp(1) + b"a\n"
    logtimes.mark(log, 4, at(2))
    assert stamper.feed(b"b\n", 2) == stamp(2) + b"b\n"


def test_a_line_too_long_to_hold_is_given_out_in_parts(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"")
    stamper = Stamper(log, STAMPS)
    long = b"x" * (logtimes.MAX_LINE + 1)
    assert stamper.feed(long, 0, at(1)) == stamp(1) + long
    assert stamper.feed(b"yz\n", len(long), at(2)) == b"yz\n"  # (its time was given)
    assert stamper.feed(b"next\n", len(long) + 3, at(3)) == stamp(3) + b"next\n"
    since = Stamper(log, View(since=at(2)))  # a part left out: the rest of it too
    assert since.feed(long, 0, at(1)) + since.feed(b"yz\nnext\n", len(long), at(2)) == b"next\n"


def test_a_rotation_starts_the_index_again(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"", (4, 1))
    stamper = Stamper(log, STAMPS)
    assert stamper.feed(b"one\ntw", 0, at(9)) == stamp(1) + b"one\n"
    os.truncate(log, 0)  # (copied, truncated: the pod server's look)
    logtimes.restart(log)
    assert not os.path.exists(logtimes.index_of(log))
    logtimes.mark(log, 4, at(3))
    # read again from its start: the line cut by the rotation ends, the index is the new one
    assert stamper.feed(b"new\n", 0, at(2)) == stamp(2) + b"tw" + stamp(3) + b"new\n"


def test_an_index_made_anew_is_read_again_whole(tmp_path: Path) -> None:
    log = log_with(tmp_path, b"", (2, 1), (4, 2))
    index = Index(log)
    index.refresh()
    assert index.time_of(3) == (at(2), 4)
    logtimes.restart(log)
    logtimes.mark(log, 1, at(5))
    logtimes.mark(log, 3, at(6))  # (as long as the one it replaced)
    index.refresh()
    assert (index.offsets, index.time_of(3)) == ([1, 3], (at(6), 3))
    assert index.time_of(4) is None


def test_the_writer_marks_a_log_only_when_it_grew(tmp_path: Path) -> None:
    log = tmp_path / "c.0.log"
    assert logtimes.look(str(log), 0) == 0  # (no log yet)
    log.write_bytes(b"a\n")
    assert logtimes.look(str(log), 0) == 2
    assert logtimes.look(str(log), 2) == 2
    log.write_bytes(b"a\nbc\n")
    assert logtimes.look(str(log), 2) == 5
    index = Path(logtimes.index_of(str(log)))
    assert [int(line.split()[0]) for line in index.read_text().splitlines()] == [2, 5]
    assert index.stat().st_mode & 0o777 == 0o600
    log.write_bytes(b"x\n")  # cut by another hand: its marks no longer fit
    assert logtimes.look(str(log), 5) == 2
    assert [int(line.split()[0]) for line in index.read_text().splitlines()] == [2]


def test_an_index_is_never_written_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    log = tmp_path / "c.0.log"
    log.write_bytes(b"a\n")
    os.symlink(target, logtimes.index_of(str(log)))
    assert logtimes.look(str(log), 0) == 0  # (not marked)
    assert target.read_bytes() == b""
    assert whole(str(log), View(timestamps=True)).endswith(b" a\n")  # (its mtime)


def test_a_long_runs_index_is_thinned_its_older_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logtimes, "MAX_SIZE", 40 * 30)
    log = log_with(tmp_path, b"")
    for n in range(1, 101):
        assert logtimes.mark(log, n * 10, at(n))
        assert os.path.getsize(logtimes.index_of(log)) <= logtimes.MAX_SIZE + 40
    index = Index(log)
    index.refresh()
    assert index.offsets[-1] == 1000 and index.offsets == sorted(index.offsets)
    assert index.time_of(995) == (at(100), 1000)  # (the newest marks kept)
    older = index.offsets[: len(index.offsets) // 4]
    assert all(b - a >= 20 for a, b in itertools.pairwise(older))  # (thinned)


def test_a_trimmed_logs_marks_move_with_its_bytes(tmp_path: Path) -> None:
    data = b"".join(b"line %03d\n" % n for n in range(300))  # 9 bytes a line
    log = log_with(tmp_path, data, (900, 1), (1800, 2), (2700, 3))
    limits = logrotate.Limits(max_size=1024, max_files=2)
    assert logrotate.trim_if_needed(log, limits)
    kept = Path(log).read_bytes()
    logtimes.trimmed(log, len(data))
    lines = whole(log).splitlines()
    assert len(lines) == len(kept.splitlines())
    assert lines[0].endswith(kept.splitlines()[0])
    by_time = {line.split(b" ")[0] for line in lines}
    assert by_time == {stamp(2).strip(), stamp(3).strip()}  # (lines 100-199, 200-299)
    assert lines[-1] == stamp(3) + b"line 299"


def test_kubectls_time_format() -> None:
    assert logtimes.rfc3339(T + 123_456_789) == "2023-11-14T22:13:20.123456789Z"
    assert logtimes.rfc3339(T) == "2023-11-14T22:13:20.000000000Z"
    assert logtimes.parse_rfc3339("2023-11-14T22:13:20Z") == T
    assert logtimes.parse_rfc3339("2023-11-14T22:13:20.5Z") == T + 500_000_000
    assert logtimes.parse_rfc3339("2023-11-15T00:13:20.123456789+02:00") == T + 123_456_789
    for bad in ("2023-11-14", "2023-13-14T22:13:20Z", "yesterday", "2023-11-14T22:13:20"):
        with pytest.raises(ValueError):
            logtimes.parse_rfc3339(bad)


def test_the_pod_server_marks_a_running_containers_log(tmp_path: Path) -> None:
    """A real pod: a line, 1 s, another; the index times them a look apart from when they
    were written, and is kept with the log when the pod is removed; a short pod's log has
    no index (its modification time serves)."""
    runner = make_runner(tmp_path / "state")
    try:
        started = time.time_ns()
        handle = runner.launch(request("slow", pod(sh("c", "echo one; sleep 1; echo two"))))
        quick = runner.launch(request("quick", pod(sh("c", "echo hi"))))
        assert finished(runner, handle, timeout=30).phase == "Succeeded"
        assert finished(runner, quick, timeout=30).phase == "Succeeded"
        log = handle.pod_dir / "c.0.log"
        index = Index(str(log))
        index.refresh()
        assert index.offsets[-1] == log.stat().st_size == 8  # (its end marked)
        one, two = index.time_of(4), index.time_of(8)
        assert one is not None and two is not None
        assert started <= one[0] and 0.7e9 < two[0] - one[0] < 1.6e9
        assert not (quick.pod_dir / "c.0.log.times").exists()
        assert whole(str(quick.pod_dir / "c.0.log"), View(since=started)) == b"hi\n"
        stamped = whole(str(log))
        assert runner.remove(handle)  # its index is kept with its log
        (kept,) = loghistory.kept(loghistory.history_dir(runner.state_dir, "ns", "slow"))
        assert sorted(p.name for p in kept.directory.glob("c.*")) == ["c.0.log", "c.0.log.times"]
        assert whole(str(kept.directory / "c.0.log")) == stamped
    finally:
        shut_down(runner)


def test_a_rotated_logs_index_starts_again_with_it(tmp_path: Path) -> None:
    """A container whose log rotates every few lines: the index of the current file marks
    its bytes only (none of a copy's), up to its final size."""
    runner = make_runner(tmp_path / "state", log_limits=logrotate.Limits(1024, 2))
    script = (
        "i=0; while [ $i -lt 30 ]; do "
        "printf 'line %04d %0200d\\n' $i 0; i=$((i+1)); sleep 0.05; done"
    )
    try:
        started = time.time_ns()
        handle = runner.launch(request("rotating", pod(sh("c", script))))
        assert finished(runner, handle, timeout=30).phase == "Succeeded"
        log = handle.pod_dir / "c.0.log"
        assert logrotate.copies(str(log))  # (it rotated)
        index = Index(str(log))
        index.refresh()
        # (a loaded machine may rotate at the last look before the end: the index then starts
        # again empty and the lines take the log's modification time, which is documented)
        assert not index.offsets or index.offsets[-1] == log.stat().st_size
        assert all(started <= ns <= time.time_ns() for ns in index.times)
        lines = whole(str(log)).splitlines()
        if not lines:  # (rotated at that last look: the newest copy holds the last lines)
            lines = whole(logrotate.copies(str(log))[-1][1]).splitlines()
        assert lines and all(line.endswith(b"0" * 200) for line in lines)
        times = [logtimes.parse_rfc3339(line.split(b" ")[0].decode()) for line in lines]
        assert times == sorted(times) and started <= times[0]
    finally:
        shut_down(runner)
