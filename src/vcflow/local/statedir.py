"""The state directory of the embedded mode and who may run the controllers on it.

`<state dir>/vcflow.db` is the store; `<state dir>/controller.lock` says which process runs
the controllers (and the local runtime). The lock is an exclusive `fcntl.flock`, so the
kernel drops it when its holder exits, however it exits; the holder writes `<pid> <role>`
into the file so others can name it. Policy:

- a writer (`vcflow apply|delete|patch|stop`, a library call) writes, then `reconcile`: if
  it gets the lock without waiting it runs the controllers in-process until settled and
  finishes the deletion of pods whose processes are gone, else it leaves the work to the
  holder;
- `vcflow controller`, `vcflow run` and `vcflow server` hold the lock while they run, so
  there is never more than one set of controllers per state directory.

The state directory is made owner-only (0700) and refused, in one line saying how to fix it,
when another user owns it or can write it (`podserver.ownership`); so is a store file or a lock
that is a link, or another user's. Store files others could read are made owner-only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from vcflow.api import names
from vcflow.api.errors import NotFound, VcflowError
from vcflow.api.pod import Pod
from vcflow.controller.manager import Manager
from vcflow.podserver import ownership
from vcflow.runtime import teardown
from vcflow.runtime.pods import PodRunner
from vcflow.store import DB_FILE, MemoryStore, SqliteStore, Store
from vcflow.store.base import Cursor, EventType, Expired

ENV_VAR = "VCFLOW_STATE_DIR"
DEFAULT = Path(".vcflow")
LOCK_FILE = "controller.lock"
CONTROLLER = "controller"  # the role of a long-running holder
SERVER = "server"  # `vcflow server`: a long-running holder too
WRITER = "writer"  # the role of a command that settles and leaves


class LockHeld(VcflowError):
    """Another process runs the controllers on this state directory."""


def resolve(state_dir: Path) -> Path:
    """The state directory, created (owner-only) if missing; VcflowError if another user
    owns it or can write it."""
    try:
        ownership.make_dir(str(state_dir), parents=True, follow=True)
    except ownership.Unsafe as exc:
        raise VcflowError(str(exc)) from None
    except OSError as exc:
        raise VcflowError(f"cannot create state directory {state_dir}: {exc.strerror}") from None
    return state_dir


@contextmanager
def opened(state_dir: Path) -> Iterator[SqliteStore]:
    """The store of `state_dir` (created if missing), closed afterwards."""
    _check_store_files(resolve(state_dir), tighten=False)
    store = SqliteStore.in_state_dir(state_dir)
    try:
        _check_store_files(state_dir, tighten=True)
        yield store
    finally:
        store.close()


_STORE_FILES = (DB_FILE, f"{DB_FILE}-wal", f"{DB_FILE}-shm", LOCK_FILE)


def _check_store_files(state_dir: Path, *, tighten: bool) -> None:
    """VcflowError if a store file (or the lock: checked before anything is written) is a
    link or another user's, or others can write it; `tighten`: make those others can read
    owner-only (SQLite makes them as the umask says)."""
    for name in _STORE_FILES:
        path = str(state_dir / name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        try:
            ownership.check(path, st, ownership.FILE)
        except ownership.Unsafe as exc:
            raise VcflowError(str(exc)) from None
        if tighten and st.st_mode & 0o077:
            os.chmod(path, ownership.FILE_MODE)


def has_store(state_dir: Path) -> bool:
    """Whether `state_dir` holds a store (nothing is created to find out)."""
    return (state_dir / DB_FILE).is_file()


@contextmanager
def reading(state_dir: Path) -> Iterator[Store]:
    """The store of `state_dir` for a reading command; an empty one, and nothing created on
    disk, if the directory has no store yet."""
    if not has_store(state_dir):
        yield MemoryStore()
        return
    with opened(state_dir) as store:
        yield store


class ControllerLock:
    """`<state dir>/controller.lock`, taken without waiting: `acquired` says if it was.

    flock locks belong to an open file description, so a second `ControllerLock` on the same
    file conflicts with the first even inside one process.
    """

    def __init__(self, state_dir: Path, role: str = WRITER) -> None:
        self.path = state_dir / LOCK_FILE
        self.role = role
        self.acquired = False
        self._fd: int | None = None

    def __enter__(self) -> ControllerLock:
        self.try_acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def try_acquire(self) -> bool:
        """Take the lock if it is free; True if this object holds it now."""
        if self.acquired:
            return True
        fd = self._fd if self._fd is not None else self._open()
        self._fd = fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        with contextlib.suppress(OSError):  # (who holds it is a note: a full disk loses it)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {self.role}\n".encode(), 0)
        self.acquired = True
        return True

    def _open(self) -> int:
        """The lock file, never through a link, made owner-only (`ownership.open_lock`)."""
        try:
            return ownership.open_lock(str(self.path))
        except ownership.Unsafe as exc:
            raise VcflowError(str(exc)) from None
        except OSError as exc:
            raise VcflowError(
                f"cannot open {self.path}: {(exc.strerror or str(exc)).lower()}"
            ) from None

    def holder(self) -> tuple[int | None, str]:
        """(pid, role) the holder wrote; (None, "") if unreadable or not yet written."""
        try:
            if self._fd is None:
                self._fd = self._open()
            words = os.pread(self._fd, 64, 0).decode("utf-8", "replace").split()
        except OSError:
            return None, ""
        if not words or not words[0].isdigit():
            return None, ""
        return int(words[0]), words[1] if len(words) > 1 else ""

    def release(self) -> None:
        if self._fd is None:
            return
        if self.acquired:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            self.acquired = False
        os.close(self._fd)
        self._fd = None


def acquire_for_controller(
    lock: ControllerLock,
    *,
    patience: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Take the lock for `vcflow controller` (or `run`, `server`): wait out a writing command
    that is settling (it holds the lock for a moment), fail at once if a long-running holder
    (a controller, a run, a server) has it."""
    deadline = time.monotonic() + patience
    while not lock.try_acquire():
        pid, role = lock.holder()
        if role in (CONTROLLER, SERVER) or time.monotonic() > deadline:
            who = f"process {pid}" if pid is not None else "another process"
            if role == SERVER:
                who += " (vcflow server)"
            raise LockHeld(
                f"cannot run the controllers: {who} already runs them on {lock.path.parent} "
                f"(it holds {lock.path})"
            )
        sleep(0.05)


def runs_here(state_dir: Path) -> bool:
    """Whether a long-running holder (`vcflow controller`, `run`, `server`) runs the
    controllers on `state_dir` now; a writer settling for a moment does not count. Ask it
    inside `writing`: a writer that finds the lock taken by this look leaves its change to
    the holder, and `writing`'s own reconcile then settles it."""
    with ControllerLock(state_dir) as lock:
        if lock.acquired:
            return False
        return lock.holder()[1] in (CONTROLLER, SERVER)


def reconcile(
    store: SqliteStore,
    state_dir: Path,
    *,
    since: int | None = None,
    pods: Iterable[names.ObjectKey] = (),
) -> bool:
    """Run the controllers until settled if no other process runs them; True if it did.
    Then the pods deleted since resourceVersion `since` (and the `pods` named), Terminating
    until their processes end, are finished (`runtime.teardown`): no runtime runs here.

    Loops while another process wrote after the last settle: such a writer found the lock
    taken (by this process) and left its change for the holder to reconcile.
    """
    ran = False
    while True:
        with ControllerLock(state_dir) as lock:
            if not lock.acquired:
                return ran
            manager = Manager(store)
            manager.settle()
            seen = manager.cursor.rv
            if since is not None:
                _finish_deletions(store, state_dir, since, pods)
                since = seen
        ran = True
        if store.resource_version() <= seen:
            return ran


def _finish_deletions(
    store: SqliteStore, state_dir: Path, since: int, named: Iterable[names.ObjectKey]
) -> None:
    """The Terminating pods among those written since `since` and `named`, finished."""
    keys = dict.fromkeys(named)
    try:
        found, _ = store.poll_events(Cursor(since), (Pod,))
    except Expired:
        found = []
    keys.update(
        (e.key, None) for e in found if e.type is not EventType.DELETED and _DELETING in e.raw
    )
    doomed = []
    for key in keys:
        namespace, _, name = key.partition("/")
        try:
            pod = store.get(Pod, namespace, name)
        except NotFound:
            continue
        if pod.deleting:
            doomed.append(pod)
    if not doomed:
        return
    with PodRunner(state_dir) as runner:
        finished = teardown.finish_deletions(store, runner, doomed, note=_say)
        runner.stop_server()  # (if it started one: it exits once it runs no pod)
    for left in finished.left:
        _say(f"pod {left} is still Terminating: its processes did not end in time")


_DELETING = '"deletionTimestamp"'


def _say(text: str) -> None:
    print(text, file=sys.stderr)


@contextmanager
def writing(
    state_dir: Path, *, deleted_pods: Iterable[names.ObjectKey] = ()
) -> Iterator[SqliteStore]:
    """The store for a writing command; the controllers run (`reconcile`) afterwards, also
    when the command failed part-way (what it did write is reconciled), and the pods it
    deleted (`deleted_pods`: those it names; a live list, read at the end) are finished."""
    with opened(state_dir) as store:
        since = store.resource_version()
        try:
            yield store
        except VcflowError:
            reconcile(store, state_dir, since=since, pods=deleted_pods)
            raise
        reconcile(store, state_dir, since=since, pods=deleted_pods)
