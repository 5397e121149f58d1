"""The pod execution layer as the runtime shell uses it: `PodRunner` launches pods, waits for
their changes, terminates and removes them, and re-attaches to them after a restart.

    runner = PodRunner(state_dir)                   # one per state directory
    handle = runner.launch(PodRequest(ns, name, spec, uid=..., labels=..., env=..., files=...))
    for h in runner.wait(handles, timeout=1.0):     # the handles whose status changed
        h.last.phase, h.last.exit_code, h.last.wire # wire: an api.pod.PodStatus dict
    runner.terminate(handle, grace_seconds)         # returns at once; `wait` sees the end
    runner.remove(handle)                           # an ended pod's directory (logs kept)
    runner.adopt_all()                              # after a control-plane restart

Guarantees:
- **Exactly once.** `launch` creates spec.json O_EXCL — the "launched" marker — then asks
  for a supervisor. A pod already launched (same name and uid) is not started again: `launch`
  returns a handle on it; a different uid replaces an *ended* pod of that name (LaunchError
  while it runs). A spec.json not sealed for its directory — a launch that died half-way, a
  planted one — cannot have been claimed: `launch` removes that directory and launches anew.
  A supervisor claims a pod before starting anything and only one claim can succeed
  (`supervisor`), so a request lost in a crash is repaired without a second start: the pod
  server starts launched-but-unclaimed pods when it starts, `adopt` asks again for an
  unclaimed pod, and so does `wait` for one still unclaimed after `claim_timeout` (2 s).
- **Detached.** Supervisors run in sessions of their own (`podserver`) and outlive the
  control plane, SIGKILL included; a new `PodRunner` on the state directory adopts their pods.
  A dead supervisor is reported as `SupervisorLost` (`status`); `terminate` reaps its pod.
- **Durable status.** Every status write is atomic; `fsync=True` also makes it survive an OS
  crash (a disk flush per write, about three per pod), as the store's `synchronous="FULL"`;
  the default survives the death of any process, as `synchronous=NORMAL`.

`activeDeadlineSeconds` is enforced by the supervisor, not by the caller. A `handle.last` is
the status as of its latest read (`launch`/`adopt` read it once): `wait` reports changes after
that, so check `last` after `launch` too — a pod can end before `wait` is called.

Waiting (`wait`): a supervisor announces each status write as one line (the pod dir) on
`<state>/runtime/events.fifo`, which the runner holds open; `wait` sleeps in select() on it,
re-reads only the announced pods, and re-reads every given pod each `sweep_interval` (0.5 s),
which catches a supervisor that died (the dead announce nothing). One runner per state
directory should read the FIFO; a second one still works, from its sweeps, just slower.

Supervisor processes are started with `posix_spawn`, in a new session, stdin /dev/null,
output appended to a log, every inheritable descriptor of the control plane closed, and are
reaped by the runner when they end.

Trust (docs/security.md): the runner makes the state directory, pods/, runtime/ and each
pod directory owner-only and refuses one another user owns or can write, or a link in their
place (`UnsafeState`, or a `LaunchError` for one pod); it makes events.fifo anew; it makes the
state directory's launch key and seals each spec.json with it (`seals`), and a status is
believed only if sealed for this pod and this launch (`status.read_status`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import shutil
import signal
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from vcflow.api.errors import RuntimeFailure
from vcflow.podserver import logrotate, ownership, podfs, seals, server, statusfile
from vcflow.runtime import loghistory
from vcflow.runtime.launch import LaunchError, PodRequest, build_spec, prepare_pod_dir
from vcflow.runtime.status import PodHandle, adopt, read_status

Mode = Literal["server", "exec"]
SERVER_START_TIMEOUT = 15.0
_FIFO_READ, _FIFO_WRITE = os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK


class UnsafeState(RuntimeFailure):
    """A path of the state directory that another user owns or can write, or a link where
    a file or directory belongs (`ownership`): the one-line refusal, with the fix."""


class PodRunner:
    def __init__(
        self,
        state_dir: Path,
        *,
        mode: Mode = "server",
        fsync: bool = False,
        server_idle: float = server.DEFAULT_IDLE,
        sweep_interval: float = 0.5,
        claim_timeout: float = 2.0,
        keep_attempts: int = loghistory.KEEP,
        log_limits: logrotate.Limits = logrotate.KUBELET,
    ) -> None:
        self.state_dir = Path(state_dir).absolute()
        self.keep_attempts = keep_attempts  # earlier attempts' logs kept per pod name
        self.log_limits = log_limits  # each container run's log rotation (`logrotate`)
        self.pods_dir = self.state_dir / podfs.PODS
        self.runtime_dir = self.state_dir / podfs.RUNTIME
        self.mode, self.fsync, self.server_idle = mode, fsync, server_idle
        self.sweep_interval, self.claim_timeout = sweep_interval, claim_timeout
        self.events = str(self.runtime_dir / podfs.EVENTS_FIFO)
        try:
            ownership.make_dir(str(self.state_dir), parents=True, follow=True)
            ownership.make_dir(str(self.pods_dir))
            ownership.make_dir(str(self.runtime_dir))
            seals.make_key(str(self.runtime_dir))
            made = ownership.fresh_fifo(self.events)
            self._events_r = ownership.open_fifo(self.events, _FIFO_READ, made)
            self._events_w = ownership.open_fifo(self.events, _FIFO_WRITE, made)
        except ownership.Unsafe as exc:
            raise UnsafeState(str(exc)) from None
        self._namespaces: set[str] = set()  # pods/<namespace> made or checked
        self._dirty: set[str] = set()
        self._children: set[int] = set()
        self._asked: dict[Path, float] = {}
        self._next_sweep = 0.0
        self._to_server = -1  # the pod server's FIFO (`_server_fifo`)

    # -- launching -----------------------------------------------------------------------

    def pod_dir(self, namespace: str, name: str) -> Path:
        return self.pods_dir / namespace / name

    def launch(self, request: PodRequest) -> PodHandle:
        """Start the pod unless it was launched before (then: a handle on that run)."""
        pod_dir = self.pod_dir(request.namespace, request.name)
        existing = seals.read_spec(str(pod_dir))
        if existing is not None:
            if existing.get("uid") == request.uid:
                return self._handle(pod_dir, request.uid, existing.get(seals.LAUNCH))
            self._replace_stale(pod_dir, request)
        self._make_pod_dir(pod_dir, request)
        spec = build_spec(request, pod_dir, fsync=self.fsync, notify=self.events)
        spec[logrotate.SPEC_KEY] = self.log_limits.wire()
        prepare_pod_dir(pod_dir, request)
        body = seals.seal_spec(str(pod_dir), spec)
        if not podfs.create(str(pod_dir / podfs.SPEC), body, fsync=self.fsync):
            return self._handle(pod_dir)  # a concurrent launch won
        self._ask("run", pod_dir)
        return self._handle(pod_dir, request.uid, spec[seals.LAUNCH])

    def _make_pod_dir(self, pod_dir: Path, request: PodRequest) -> None:
        """The pod's directory, made owner-only — or the one there, checked: LaunchError if
        it is not this user's own; one holding a spec.json not sealed for it (a launch an
        OS crash cut short, a planted one) is removed and made again."""
        try:
            if request.namespace not in self._namespaces:
                ownership.make_dir(str(pod_dir.parent))
                self._namespaces.add(request.namespace)
            try:
                os.mkdir(pod_dir, ownership.DIR_MODE)
                return
            except FileExistsError:
                ownership.check_dir(str(pod_dir))
        except ownership.Unsafe as exc:
            raise LaunchError(f"pod {request.namespace}/{request.name}: {exc}") from None
        if os.path.lexists(pod_dir / podfs.SPEC):
            self._drop(pod_dir, request.namespace, request.name)
            os.mkdir(pod_dir, ownership.DIR_MODE)

    def _replace_stale(self, pod_dir: Path, request: PodRequest) -> None:
        status = read_status(pod_dir)
        if not status.finished or status.lost:
            raise LaunchError(
                f"pod {request.namespace}/{request.name}: its directory still runs another "
                "pod of that name (other uid); terminate and remove it first"
            )
        self._drop(pod_dir, request.namespace, request.name)

    def _drop(self, pod_dir: Path, namespace: str, name: str) -> None:
        """Delete an ended pod's directory, its logs kept first (`loghistory`)."""
        history = loghistory.history_dir(self.state_dir, namespace, name)
        try:
            loghistory.keep(pod_dir, history, limit=self.keep_attempts)
        except ownership.Unsafe as exc:
            raise LaunchError(f"pod {namespace}/{name}: its logs are not kept: {exc}") from None
        shutil.rmtree(pod_dir, ignore_errors=True)

    def _handle(self, pod_dir: Path, uid: str = "", launch: object = None) -> PodHandle:
        handle = PodHandle(pod_dir, uid, launch=str(launch) if launch else None)
        handle.status()
        return handle

    def adopt(self, namespace: str, name: str) -> PodHandle | None:
        """A handle on a launched pod (after a restart, say); None if it never was."""
        handle = adopt(self.pod_dir(namespace, name))
        if handle is not None and handle.last is not None and not handle.last.claimed:
            self._ask("run", handle.pod_dir)  # the request may have died with its asker
        return handle

    def adopt_all(self) -> list[PodHandle]:
        """Every launched pod of the state directory, sorted by namespace and name."""
        found: list[PodHandle] = []
        for ns in sorted(p for p in self.pods_dir.iterdir() if _is_dir(p)):
            for pod in sorted(p for p in ns.iterdir() if _is_dir(p)):
                handle = self.adopt(ns.name, pod.name)
                if handle is not None:
                    found.append(handle)
        return found

    # -- stopping ------------------------------------------------------------------------

    def terminate(self, handle: PodHandle, grace_seconds: float = 30.0) -> None:
        """Ask the pod to stop: SIGTERM to its containers, SIGKILL after `grace_seconds`; it
        ends Failed (reason Terminated) unless it ended already. Returns at once; `wait`
        sees the end. A pod whose supervisor died gets a reaper (`reaper`)."""
        pod_dir = handle.pod_dir
        statusfile.request_stop(str(pod_dir), grace_seconds)
        status = read_status(pod_dir)
        if not status.claimed:
            self._ask("run", pod_dir)  # the supervisor sees `terminate` as it claims
        elif status.lost:
            self._ask("reap", pod_dir)
        elif not status.finished:
            pid, start = statusfile.supervisor(statusfile.read(str(pod_dir)) or {})
            if podfs.same_process(pid, start):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGUSR1)  # "look at the terminate files"
            else:
                self._ask("reap", pod_dir)

    def remove(self, handle: PodHandle) -> bool:
        """Delete an ended pod's directory, so its name can run again — its logs are kept
        as one of the pod's earlier attempts (`loghistory`); True (done at once)."""
        status = read_status(handle.pod_dir)
        if status.launched and (not status.finished or status.lost):
            raise LaunchError(
                f"pod {handle.namespace}/{handle.name} has not ended; terminate it and wait"
            )
        self._drop(handle.pod_dir, handle.namespace, handle.name)
        return True

    # -- waiting -------------------------------------------------------------------------

    def wait(self, handles: Sequence[PodHandle], timeout: float | None) -> list[PodHandle]:
        """The handles whose status changed since their `last` (each handle's `last` is
        updated); waits up to `timeout` seconds (None: until one changes), else []."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            self._reap_children()
            self._dirty |= self._drain()
            now = time.monotonic()
            if now >= self._next_sweep:
                self._next_sweep = now + self.sweep_interval
                candidates: Iterable[PodHandle] = handles
                self._dirty.clear()  # every given pod is read now; others were not asked for
                self._ask_unclaimed(handles, now)
            else:
                candidates = [h for h in handles if h.last is None or str(h.pod_dir) in self._dirty]
            changed = []
            for h in candidates:
                self._dirty.discard(str(h.pod_dir))
                if h.refresh():
                    changed.append(h)
            if changed:
                return changed
            now = time.monotonic()
            if end is not None and now >= end:
                return []
            limit = self._next_sweep - now
            if end is not None:
                limit = min(limit, end - now)
            select.select([self._events_r], [], [], max(0.0, limit))

    def _drain(self) -> set[str]:
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self._events_r, 65536):
                data += chunk
        return {line.decode(errors="replace") for line in data.split(b"\n") if line}

    def _ask_unclaimed(self, handles: Sequence[PodHandle], now: float) -> None:
        """Ask the pod server again for the pods launched but not claimed for a while; the
        times asked are kept only for the pods still waiting for their supervisor."""
        waiting = set()
        for h in handles:
            if h.last is None or (h.last.launched and not h.last.claimed):
                waiting.add(h.pod_dir)
            if h.last is not None and h.last.launched and not h.last.claimed:
                asked = self._asked.setdefault(h.pod_dir, now)
                if now - asked >= self.claim_timeout:
                    self._asked[h.pod_dir] = now
                    self._ask("run", h.pod_dir)
        self._asked = {d: t for d, t in self._asked.items() if d in waiting}

    # -- supervisors ---------------------------------------------------------------------

    def _ask(self, verb: str, pod_dir: Path) -> None:
        self._asked[pod_dir] = time.monotonic()
        if self.mode == "exec":
            self._spawn_detached([verb, str(pod_dir)], pod_dir / podfs.SUPERVISOR_LOG)
        else:
            self._send(f"{verb} {pod_dir}\n".encode())

    def _send(self, message: bytes) -> None:
        if len(message) > select.PIPE_BUF:
            raise LaunchError(f"pod directory path too long for the pod server: {message!r}")
        for _ in range(3):
            fd = self._server_fifo()
            if fd < 0:  # ENXIO: no server reads; ENOENT: none ever started
                self._start_server()
                continue
            try:
                try:
                    os.write(fd, message)
                except BlockingIOError:  # the server is behind: wait for room
                    os.set_blocking(fd, True)
                    try:
                        os.write(fd, message)
                    finally:
                        os.set_blocking(fd, False)
                return
            except BrokenPipeError:  # the server closed it (it exits, or died)
                self._close_server_fifo()
                self._start_server()
        raise LaunchError(f"cannot reach the pod server; see {self.runtime_dir / server.LOG}")

    def _server_fifo(self) -> int:
        """The pod server's FIFO, opened once and kept (-1 while no server reads it): an open
        and a close per request cost more than the request. A request written as the
        server exits stays in the pipe for the next server (requests are idempotent), or
        is found by its scan for unclaimed pods."""
        if self._to_server < 0:
            try:
                self._to_server = ownership.open_fifo(
                    str(self.runtime_dir / server.FIFO), _FIFO_WRITE
                )
            except OSError:
                pass
            except ownership.Unsafe as exc:
                raise UnsafeState(str(exc)) from None
        return self._to_server

    def _close_server_fifo(self) -> None:
        if self._to_server >= 0:
            with contextlib.suppress(OSError):
                os.close(self._to_server)
            self._to_server = -1

    def _start_server(self) -> None:
        """Start a pod server unless one runs, and wait until it reads its FIFO."""
        fifo = str(self.runtime_dir / server.FIFO)
        try:
            lock = ownership.open_lock(str(self.runtime_dir / server.START_LOCK))
        except ownership.Unsafe as exc:
            raise UnsafeState(str(exc)) from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if _has_reader(fifo):
                return
            try:
                ownership.check_stale_fifo(fifo)  # (the server would refuse it: say so here)
            except ownership.Unsafe as exc:
                raise UnsafeState(str(exc)) from None
            pid = self._spawn_detached(
                ["serve", str(self.runtime_dir), str(self.pods_dir), str(self.server_idle)],
                self.runtime_dir / server.LOG,
            )
            end = time.monotonic() + SERVER_START_TIMEOUT
            while not _has_reader(fifo):
                if _exited(pid) or time.monotonic() > end:
                    log = self.runtime_dir / server.LOG
                    raise LaunchError(f"the pod server did not start; see {log}")
                time.sleep(0.002)
        finally:
            os.close(lock)

    def _spawn_detached(self, args: list[str], log: Path) -> int:
        argv = [sys.executable, "-m", "vcflow.podserver", *args]
        append = os.O_WRONLY | os.O_CREAT | os.O_APPEND | ownership.NOFOLLOW
        actions: list[tuple[int, ...] | tuple[int, int, str, int, int]] = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(log), append, ownership.FILE_MODE),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ]
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_fds()]
        try:
            pid = os.posix_spawn(
                sys.executable, argv, os.environ, file_actions=actions, setsid=True
            )
        except OSError as exc:  # (ELOOP: a link in the log's place)
            raise LaunchError(f"cannot start a supervisor: {log}: {exc.strerror}") from None
        self._children.add(pid)
        return pid

    def _reap_children(self) -> None:
        for pid in list(self._children):
            if _exited(pid):
                self._children.discard(pid)

    def stop_server(self) -> None:
        """Ask a running pod server to exit now (pods keep running)."""
        fifo = str(self.runtime_dir / server.FIFO)
        with contextlib.suppress(OSError, ownership.Unsafe):
            fd = ownership.open_fifo(fifo, _FIFO_WRITE)
            try:
                os.write(fd, b"stop\n")
            finally:
                os.close(fd)

    def close(self) -> None:
        """Stop reading events; pods and the server keep running."""
        self._reap_children()
        self._close_server_fifo()
        for fd in (self._events_r, self._events_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._events_r = self._events_w = -1

    def __enter__(self) -> PodRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _has_reader(fifo: str) -> bool:
    """Does a pod server read the FIFO? (Not if something else is in its place.)"""
    try:
        fd = ownership.open_fifo(fifo, _FIFO_WRITE)
    except (OSError, ownership.Unsafe):
        return False
    os.close(fd)
    return True


def _is_dir(path: Path) -> bool:
    """A directory, not a link to one."""
    return path.is_dir() and not path.is_symlink()


def _exited(pid: int) -> bool:
    """Reap `pid` if it is our child and ended."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done != 0


def _inheritable_fds() -> list[int]:
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return []
    out = []
    for fd in fds:
        if fd > 2:
            with contextlib.suppress(OSError):
                if os.get_inheritable(fd):
                    out.append(fd)
    return out
