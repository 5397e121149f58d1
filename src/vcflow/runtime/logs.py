"""Container logs, for `vcflow logs POD [-c CONTAINER] [-f] [--previous] [--attempt N]`.

Each run of a container writes stdout and stderr, interleaved as written, to its own file
`<pod dir>/<container>.<restart>.log` (restart = the container's restartCount when that
run started). The *current* log is the newest run's, `previous` the one before — kubectl's
`--previous`. A run that could not start holds one `vcflow: ...` line saying why.

Across attempts (`loghistory`: the pods of that name that ran before, their logs kept): a
container's runs are in the order they ran, attempt after attempt, so `previous` of an
attempt's first run is the last run of the attempt before it (`run_log`).

`follow` yields what the current run has written and then what it writes, and stops once
that run ended and its file is read to the end — or the pod ended, or its supervisor died.
It polls (0.1 s by default): no inotify in the standard library.

Both take a `logtimes.View`: each line with its time in front (`--timestamps`), only the
lines of a time or later (`--since`); the times are the log's time index's (`logtimes`).

A log file is opened by its name, never through a link (`LogsError` for one: it is not the
pod's log but whatever it points at).
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from vcflow.api.errors import InputError
from vcflow.podserver import logtimes, ownership, podfs
from vcflow.runtime import logtail
from vcflow.runtime.loghistory import Attempt
from vcflow.runtime.status import RunStatus, read_status

CHUNK = 65536


class LogsError(InputError):
    """No such container, or no such log (yet)."""


def container_names(pod_dir: Path) -> list[str]:
    """Init containers then containers, in spec order ([] if the pod was never launched)."""
    spec = podfs.read_json(str(pod_dir / podfs.SPEC)) or {}
    kinds = ("initContainers", "containers")
    return [c["name"] for kind in kinds for c in spec.get(kind) or []]


def default_container(pod_dir: Path) -> str:
    """The first regular container (what kubectl picks when the pod has one)."""
    spec = podfs.read_json(str(pod_dir / podfs.SPEC)) or {}
    containers = spec.get("containers") or []
    if not containers:
        raise LogsError(f"pod {_pod(pod_dir)} not found")
    return str(containers[0]["name"])


def log_files(pod_dir: Path, container: str) -> list[tuple[int, Path]]:
    """(restart, path) of every run's log, oldest first."""
    pattern = re.compile(rf"^{re.escape(container)}\.(\d+)\.log$")
    found = []
    if pod_dir.is_dir():
        for path in pod_dir.iterdir():
            match = pattern.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
    return sorted(found)


def log_path(pod_dir: Path, container: str, *, previous: bool = False) -> Path | None:
    """The current run's log (or the previous run's), None if there is none (yet)."""
    _check(pod_dir, container)
    files = log_files(pod_dir, container)
    wanted = -2 if previous else -1
    if len(files) < -wanted:
        return None
    return files[wanted][1]


def read_log(
    pod_dir: Path, container: str, *, previous: bool = False, tail: int | None = None
) -> bytes:
    """The log of the current (or previous) run; the last `tail` lines only if given."""
    path = log_path(pod_dir, container, previous=previous)
    if path is None:
        if previous:
            raise LogsError(
                f'previous terminated container "{container}" in pod "{_pod(pod_dir)}" not found'
            )
        return b""
    return read_path(path, tail)


def pick_attempt(found: list[Attempt], number: int | None, pod: str) -> Attempt:
    """Attempt `number` of the pod (1 = the first; -1 = the latest, -2 the one before...),
    the latest when None."""
    if number is None:
        return found[-1]
    if number < 0 and -number <= len(found):
        return found[number]
    for attempt in found:
        if attempt.number == number:
            return attempt
    span = f"{found[0].number}" if len(found) == 1 else f"{found[0].number}-{found[-1].number}"
    if number == 0:
        raise LogsError("attempts are numbered from 1 (the first); -1 is the latest")
    raise LogsError(f'pod "{pod}" has no attempt {number}: the attempts known are {span}')


def check_container(attempt: Attempt, container: str, pod: str) -> None:
    names = attempt.containers
    if container not in names:
        raise LogsError(
            f'container "{container}" is not valid for pod "{pod}"; '
            f"choose one of: {', '.join(names)}"
        )


def run_log(
    found: list[Attempt], chosen: Attempt, container: str, *, previous: bool = False
) -> Path | None:
    """The log of the latest run of `container` in attempt `chosen` — or, `previous`, of
    the run before it (in that attempt, else the last of the attempts before); None when
    there is none."""
    mine = chosen.runs(container)
    if not previous:
        return mine[-1][1] if mine else None
    if len(mine) >= 2:
        return mine[-2][1]
    for attempt in reversed([a for a in found if a.number < chosen.number]):
        runs = attempt.runs(container)
        if runs:
            return runs[-1][1]
    return None


def read_path(path: Path, tail: int | None = None, view: logtimes.View | None = None) -> bytes:
    """The file, or its last `tail` lines (read from its end: `logtail`), as `view` asks
    (then `tail` counts the lines before `view.since` leaves some out, as the kubelet's)."""
    with open_log(path) as f:
        data = f.read() if tail is None else logtail.last_lines(f, tail)
        if view is None or view.plain:
            return data
        end, modified = f.tell(), os.fstat(f.fileno()).st_mtime_ns
    stamper = logtimes.Stamper(str(path), view)
    return stamper.feed(data, end - len(data), modified) + stamper.end(modified)


def open_log(path: Path) -> BinaryIO:
    """The log file `path` opened to read, never through a link (LogsError for one)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | ownership.NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LogsError(f"{path} is a symbolic link, not a log: it is not read") from None
        raise
    return os.fdopen(fd, "rb")


def follow(
    pod_dir: Path,
    container: str,
    *,
    poll_interval: float = 0.1,
    tail: int | None = None,
    idle: bool = False,
    view: logtimes.View | None = None,
) -> Iterator[bytes]:
    """Chunks of the current run's log as they are written, until that run ended. With
    `idle`, an empty chunk where it would wait `poll_interval`: the caller waits (or stops),
    so an async server holds no thread while a log is quiet. With a `view` that asks for
    something, whole lines (one is held until its end is written, or the run ends)."""
    _check(pod_dir, container)
    while True:
        files = log_files(pod_dir, container)
        status = read_status(pod_dir)
        if files:
            break
        if status.finished or not status.launched:
            return
        if idle:
            yield b""
        else:
            time.sleep(poll_interval)
    restart, path = files[-1]
    stamper = None if view is None or view.plain else logtimes.Stamper(str(path), view)

    def seen(data: bytes, end: int) -> bytes:
        """`data`, read up to offset `end`, as `view` asks."""
        return data if stamper is None else stamper.feed(data, end - len(data))

    with open_log(path) as f:
        if tail is not None:
            data = seen(logtail.last_lines(f, tail), f.tell())
            if data:
                yield data
        while True:
            chunk = f.read(CHUNK)
            if chunk:
                chunk = seen(chunk, f.tell())
                if chunk:  # (else all of it left out, or held: read on)
                    yield chunk
                continue
            if os.fstat(f.fileno()).st_size < f.tell():  # rotated (`logrotate`): from its start
                f.seek(0)
                continue
            if run_ended(read_status(pod_dir), container, restart):
                rest = seen(f.read(), f.tell())
                if stamper is not None:
                    rest += stamper.end()
                if rest:
                    yield rest
                return
            if idle:
                yield b""
            else:
                time.sleep(poll_interval)


def run_ended(status: RunStatus, container: str, restart: int) -> bool:
    """Has run `restart` of `container` ended (by the status)?"""
    if status.finished or not status.launched:
        return True
    c = status.container(container)
    if c is None:
        return False
    if c.restart_count > restart:
        return True
    if c.restart_count < restart:
        return False
    return c.state == "terminated" or (c.state == "waiting" and c.reason == "CrashLoopBackOff")


def _check(pod_dir: Path, container: str) -> None:
    names = container_names(pod_dir)
    if not names:
        raise LogsError(f'pod "{_pod(pod_dir)}" not found')
    if container not in names:
        raise LogsError(
            f'container "{container}" is not valid for pod "{_pod(pod_dir)}"; '
            f"choose one of: {', '.join(names)}"
        )


def _pod(pod_dir: Path) -> str:
    return pod_dir.name
