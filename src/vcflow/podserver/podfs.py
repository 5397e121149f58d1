"""The on-disk layout of a pod run, and the file and process helpers that its supervisor and the
control plane share. Standard library only and light: the supervisor process imports it.

Layout (`<state>` is the state directory)::

    <state>/pods/<namespace>/<name>/    one pod (its "pod dir")
        spec.json       what to run, resolved (`launch.build_spec`), created O_CREAT|O_EXCL by
                        `PodRunner.launch`, sealed (`seals`): it is also the marker "this pod
                        was launched"
        status.json     written only by the pod's supervisor (or its reaper); the first write,
                        published with link(2), is the *claim*: whoever creates it runs the pod
                        (its format, and the terminate file's: `statusfile`)
        terminate       the grace period in seconds, written by `terminate` before it signals
        supervisor.log  the supervisor's own output (exec mode; the server has server.log)
        reap.lock       held by the reaper of a pod whose supervisor died
        <container>.<restart>.log        stdout+stderr of one run of a container
        <container>.<restart>.log.times  when its lines were written (`logtimes`)
        <container>.termination-log      its termination message file, made empty before
                        each run (`reset_termination`); the status gets at most 4096 bytes
                        of it when the run ends (`termination_message`)
        work/           the default working directory (made at the claim when used)
        devices.json    the GPUs a pod was given, if any (`devicemanager`)
        ...             the files a launch request brings (`launch.PodFile`)
    <state>/runtime/    server.fifo, server.lock, start.lock, server.log, events.fifo,
                        launch.key (`seals`)
    <state>/logs/<namespace>/<name>/<attempt>/   the logs of removed pods (`loghistory`)

Metadata operations dominate the cost of a short pod on ext4 (docs/benchmarks.md, "Figures
behind the design"), so a pod makes few: its directory, spec.json, the claim, work/, one log
file per run (and its time index once a look saw the run write) and one temp file per later
status write — the logs are not in a directory of their own.

Writes are atomic (temp file + rename), so a reader never sees half a file and a process killed
with SIGKILL leaves the old or the new content. With `fsync` they are also durable across an OS
crash or power loss (file and directory fsync'd), at the cost of a disk flush per write — off
by default, as the store's `synchronous=NORMAL` (see `pods.PodRunner`).

Every directory is made 0700 and every file 0600 (`ownership`); no state file is opened through
a link (O_NOFOLLOW), temp files are made O_EXCL under names no other process can guess, and
reads never block on a FIFO put in a file's place (O_NONBLOCK). spec.json and status.json are
sealed with the state directory's launch key (`seals`).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import stat
import time
from typing import Any

from vcflow.podserver import ownership

SPEC = "spec.json"
STATUS = "status.json"
TERMINATE = "terminate"
SUPERVISOR_LOG = "supervisor.log"
WORK = "work"
PODS = "pods"
RUNTIME = "runtime"
EVENTS_FIFO = "events.fifo"
#: The kubelet's bounds: a termination message is at most 4096 bytes of the file; a
#: message taken from the log (`FallbackToLogsOnError`) its last 80 lines, at most 2048 bytes.
MESSAGE_MAX = 4096
FALLBACK_BYTES, FALLBACK_LINES = 2048, 80


def utc_now() -> str:
    """Kubernetes' timestamp format (`api.clock.rfc3339`), without importing datetime."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def log_name(container: str, restart: int) -> str:
    return f"{container}.{restart}.log"


def termination_name(container: str) -> str:
    """The termination message file of a container (the file its `terminationMessagePath`
    names on a cluster; `$VCFLOW_OUTPUTS` locally when the container's env has it)."""
    return f"{container}.termination-log"


def reset_termination(path: str) -> None:
    """Make `path` a new, empty, owner-only file before a run starts (the kubelet gives each
    container instance a file of its own): whatever the last run left there goes, a link
    is removed, never followed. OSError if it cannot be made (a directory in its place)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    os.close(os.open(path, _NEW, ownership.FILE_MODE))


def termination_message(path: str, log: str | None = None) -> str:
    """The termination message of a run that ended: the first `MESSAGE_MAX` bytes of its
    file (the kubelet truncates there), decoded as UTF-8 with errors replaced; `""` when it
    is empty, missing, or not a regular file (never read through a link, nor waiting on a
    FIFO). `log`: the run's log, whose tail is the message when the file is empty (the
    caller passes it for a failed run of `terminationMessagePolicy: FallbackToLogsOnError`)."""
    data = _read_head(path, MESSAGE_MAX)
    if not data and log is not None:
        data = _log_tail(log)
    return data.decode("utf-8", "replace") if data else ""


def _read_head(path: str, limit: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | ownership.NOFOLLOW)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        chunks: list[bytes] = []
        left = limit
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _log_tail(log: str) -> bytes:
    """The kubelet's fallback message: the last `FALLBACK_LINES` lines of the log, of which
    the last `FALLBACK_BYTES` bytes — the same as the last lines of the last bytes."""
    try:
        fd = os.open(log, os.O_RDONLY | os.O_NONBLOCK | ownership.NOFOLLOW)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        start = max(0, st.st_size - FALLBACK_BYTES)
        data = os.pread(fd, FALLBACK_BYTES, start)
    except OSError:
        return b""
    finally:
        os.close(fd)
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    for _ in range(FALLBACK_LINES):
        end = data.rfind(b"\n", 0, end)
        if end < 0:
            return data
    return data[end + 1 :]


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _tmp(path: str) -> str:
    """A temp name beside `path` that no other process can guess (and so plant a link at)."""
    return f"{path}.{_TMP_TAG}{next(_tmp_count)}.tmp"


_TMP_TAG = os.urandom(6).hex()  # (per process: one getrandom, not one per file)
_tmp_count = itertools.count()
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | ownership.NOFOLLOW


def make_spare(path: str) -> str:
    """Create the (empty) temp file of the next `write_bytes(path, spare=...)` now, off the
    critical path: that write then reuses its inode instead of creating one. Its name."""
    spare = _tmp(path)
    os.close(os.open(spare, _NEW, ownership.FILE_MODE))
    return spare


def _fill(fd: int, data: bytes, fsync: bool) -> None:
    """Write all of `data` to the new file `fd` (fsync'd if asked) and close it."""
    try:
        write_all(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _open_spare(spare: str) -> int:
    """The spare `make_spare` made, if it is still that empty file of ours; else -1."""
    try:
        fd = os.open(spare, os.O_WRONLY | ownership.NOFOLLOW)
    except OSError:
        return -1
    st = os.fstat(fd)
    if st.st_nlink == 1 and st.st_size == 0 and st.st_uid == os.geteuid():
        return fd
    os.close(fd)
    return -1


def write_bytes(
    path: str,
    data: bytes,
    *,
    fsync: bool = False,
    exclusive: bool = False,
    spare: str | None = None,
) -> bool:
    """Replace `path` atomically with `data`. `exclusive`: publish only if `path` does not
    exist yet (link(2)); returns False when it did. With `fsync`, durable on return.
    `spare`: the temp file `make_spare` made for this write."""
    fd = _open_spare(spare) if spare else -1
    tmp = spare if fd >= 0 and spare else _tmp(path)
    if fd < 0:
        fd = os.open(tmp, _NEW, ownership.FILE_MODE)
    _fill(fd, data, fsync)
    if exclusive:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
    else:
        os.replace(tmp, path)
    if fsync:
        fsync_dir(os.path.dirname(path) or ".")
    return True


def write_json(path: str, data: Any, *, fsync: bool = False, exclusive: bool = False) -> bool:
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return write_bytes(path, body, fsync=fsync, exclusive=exclusive)


def read_json(path: str) -> Any:
    """The parsed file, or None when it does not exist (or, never expected, is not JSON)."""
    try:
        return load_json(path)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None


def load_json(path: str) -> Any:
    """The parsed file, in one read: FileNotFoundError (or NotADirectoryError) when absent,
    ValueError when it is not JSON — for a file only ever published whole (`write_bytes`),
    that is a file an OS crash cut short — or is a link."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path} is a symbolic link") from None
        raise
    return json.loads(data)


def read_bytes(path: str) -> bytes:
    """The whole file, never through a link (ELOOP) nor waiting on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | ownership.NOFOLLOW)
    try:
        data = os.read(fd, _CHUNK)
        if len(data) < _CHUNK:  # (a short read of a regular file is its end: one read)
            return data
        chunks = [data]
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


_CHUNK = 65536


def create(path: str, data: bytes, *, fsync: bool = False) -> bool:
    """Create `path` holding `data` (O_EXCL: False when it existed, or is a link). Not
    atomic for readers, who must take a file they cannot parse as not there yet."""
    try:
        fd = os.open(path, _NEW, ownership.FILE_MODE)
    except FileExistsError:
        return False
    _fill(fd, data, fsync)
    if fsync:
        fsync_dir(os.path.dirname(path) or ".")
    return True


def process_start(pid: int, *, zombie: bool = False) -> int | None:
    """The start time of live process `pid` (clock ticks since boot, /proc/<pid>/stat field
    22), None when there is no such process or it is a zombie (`zombie`: then its start time
    too — that of a child not reaped yet is still its own). It tells a reused pid apart.
    Without /proc (not Linux) a live pid reports 0."""
    if pid <= 0:
        return None
    try:
        fields = proc_stat(pid)
    except FileNotFoundError:
        return None
    except OSError:
        if not os.path.isdir("/proc/self"):
            return _kill_zero(pid)
        return None
    if fields[0] in ENDED and not zombie:
        return None
    return int(fields[19])


#: /proc states of a process that has ended: a zombie (not reaped yet), dead
ENDED = (b"Z", b"X")


def proc_stat(pid: int) -> list[bytes]:
    """The fields of /proc/<pid>/stat from the third on (the command name before them may
    hold spaces and parentheses): [0] the state, [1] the parent pid, [2] the process group,
    [19] the start time. Raises OSError (FileNotFoundError: no such process)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read()
    return data[data.rindex(b")") + 2 :].split()


def _kill_zero(pid: int) -> int | None:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return 0
    return 0


def same_process(pid: int | None, start: int | None) -> bool:
    """Is `pid` still the process that started at `start` (see `process_start`)?"""
    if not pid:
        return False
    now = process_start(pid)
    return now is not None and (start is None or now == start or now == 0)


def notify(fifo: str | None, message: str) -> None:
    """Write one line to a FIFO if someone reads it; never blocks, never fails. The FIFO is
    opened once per process and kept (a pod server notifies two or three times per pod; an
    open and a close each time cost more than the write). Once its reader is gone the write
    fails (EPIPE) and the next notification opens it again; lines written in between stay
    in the pipe for the next reader, for whom they are harmless hints."""
    if not fifo:
        return
    fd = _fifos.get(fifo)
    if fd is None:
        try:
            fd = ownership.open_fifo(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader; ENOENT: none set up
            return
        except ownership.Unsafe:  # not our FIFO (a file, a link): never written to
            return
        _fifos[fifo] = fd
    try:
        os.write(fd, (message + "\n").encode())
    except BlockingIOError:  # the reader is behind and will sweep
        pass
    except OSError:  # EPIPE: the reader is gone
        del _fifos[fifo]
        with contextlib.suppress(OSError):
            os.close(fd)


_fifos: dict[str, int] = {}  # FIFO path → write end (`notify`)


def find_executable(name: str, path: str | None, cwd: str) -> str | None:
    """Where a container's argv[0] is, as a container runtime looks it up: a name with a
    `/` relative to the working directory, else in the container's own `PATH`."""
    if "/" in name:
        return os.path.join(cwd, name)
    for folder in (path if path is not None else os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if not os.path.isabs(candidate):
            candidate = os.path.join(cwd, candidate)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
