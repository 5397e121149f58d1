"""Container logs rotated as the kubelet rotates them (`containerLogMaxSize` 10 MiB,
`containerLogMaxFiles` 5): once a running container's log `<container>.<restart>.log`
is over `max_size`, its content is copied to `<container>.<restart>.log.<n>` (n counting
up from 1: the higher, the newer) and the log is truncated; only the newest
`max_files - 1` copies are kept. The pod server looks every `CHECK` seconds
(`server.Loop`, through `supervisor.PodSupervisor.rotate_logs`); `vcflow run` sets the
limits per pod (`spec.json` key `logRotation`). Standard library only.

Copy, then truncate — not rename and reopen: the log's descriptor is the container's own
stdout and stderr, which only the container could reopen (a renamed log would go on
growing under its new name). It was opened O_APPEND, so the container goes on writing at
the new end. Loss window: what the container writes between the copy's last read (at the
end of the file) and the truncation — a few microseconds — is in neither file. A copy
that cannot be made (no space left) leaves the log whole; it is tried again at the next
look. Readers: `logs` shows the current file, as kubectl does; `loghistory` keeps the
copies with the log.

A flood (`yes`) writes far more than `max_size` between two looks, and faster than a copy
reads: a copy holds at most `COPY_FACTOR` × `max_size` bytes, the newest of the log as it
was when the rotation began (the older part of a log that far over the limit is dropped,
as the limit would have dropped it), and the copy's reads stop there, so a writer cannot
keep it chasing the end. What the writer adds meanwhile is lost with the truncation. So
the copies take at most (`max_files` - 1) × `COPY_FACTOR` × `max_size` and the log itself
what was written since the last look — until the container ends: then a log over
`COPY_FACTOR` × `max_size` keeps only its newest `max_size` bytes (`trim_if_needed`, by
the supervisor; it stays the current file, the one `logs` shows).
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_SIZE = 10 * 1024 * 1024
DEFAULT_MAX_FILES = 5
MIN_MAX_FILES = 2  # (the kubelet's: the log itself and one copy)
MIN_MAX_SIZE = 1024
#: seconds between two looks at the running containers' log sizes (the kubelet's: 10; a
#: look is one stat per running container, and what a flood writes between two looks is
#: what the log can take over its limit)
CHECK = 0.2
#: a copy holds at most this many times `max_size` bytes (a log caught a little over its
#: limit is copied whole)
COPY_FACTOR = 2
SPEC_KEY = "logRotation"
COPIED = re.compile(r"^(.+)\.(\d+)\.log\.(\d+)$")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Limits:
    max_size: int = DEFAULT_MAX_SIZE
    max_files: int = DEFAULT_MAX_FILES

    def wire(self) -> dict[str, int]:
        return {"maxSize": self.max_size, "maxFiles": self.max_files}

    @staticmethod
    def of(spec: dict[str, Any]) -> Limits:
        """The limits a pod's spec.json gives, the defaults for what it does not."""
        given = spec.get(SPEC_KEY)
        given = given if isinstance(given, dict) else {}
        size, files = given.get("maxSize"), given.get("maxFiles")
        return Limits(
            size if isinstance(size, int) and size >= MIN_MAX_SIZE else DEFAULT_MAX_SIZE,
            files if isinstance(files, int) and files >= MIN_MAX_FILES else DEFAULT_MAX_FILES,
        )


_SUFFIXES = {
    "": 1,
    "k": 10**3,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}
_SIZE = re.compile(r"^([0-9]+)([kKMGT]i?)?$")


KUBELET = Limits()  # the kubelet's defaults


def parse_size(text: str) -> int:
    """Bytes of a size as the kubelet's `containerLogMaxSize` takes it (`10Mi`, `500K`,
    `1048576`); ValueError saying why for anything else, or less than `MIN_MAX_SIZE`."""
    found = _SIZE.match(text.strip())
    if found is None or (found.group(2) or "") not in _SUFFIXES:
        raise ValueError(f"{text!r} is not a size (e.g. 10Mi, 500Ki, 1048576)")
    size = int(found.group(1)) * _SUFFIXES[found.group(2) or ""]
    if size < MIN_MAX_SIZE:
        raise ValueError(f"{text!r} is less than the smallest log size, {MIN_MAX_SIZE} bytes")
    return size


def limits(max_size: str | int | None, max_files: int | None) -> Limits:
    """The limits of `--container-log-max-size` and `--container-log-max-files` (the
    defaults for None); ValueError saying why for a value out of range."""
    size = DEFAULT_MAX_SIZE if max_size is None else max_size
    if isinstance(size, str):
        size = parse_size(size)
    elif size < MIN_MAX_SIZE:
        raise ValueError(f"{size} is less than the smallest log size, {MIN_MAX_SIZE} bytes")
    files = DEFAULT_MAX_FILES if max_files is None else max_files
    if files < MIN_MAX_FILES:
        raise ValueError(f"{files} files: at least {MIN_MAX_FILES} (the log and one copy)")
    return Limits(size, files)


def copies(log: str) -> list[tuple[int, str]]:
    """(n, path) of the rotated copies of `log`, oldest first."""
    directory, name = os.path.split(log)
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory or "."):
            head, dot, number = entry.name.rpartition(".")
            if head == name and dot and number.isdigit():
                found.append((int(number), entry.path))
    return sorted(found)


def is_copy(name: str) -> bool:
    return COPIED.match(name) is not None


def rotate_if_needed(log: str, limits: Limits) -> bool:
    """Rotate `log` if it is over the size limit; True if it was."""
    try:
        size = os.stat(log, follow_symlinks=False).st_size
    except OSError:
        return False
    return size > limits.max_size and rotate(log, limits)


def trim_if_needed(log: str, limits: Limits) -> bool:
    """The log of a container that has ended, over `COPY_FACTOR` × `max_size`: replaced by
    its newest `max_size` bytes (from a line's start); True if it was. Nothing writes it any
    more, so nothing is lost but what the limit drops; a log that cannot be trimmed (no
    space left) stays whole."""
    try:
        source = os.open(log, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    aside = f"{log}.trim"
    try:
        found = os.fstat(source)
        if found.st_size <= COPY_FACTOR * limits.max_size:
            return False
        os.lseek(source, found.st_size - limits.max_size, os.SEEK_SET)
        if not _copy(source, aside, found.st_mode & 0o777, limits.max_size, True):
            return False
        try:
            os.replace(aside, log)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(aside)
            return False
    finally:
        os.close(source)
    return True


def rotate(log: str, limits: Limits) -> bool:
    """Copy `log` to its next copy, truncate it, drop the copies beyond the limit; False
    (nothing changed) when the copy could not be made."""
    found = copies(log)
    target = f"{log}.{found[-1][0] + 1 if found else 1}"
    try:
        source = os.open(log, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        found_stat = os.fstat(source)
        mode = found_stat.st_mode & 0o777
        most = COPY_FACTOR * limits.max_size
        cut = found_stat.st_size > most
        if cut:  # (a flood: its newest max_size bytes, from a line's start)
            os.lseek(source, found_stat.st_size - limits.max_size, os.SEEK_SET)
        if not _copy(source, target, mode, most, cut):
            return False
        os.ftruncate(source, 0)
    finally:
        os.close(source)
    for _, old in [*found, (0, target)][: -(limits.max_files - 1)]:
        with contextlib.suppress(OSError):
            os.unlink(old)
    return True


def _copy(source: int, target: str, mode: int, most: int, cut: bool) -> bool:
    """Copy from `source`'s offset to its end, or `most` bytes, into a new `target`; `cut`:
    the offset is inside the log, whose first line there is left out (a part of one)."""
    try:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except OSError:
        return False
    try:
        left = most
        # (to the end, then the truncation at once; a writer faster than this is cut short)
        while left and (chunk := os.read(source, min(CHUNK, left))):
            left -= len(chunk)
            if cut:
                chunk, cut = chunk[chunk.find(b"\n") + 1 :], False
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
    except OSError:  # (no space left: the log stays whole)
        os.close(out)
        with contextlib.suppress(OSError):
            os.unlink(target)
        return False
    os.close(out)
    return True
