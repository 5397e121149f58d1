"""`python -m vcflow.podserver`: the processes that run pods apart from the control
plane, so that pods outlive it (SIGKILL included) and are never started twice.

    run   <pod dir>                                  supervise one pod, exit when it ended
    reap  <pod dir>                                  end a pod whose supervisor died (`reaper`)
    serve <runtime dir> <pods dir> [idle seconds]    the pod server

Both kinds drive pod state machines (`supervisor.PodSupervisor`) with one `Loop`: a single
thread, select() on a self-pipe that SIGCHLD wakes, waitpid(-1) to reap container processes,
a timer heap for back-offs, deadlines and grace periods, a look at the logs' sizes every
`logrotate.CHECK` seconds (their rotation, and their time index: `logtimes`). Signals:
SIGUSR1 = "a terminate file was written, look" (sent by `PodRunner.terminate`); SIGTERM =
terminate every pod of this process (grace from its terminate file, else its spec's
default) and exit once they ended.

Modes (`pods.PodRunner(mode=...)`):

- **server** (default): one *pod server* per state directory supervises every pod, started
  detached (own session) by the first launch; `launch` writes `run <pod dir>` to its FIFO
  (`<state>/runtime/server.fifo`). No interpreter start and no fork per pod: a pod costs its
  container processes, two or three small status writes (`supervisor.COALESCE`) and a few
  syscalls, most of it creating inodes (`podfs`). The trade-off: if the server itself dies
  (SIGKILL, OOM), *every* pod it was running becomes `SupervisorLost` (their processes keep
  running until terminated: `reaper`) — where a supervisor per pod would lose one. The
  control plane dying loses nothing either way. A fork per pod was measured
  (docs/benchmarks.md): the copy-on-write of the interpreter cost more CPU per pod than the
  whole budget, so the server supervises in-process.
- **exec**: the control plane starts `python -m vcflow.podserver run <pod dir>`
  per pod (new session): full isolation, one interpreter start per pod.

Trust (docs/security.md): the server makes its FIFO anew when it starts — one found there is
removed if it is this user's, refused if not — and opens its lock never through a link
(`ownership`). It runs only a pod directory `<pods dir>/<namespace>/<name>` that is a real
directory of this user no one else can write, holding a spec.json sealed with the state
directory's launch key (`seals`); anything else asked for, or found by its scan, is refused
with a line in its log. A `run`/`reap` line names a pod directory; nothing else is run.

The server holds `server.lock` (flock) while it lives, so there is one per state directory.
At start, and after it closed its FIFO to exit, it scans `<pods dir>` for pods `launched` but
not claimed (no `status.json`) and runs them — so a request lost with a dead server, or
written while it exits, still runs, once (the claim decides); if that scan finds any, it opens
the FIFO again and goes on. It exits when it runs no pod and got no request for `idle` seconds
(default 60), or at once when idle after a `stop` request. Output: `<state>/runtime/server.log`.
"""

from __future__ import annotations

import contextlib
import fcntl
import heapq
import os
import select
import signal
import sys
import time
import traceback
from types import FrameType
from typing import Protocol

from vcflow.podserver import logrotate, ownership, podfs, seals, statusfile
from vcflow.podserver.descendants import Descendants
from vcflow.podserver.reaper import Reaper
from vcflow.podserver.supervisor import PodSupervisor

FIFO, LOCK, LOG, START_LOCK = "server.fifo", "server.lock", "server.log", "start.lock"
DEFAULT_IDLE = 60.0


class Task(Protocol):
    @property
    def finished(self) -> bool: ...

    def step(self, now: float) -> None: ...

    def wake_at(self) -> float | None: ...


class Loop:
    """Drives pod supervisors and reapers in this (single-threaded) process, for the pods
    of `pods_dir` only."""

    def __init__(self, pods_dir: str) -> None:
        self.pods_dir = os.path.abspath(pods_dir)
        me = os.getpid()
        self.owner = (me, podfs.process_start(me))
        self.registry: dict[int, PodSupervisor] = {}
        self.tasks: dict[str, Task] = {}
        self.timers: list[tuple[float, str]] = []
        self.scheduled: dict[str, float] = {}
        self.check_terminate = False
        self.terminate_all = False
        self.descendants = Descendants()  # (a subreaper: it must reap what it adopts)
        self.next_rotation = time.monotonic() + logrotate.CHECK
        self.wake_r, wake_w = os.pipe()
        for fd in (self.wake_r, wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, self._on_signal)
        signal.signal(signal.SIGUSR1, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGUSR1:
            self.check_terminate = True
        elif signum == signal.SIGTERM:
            self.terminate_all = True

    def add_pod(self, pod_dir: str) -> None:
        """Claim and start the pod in `pod_dir`, unless it is claimed already or is not one
        of ours (`refusal`)."""
        pod_dir = os.path.abspath(pod_dir)
        if pod_dir in self.tasks or statusfile.claimed(pod_dir):
            return
        try:
            refused = self.refusal(pod_dir)
            if refused:
                _log(f"{pod_dir}: refused: {refused}")
                return
            sup = PodSupervisor(pod_dir, self.owner, self.registry, self.descendants)
            claimed = sup.claim()
        except (OSError, ValueError) as exc:
            _log(f"{pod_dir}: cannot supervise: {exc}")
            return
        if claimed:
            if self.terminate_all:
                sup.term_requested = True
            self.tasks[pod_dir] = sup
            self._step(pod_dir, time.monotonic())

    def add_reaper(self, pod_dir: str) -> None:
        pod_dir = os.path.abspath(pod_dir)
        task = self.tasks.get(pod_dir)
        if task is not None:  # supervised here after all (its status said otherwise: forged)
            if isinstance(task, PodSupervisor):
                task.check_terminate()
                self._step(pod_dir, time.monotonic())
            return
        refused = self.refusal(pod_dir)
        if refused:
            _log(f"{pod_dir}: refused: {refused}")
            return
        reaper = Reaper(pod_dir)
        now = time.monotonic()
        try:
            if reaper.begin(now):
                self.tasks[pod_dir] = reaper
                self._step(pod_dir, now)
        except (OSError, ownership.Unsafe) as exc:
            _log(f"{pod_dir}: cannot reap: {exc}")

    def refusal(self, pod_dir: str) -> str | None:
        """Why `pod_dir` (absolute) is not a pod directory of ours — not
        `<pods dir>/<namespace>/<name>`, a link, another user's or writable by others —
        else None. (Its spec.json's seal is checked as it is read: `PodSupervisor`.)"""
        namespace = os.path.dirname(pod_dir)
        if os.path.dirname(namespace) != self.pods_dir:
            return f"not a pod directory of {self.pods_dir}"
        try:
            ownership.check_dir(namespace)
            ownership.check_dir(pod_dir)
        except FileNotFoundError:
            return "no such directory"
        except ownership.Unsafe as exc:
            return str(exc)
        return None

    def run_once(self, fds: list[int], limit: float | None) -> list[int]:
        """Handle what happened, then wait (at most `limit` s) for more — not at all when a
        task ended, so that the caller sees it; the `fds` ready."""
        count = len(self.tasks)
        now = time.monotonic()
        due = self._reap(now)
        if self.check_terminate or self.terminate_all:
            for pod_dir, task in self.tasks.items():
                if isinstance(task, PodSupervisor):
                    task.check_terminate()
                    task.term_requested |= self.terminate_all
                    due.add(pod_dir)
            self.check_terminate = False
        while self.timers and self.timers[0][0] <= now:
            when, pod_dir = heapq.heappop(self.timers)
            if self.scheduled.get(pod_dir) == when:
                del self.scheduled[pod_dir]
                due.add(pod_dir)
        for pod_dir in due:
            self._step(pod_dir, now)
        self.descendants.tick(now)
        if now >= self.next_rotation:
            self.next_rotation = now + logrotate.CHECK
            for task in self.tasks.values():
                if isinstance(task, PodSupervisor):
                    task.rotate_logs()
        timeout = 0.0 if len(self.tasks) < count else limit
        wakes = (
            self.timers[0][0] if self.timers else None,
            self.descendants.wake_at(),
            self.next_rotation if self.tasks else None,
        )
        wake = min((w for w in wakes if w is not None), default=None)
        if wake is not None:
            until = max(0.0, wake - time.monotonic())
            timeout = until if timeout is None else min(timeout, until)
        ready, _, _ = select.select([self.wake_r, *fds], [], [], timeout)
        with contextlib.suppress(BlockingIOError):
            while os.read(self.wake_r, 4096):
                pass
        return [fd for fd in ready if fd != self.wake_r]

    def _reap(self, now: float) -> set[str]:
        due: set[str] = set()
        while True:  # (containers, and what the subreaper adopted)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            sup = self.registry.get(pid)
            if sup is not None:
                sup.exited(pid, status, now)
                due.add(sup.dir)
        return due

    def _step(self, pod_dir: str, now: float) -> None:
        task = self.tasks.get(pod_dir)
        if task is None:
            return
        try:
            task.step(now)
        except Exception as exc:
            _log(f"{pod_dir}: {traceback.format_exc()}")
            if isinstance(task, PodSupervisor):
                with contextlib.suppress(Exception):
                    task.abort(f"{type(exc).__name__}: {exc}")
            del self.tasks[pod_dir]
            return
        if task.finished:
            del self.tasks[pod_dir]
            self.scheduled.pop(pod_dir, None)
            return
        when = task.wake_at()
        if when is not None and self.scheduled.get(pod_dir) != when:
            self.scheduled[pod_dir] = when
            heapq.heappush(self.timers, (when, pod_dir))


class Server:
    def __init__(self, runtime_dir: str, pods_dir: str, idle: float) -> None:
        self.runtime_dir, self.pods_dir, self.idle = runtime_dir, pods_dir, idle
        self.stopping = False

    def serve(self) -> int:
        try:
            ownership.check_dir(self.runtime_dir)
            ownership.check_dir(self.pods_dir)
            lock = ownership.open_lock(os.path.join(self.runtime_dir, LOCK))
            fcntl.flock(lock, fcntl.LOCK_EX)  # waits for a server on its way out
            seals.load_key(self.runtime_dir)
            fifo = os.path.join(self.runtime_dir, FIFO)
            made = ownership.fresh_fifo(fifo)  # (no other server is: this one holds the lock)
        except (OSError, ownership.Unsafe) as exc:
            _log(f"the pod server cannot start: {exc}")
            return 1
        loop = Loop(self.pods_dir)
        _log(f"serving; a container's processes end with it by {loop.descendants.mode}")
        while True:
            try:
                rfd = ownership.open_fifo(fifo, os.O_RDONLY | os.O_NONBLOCK, made)
            except (OSError, ownership.Unsafe):  # (gone, or replaced: made anew)
                made = ownership.fresh_fifo(fifo)
                rfd = ownership.open_fifo(fifo, os.O_RDONLY | os.O_NONBLOCK, made)
            wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK | ownership.NOFOLLOW)  # no EOF
            self.scan(loop)
            self.listen(loop, rfd)
            os.close(rfd)
            os.close(wfd)
            self.scan(loop)  # requests written before the FIFO closed and never read
            if not loop.tasks:
                loop.descendants.close()
                return 0

    def listen(self, loop: Loop, rfd: int) -> None:
        pending = b""
        last = time.monotonic()
        while True:
            if loop.tasks:
                last = time.monotonic()
                limit = None
            elif self.stopping or loop.terminate_all:
                return
            else:
                limit = last + self.idle - time.monotonic()
                if limit <= 0:
                    return
            if loop.run_once([rfd], limit):
                data = _read_all(rfd)
                last = time.monotonic()
                *lines, pending = (pending + data).split(b"\n")
                for line in lines:
                    self.handle(loop, line.decode(errors="replace"))

    def handle(self, loop: Loop, line: str) -> None:
        verb, _, pod_dir = line.partition(" ")
        if verb == "run" and pod_dir:
            loop.add_pod(pod_dir)
        elif verb == "reap" and pod_dir:
            loop.add_reaper(pod_dir)
        elif verb == "stop":
            self.stopping = True
        elif line:
            _log(f"unknown request {line!r}")

    def scan(self, loop: Loop) -> None:
        for pod_dir in unclaimed(self.pods_dir):
            loop.add_pod(pod_dir)


def unclaimed(pods_dir: str) -> list[str]:
    """Pod dirs launched (spec.json) but not claimed (no status.json); links are skipped."""
    found: list[str] = []
    with contextlib.suppress(FileNotFoundError):
        for ns in os.scandir(pods_dir):
            if not ns.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(FileNotFoundError):
                for pod in os.scandir(ns.path):
                    if not pod.is_dir(follow_symlinks=False):
                        continue
                    launched = os.path.exists(os.path.join(pod.path, podfs.SPEC))
                    if launched and not statusfile.claimed(pod.path):
                        found.append(pod.path)
    return found


def run_pod(pod_dir: str) -> int:
    """Exec mode: supervise the one pod, return when it ended."""
    loop = Loop(_pods_dir(pod_dir))
    loop.add_pod(pod_dir)
    return _until_done(loop)


def reap_pod(pod_dir: str) -> int:
    loop = Loop(_pods_dir(pod_dir))
    loop.add_reaper(pod_dir)
    return _until_done(loop)


def _until_done(loop: Loop) -> int:
    """Run `loop` until its one task is done (exit code 0)."""
    while loop.tasks:
        loop.run_once([], None)
    loop.descendants.close()
    return 0


def _pods_dir(pod_dir: str) -> str:
    """`<pods dir>` of `<pods dir>/<namespace>/<name>`."""
    return os.path.dirname(os.path.dirname(os.path.abspath(pod_dir)))


def _read_all(fd: int) -> bytes:
    chunks = []
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _log(message: str) -> None:
    print(f"{podfs.utc_now()} vcflow supervisor {os.getpid()}: {message}", file=sys.stderr)
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2:
        os.chdir(args[1])  # pin no other directory
    if len(args) == 2 and args[0] == "run":
        return run_pod(args[1])
    if len(args) == 2 and args[0] == "reap":
        return reap_pod(args[1])
    if len(args) in (3, 4) and args[0] == "serve":
        idle = float(args[3]) if len(args) == 4 else DEFAULT_IDLE
        return Server(args[1], args[2], idle).serve()
    print(__doc__, file=sys.stderr)
    return 2
