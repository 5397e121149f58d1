"""When each line of a container's log was written, for kubectl's `--timestamps`, `--since`
and `--since-time`: a *time index* beside each log, `<container>.<restart>.log.times`.

Why an index: a container's stdout and stderr are its log file (`spawn`), so no process
sees its lines go by to stamp them as a CRI runtime does. But the pod server looks at every
running container's log size every `logrotate.CHECK` (0.2) seconds anyway, for rotation
(`supervisor.PodSupervisor.rotate_logs`); at a look where a log grew, it appends one *mark*
`<size> <unix time in ns>` to the log's index (`look`). A line's time is that of the first
mark whose offset is at or past the line's end — the look at which the pod server first saw
the line whole: never before the line was written, at most `CHECK` seconds after it (plus
the time a busy pod server takes to come round). Lines past the last mark (written since the
last look) get the log's modification time: its last write, at most the time of reading.
A log without an index — a run from before vcflow kept them, or one that ended before any
look saw output — gets its modification time for every line. Times never go backwards
along a log (`Stamper`).

The writer (the pod server; standard library only, as the rest of its side):

- a mark per look at most, and only for a log that grew: a quiet container costs nothing, a
  busy one one append per look. The index is made at the first mark, owner-only, never
  through a link; a run that ends before a look saw its output makes none (no inode more
  for a short pod: its log's modification time serves);
- when a run ends, a last mark at its final size (if it has an index);
- a rotation (`logrotate.rotate`: copy, then truncate) removes the index: it starts again
  with the log. The rotated copies have none (kubectl reads the current file only; the
  copies are for whoever reads them by hand);
- an ended container's log trimmed to its newest bytes (`logrotate.trim_if_needed`) has its
  marks moved with its bytes (`trimmed`);
- size: a mark is at most 40 bytes (about 30 in practice), one per look, so 5 a second at
  most, however fast the container writes. An index over `MAX_SIZE` (1 MiB: over 30,000
  marks, about two hours of output at every look) is thinned: every other mark of its older
  half is dropped — the lines they timed get the next mark's, later, time — so old lines'
  times grow coarser while recent ones stay to the look.

A failed write (a full disk) leaves the index as it was: its lines get a later mark's time.
Readers (`Index`, `Stamper`, through `logs.read_path` and `logs.follow`) read the marks once
for a whole read, and while following only what was appended since; an index made anew
(after a rotation or a thinning: its first mark differs) is read again whole.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import time
from dataclasses import dataclass

from vcflow.podserver import ownership, podfs

SUFFIX = ".times"
#: an index over this many bytes is thinned (its older half, every other mark)
MAX_SIZE = 1 << 20
#: a line held this long without its end is given out in parts (the kubelet's runtime
#: splits lines at 16 KiB too)
MAX_LINE = 16 * 1024
_APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND | ownership.NOFOLLOW
_READ = os.O_RDONLY | os.O_NONBLOCK | ownership.NOFOLLOW
_HEAD = 64  # (more than a mark's length: its first mark, which tells one index from the next)
_NS = 10**9


def index_of(log: str) -> str:
    """The path of the time index of `log`."""
    return log + SUFFIX


# -- the writer (the pod server) ------------------------------------------------------------


def look(log: str, marked: int) -> int:
    """A look at `log` (every `logrotate.CHECK` s while its container runs, and once as it
    ends): a mark if it grew past `marked`, the size its last mark gave (0: none yet). The
    size marked now — `marked` again if nothing was (the log did not grow, or the mark
    could not be written). A log shorter than `marked` was cut by another hand: its index
    starts again."""
    try:
        size = os.stat(log, follow_symlinks=False).st_size
    except OSError:
        return marked
    if size < marked:
        restart(log)
        marked = 0
    if size > marked and mark(log, size, time.time_ns()):
        return size
    return marked


def mark(log: str, offset: int, ns: int) -> bool:
    """Append the mark `offset ns` to the index of `log` (thinned when over `MAX_SIZE`);
    False if it could not be written."""
    path = index_of(log)
    try:
        fd = os.open(path, _APPEND, ownership.FILE_MODE)
    except OSError:
        return False
    try:
        os.write(fd, b"%d %d\n" % (offset, ns))
        size = os.fstat(fd).st_size
    except OSError:
        return False
    finally:
        os.close(fd)
    if size > MAX_SIZE:
        with contextlib.suppress(OSError):
            _rewrite(path, thin(parse(podfs.read_bytes(path))[0]))
    return True


def restart(log: str) -> None:
    """The log was truncated (rotated): its index goes, to start again at the next mark."""
    with contextlib.suppress(OSError):
        os.unlink(index_of(log))


def trimmed(log: str, before: int) -> None:
    """`log`, `before` bytes long, was replaced by its newest bytes (`logrotate.
    trim_if_needed`): its marks are moved with them, those of the bytes dropped dropped."""
    path = index_of(log)
    try:
        cut = before - os.stat(log, follow_symlinks=False).st_size
        marks = parse(podfs.read_bytes(path))[0] if cut > 0 else []
    except OSError:
        return
    if marks:
        _rewrite(path, [(offset - cut, ns) for offset, ns in marks if offset > cut])


def thin(marks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Every other mark of the older half dropped (the older marks' lines take the next
    kept mark's time); the newer half kept whole."""
    half = len(marks) // 2
    return marks[:half][1::2] + marks[half:]


def _rewrite(path: str, marks: list[tuple[int, int]]) -> None:
    """Replace the index at once (a new file: its readers read it again whole)."""
    with contextlib.suppress(OSError):
        podfs.write_bytes(path, b"".join(b"%d %d\n" % m for m in marks))


def parse(data: bytes) -> tuple[list[tuple[int, int]], int]:
    """The marks of an index's bytes, and how many bytes they took: only whole lines (a
    mark being appended is read next time); a line that is no mark, or whose offset does
    not grow, is skipped."""
    used = data.rfind(b"\n") + 1
    marks: list[tuple[int, int]] = []
    last = -1
    for line in data[:used].split(b"\n")[:-1]:
        offset, _, ns = line.partition(b" ")
        try:
            pair = int(offset), int(ns)
        except ValueError:
            continue
        if pair[0] > last:
            marks.append(pair)
            last = pair[0]
    return marks, used


# -- the reader -----------------------------------------------------------------------------


class Index:
    """The marks of one log's index, read as it grows (`refresh`)."""

    def __init__(self, log: str) -> None:
        self.path = index_of(log)
        self.offsets: list[int] = []
        self.times: list[int] = []
        self._head = b""  # its first mark: which index this is
        self._used = 0  # its bytes parsed

    def time_of(self, end: int) -> tuple[int, int] | None:
        """(time, offset) of the first mark at or past offset `end`; None past the last."""
        at = bisect.bisect_left(self.offsets, end)
        return (self.times[at], self.offsets[at]) if at < len(self.offsets) else None

    def refresh(self) -> None:
        """Read the marks appended since the last read — all of them again if the index was
        made anew; none when there is no index (or a link in its place)."""
        try:
            fd = os.open(self.path, _READ)
        except OSError:
            self._clear(b"")
            return
        try:
            head = os.pread(fd, _HEAD, 0)
            head = head[: head.find(b"\n") + 1]
            size = os.fstat(fd).st_size
            if head != self._head or size < self._used or not head:
                self._clear(head)
            data = b""
            while self._used + len(data) < size:
                chunk = os.pread(fd, size - self._used - len(data), self._used + len(data))
                if not chunk:
                    break
                data += chunk
        except OSError:
            return
        finally:
            os.close(fd)
        marks, used = parse(data)
        last = self.offsets[-1] if self.offsets else -1
        for offset, ns in marks:
            if offset > last:
                self.offsets.append(offset)
                self.times.append(ns)
                last = offset
        self._used += used

    def _clear(self, head: bytes) -> None:
        self.offsets, self.times, self._head, self._used = [], [], head, 0


@dataclass(frozen=True)
class View:
    """What a reader asks of the lines' times: only those at or after `since` (ns since
    the epoch), each with its time in front (`timestamps`: kubectl's
    `2026-12-01T23:00:00.123456789Z line`)."""

    since: int | None = None
    timestamps: bool = False

    @property
    def plain(self) -> bool:
        """Nothing asked: the log's bytes as they are."""
        return self.since is None and not self.timestamps


class Stamper:
    """The lines of one log file as `view` asks for them, from its bytes as read — whole or
    piece by piece (`feed`, each piece with its offset in the file). A line is held until
    its end comes (or `end`), or given out in parts past `MAX_LINE` bytes, its time in
    front of the first. A piece that does not start where the last one ended (the log was
    rotated and is read again from its start) ends the line held, and the index is read
    anew."""

    def __init__(self, log: str, view: View) -> None:
        self.log, self.view = log, view
        self.index = Index(log)
        self._held = b""
        self._at = -1  # the file offset of what is held (-1: nothing fed yet)
        self._midline = False  # the next bytes go on a line already given out in part
        self._shown = True  # that line's (whether it is at or after `since`)
        self._last = 0  # the last time given
        self._stamp = (-1, b"")

    def feed(self, data: bytes, start: int, fallback: int | None = None) -> bytes:
        """What `data`, read at offset `start`, completes. `fallback`: the time of the lines
        past the last mark (default: the log's modification time)."""
        out = b""
        if self._at < 0 or start != self._at + len(self._held):
            if self._at >= 0:  # rotated: from its start, with its new index
                out = self.end(fallback)
                self.index = Index(self.log)
                self._midline = False
            self._at = start
        held = self._held + data
        cut = held.rfind(b"\n") + 1
        if not cut and len(held) > MAX_LINE:
            cut = len(held)
        if cut:
            out += self._lines(held[:cut], self._at, fallback)
            self._at += cut
        self._held = held[cut:]
        return out

    def end(self, fallback: int | None = None) -> bytes:
        """What is held: a last line without its line break."""
        if not self._held:
            return b""
        out = self._lines(self._held, self._at, fallback)
        self._at += len(self._held)
        self._held = b""
        return out

    def _lines(self, block: bytes, at: int, fallback: int | None) -> bytes:
        """`block` (at file offset `at`, from a line's start unless `_midline`), its lines
        given their times a mark at a time: the lines a mark times are cut out at once."""
        out: list[bytes] = []
        pos, size = 0, len(block)
        if self._midline:
            pos = block.find(b"\n") + 1 or size
            if self._shown:
                out.append(block[:pos])
        refreshed = False
        while pos < size:
            end = block.find(b"\n", pos) + 1 or size  # (the first line's)
            found = self.index.time_of(at + end)
            if found is None and not refreshed:
                self.index.refresh()
                refreshed = True
                found = self.index.time_of(at + end)
            if found is None:
                if fallback is None:
                    fallback = self._modified()
                ns, upto = fallback, size
            else:
                ns, upto = found[0], block.rfind(b"\n", end, found[1] - at) + 1 or end
            ns = self._last = max(ns, self._last)
            self._shown = self.view.since is None or ns >= self.view.since
            if self._shown:
                out.append(self._stamped(block[pos:upto], ns))
            pos = upto
        self._midline = not block.endswith(b"\n")
        return b"".join(out)

    def _stamped(self, lines: bytes, ns: int) -> bytes:
        if not self.view.timestamps:
            return lines
        if self._stamp[0] != ns:
            self._stamp = (ns, rfc3339(ns).encode() + b" ")
        stamp = self._stamp[1]
        body = lines[:-1] if lines.endswith(b"\n") else lines
        return stamp + body.replace(b"\n", b"\n" + stamp) + lines[len(body) :]

    def _modified(self) -> int:
        try:
            return os.stat(self.log, follow_symlinks=False).st_mtime_ns
        except OSError:
            return time.time_ns()


# -- times as kubectl writes them -----------------------------------------------------------


def rfc3339(ns: int) -> str:
    """RFC 3339 in UTC with nanoseconds, nine digits always, as the kubelet writes a log
    line's time: `2026-12-01T23:00:00.123456789Z`."""
    seconds, frac = divmod(ns, _NS)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{frac:09d}Z"


_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([Zz])|([+-])(\d\d):(\d\d))"
)


def parse_rfc3339(text: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 time (`2026-12-01T23:00:00Z`, with a
    fraction of a second or an offset); ValueError for anything else."""
    found = _RFC3339.fullmatch(text.strip())
    if found is None:
        raise ValueError(f'"{text}" is not an RFC 3339 time (e.g. 2026-12-01T23:00:00Z)')
    from datetime import UTC, datetime  # (the CLI's and the server's: not the pod server's)

    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        raise ValueError(f'"{text}" is not a valid time') from None
    offset = 0
    if found.group(9):
        offset = (int(found.group(10)) * 60 + int(found.group(11))) * 60
        offset = -offset if found.group(9) == "-" else offset
    whole = (int(moment.timestamp()) - offset) * _NS
    return whole + int((found.group(7) or "0")[:9].ljust(9, "0"))
