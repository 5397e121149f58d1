"""Storage primitives, transactions and reads: the half of the Store every backend shares
that does not write. `engine.StoreEngine` adds the write semantics on top; `memory` and
`sqlite` implement the abstract primitives (rows, indexes, event log, transactions).

Thread safety: one re-entrant lock per store guards every call; a transaction holds it
from begin to end, so other threads wait for it (and never see a half-done batch).
Writes inside a transaction: each of the engine's writes (`_atomic`) is all or nothing
without a savepoint of its own — everything that can fail is checked before its first
statement, and a write that still fails midway (an SQLite error, an interrupt) aborts the
enclosing transaction as a whole: rolled back at once, any further use of it and its commit
raise StoreError, so a half-applied write is never committed.
Watches: every committed write appends one event; `events_since` is the non-blocking poll
controllers use, `wait`/`watch` block (in-process commits wake them at once, other
processes' commits are noticed by polling every `poll_interval` seconds).
"""

from __future__ import annotations

import builtins
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Self, TypedDict, cast

from vcflow.api import clusterscope, gcpause
from vcflow.api.clock import Clock, SystemClock
from vcflow.api.errors import NotFound, StoreError
from vcflow.api.meta import Resource
from vcflow.store.base import (
    Cursor,
    Defaulter,
    EventType,
    Expired,
    KindInfo,
    KindRegistry,
    R,
    Selector,
    SelectorLike,
    WatchEvent,
    default_kinds,
    stored_object,
)
from vcflow.store.wire import EventRow, Row, loads

#: events kept for resuming watches; older ones are compacted (resume → Expired).
DEFAULT_RETENTION = 20_000
_PRUNE_SLACK = 1_000  # prune at most every this many writes (fewer for tiny retentions)
_WATCH_PAGE = 1_000
_FOREVER = 3600.0
_ABORTED = (
    "the transaction was rolled back: a write in it failed after it had begun writing, "
    "so nothing of the transaction is committed"
)


class Options(TypedDict, total=False):
    """What every store engine takes: a subclass adds its own and passes these on."""

    clock: Clock | None
    kinds: KindRegistry | None
    event_retention: int


class Backend(ABC):
    """Reads and transactions over abstract storage primitives (the `_`-prefixed methods).

    Backends implement the primitives; they are always called with the store lock held,
    and writes only inside `transaction()`.
    """

    #: how often `wait` re-reads the resourceVersion (None: rely on in-process notify only)
    poll_interval: float | None = None

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        kinds: KindRegistry | None = None,
        event_retention: int = DEFAULT_RETENTION,
    ) -> None:
        self.kinds = kinds.copy() if kinds is not None else default_kinds()
        self._clock = clock or SystemClock()
        self._retention = event_retention
        self._cond = threading.Condition(threading.RLock())
        self._depth = 0
        self._aborted: BaseException | None = None  # why the open transaction was rolled back

    # --- storage primitives -------------------------------------------------------------

    @abstractmethod
    def _load(self, kind: str, namespace: str, name: str) -> Row | None: ...

    @abstractmethod
    def _scan(
        self, kind: str, namespace: str | None, hint: tuple[str, str] | None
    ) -> builtins.list[Row]:
        """Rows of a kind (in a namespace, or all), sorted by (namespace, name); with a
        hint, at least those labelled key=value (the caller filters the rest)."""

    @abstractmethod
    def _dependents(self, owner_uid: str) -> builtins.list[Row]: ...

    @abstractmethod
    def _uid_exists(self, uid: str) -> bool: ...

    @abstractmethod
    def _save(self, row: Row, old: Row | None, event: EventType) -> bool:
        """Replace `old` by `row` (or insert `row`, when `old` is None) and append its
        ADDED/MODIFIED event; False, having written nothing, when inserting a taken name."""

    @abstractmethod
    def _drop(self, row: Row) -> None:
        """Remove the object of `row` and append its DELETED event (`row` = last state)."""

    @abstractmethod
    def _next_rv(self) -> int: ...

    @abstractmethod
    def _latest_rv(self) -> int: ...

    @abstractmethod
    def _read_events(
        self, since: int, kinds: Sequence[str] | None, namespace: str | None, limit: int | None
    ) -> builtins.list[EventRow]: ...

    @abstractmethod
    def _compacted_rv(self) -> int:
        """The highest resourceVersion whose event was pruned (0: none)."""

    @abstractmethod
    def _prune(self, upto: int) -> None: ...

    def _counters(self) -> tuple[int, int]:
        """(`_latest_rv()`, `_compacted_rv()`); a backend may read both at once."""
        return self._latest_rv(), self._compacted_rv()

    @abstractmethod
    def _begin(self, depth: int) -> None:
        """Start a transaction (depth 0) or a savepoint inside one (depth > 0)."""

    @abstractmethod
    def _end(self, depth: int, ok: bool) -> None:
        """Commit or roll back what `_begin(depth)` started."""

    @abstractmethod
    def _write_mark(self) -> object:
        """Where a nested write (`_atomic`) starts, for `_unwrite`."""

    @abstractmethod
    def _unwrite(self, mark: object) -> bool:
        """Undo a failed nested write that wrote nothing since `mark` (the resourceVersions it
        took); False if it had written (or the transaction is gone): nothing undone then."""

    @abstractmethod
    def _abort(self) -> None:
        """Roll the whole open transaction back now; its levels are ended later by `_end`
        (with ok=False), which then finds nothing left to undo."""

    @abstractmethod
    def close(self) -> None:
        """Release resources; the store is unusable afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- transactions -------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all; watchers see them after commit.

        Nested transactions are savepoints: an exception leaving the inner block undoes only
        its writes (unless a write in it failed midway: that aborts the whole transaction,
        see the module docstring). Holds the store lock throughout (other threads wait).
        """
        with self._cond:
            self._check_usable()
            depth = self._depth
            self._begin(depth)
            self._depth += 1
            ok = False
            try:
                yield
                if self._aborted is None:
                    if depth == 0:
                        self._maybe_prune()
                    ok = True
            finally:
                self._depth -= 1
                aborted = self._aborted
                if depth == 0:
                    self._aborted = None
                self._end(depth, ok)
            if depth == 0:
                if aborted is not None:
                    raise StoreError(_ABORTED) from aborted
                self._cond.notify_all()

    @contextmanager
    def _atomic(self) -> Iterator[None]:
        """One write of the engine (an object, and the garbage its removal collects): a
        transaction of its own, or inside one a level without a savepoint. The engine checks
        everything that can fail before the write's first statement; a failure after it
        aborts the enclosing transaction (see the module docstring)."""
        with self._cond:
            if not self._depth:
                with self.transaction():
                    yield
                return
            self._check_usable()
            mark = self._write_mark()
            try:
                yield
            except BaseException as exc:
                if not self._unwrite(mark):
                    self._aborted = exc  # (first: aborted even if the rollback fails)
                    self._abort()
                raise

    def _check_usable(self) -> None:
        """Raise if the open transaction was aborted by a write that failed midway."""
        if self._aborted is not None:
            raise StoreError(_ABORTED) from self._aborted

    def _maybe_prune(self) -> None:
        latest, compacted = self._counters()
        horizon = latest - self._retention
        if horizon - compacted >= min(_PRUNE_SLACK, self._retention // 10 + 1):
            self._prune(horizon)

    # --- reads --------------------------------------------------------------------------

    def register_kind(self, model: type[Resource], *, defaulter: Defaulter | None = None) -> None:
        """Let the store hold `model` (apiVersion and kind from its literal defaults)."""
        self.kinds.register(model, defaulter=defaulter)

    def get(self, kind: type[R], namespace: str, name: str) -> R:
        """A cluster-scoped kind's object is found whatever `namespace` says."""
        info = self.kinds.of_model(kind)
        namespace = clusterscope.scoped(kind, namespace)
        with self._cond:
            self._check_usable()
            row = self._load(info.id, namespace, name)
        if row is None:
            raise NotFound(f"{info.describe(namespace, name)} not found")
        return cast(R, parse(info, row.data))

    def list(
        self, kind: type[R], namespace: str | None = None, label_selector: SelectorLike = None
    ) -> builtins.list[R]:
        """Objects of a kind, sorted by (namespace, name); all namespaces when None.

        A selector with a `key=value` term is answered from the label index. A
        cluster-scoped kind's objects are listed whatever `namespace` says.
        """
        info = self.kinds.of_model(kind)
        namespace = None if clusterscope.is_cluster_scoped(kind) else namespace
        selector = Selector.coerce(label_selector)
        with gcpause.paused():
            with self._cond:
                self._check_usable()
                rows = self._scan(info.id, namespace, selector.index_hint())
            return [cast(R, parse(info, r.data)) for r in rows if selector.matches(r.labels)]

    def names(
        self, kind: type[Resource], namespace: str, label_selector: SelectorLike = None
    ) -> builtins.list[str]:
        """The names `list` would return, sorted, without parsing the objects."""
        info = self.kinds.of_model(kind)
        selector = Selector.coerce(label_selector)
        with self._cond:
            self._check_usable()
            rows = self._scan(info.id, namespace, selector.index_hint())
        return [r.name for r in rows if selector.matches(r.labels)]

    def phase(self, kind: type[Resource], namespace: str, name: str) -> str:
        """`status.state.phase` of one object (`base.Store.phase`)."""
        info = self.kinds.of_model(kind)
        with self._cond:
            self._check_usable()
            found = self._phase(info.id, namespace, name)
        if found is None:
            raise NotFound(f"{info.describe(namespace, name)} not found")
        return found

    def _phase(self, kind: str, namespace: str, name: str) -> str | None:
        """The phase of a stored object, None if absent; backends may read it without
        parsing the object (the default parses it)."""
        row = self._load(kind, namespace, name)
        if row is None:
            return None
        status = loads(row.data).get("status")
        state = status.get("state") if isinstance(status, dict) else None
        phase = state.get("phase") if isinstance(state, dict) else None
        return phase if isinstance(phase, str) else ""

    def resource_version(self) -> int:
        """The resourceVersion of the last committed write (0 for an empty store)."""
        with self._cond:
            return self._latest_rv()

    def events_since(
        self,
        since_rv: int,
        *,
        kinds: Iterable[type[Resource]] | None = None,
        namespace: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WatchEvent]:
        """Committed events after `since_rv`, oldest first; non-blocking. Raises Expired when
        events after `since_rv` were compacted, or `since_rv` is ahead of the store (a new
        state directory): relist, then resume from the current resourceVersion.

        The poll is cheap when there is nothing new (`since_rv` is the latest
        resourceVersion): the event log is not read."""
        return self._events_after(since_rv, kinds, namespace, limit)[0]

    def poll_events(
        self, cursor: Cursor, kinds: Iterable[type[Resource]]
    ) -> tuple[builtins.list[WatchEvent], Cursor]:
        """`base.Feed.poll_events`, with one look at the counters: the latest resourceVersion
        is taken before the events are read (`Cursor.past`)."""
        found, latest = self._events_after(cursor.rv, kinds, None, None)
        return found, cursor.past(found, latest)

    def _events_after(
        self,
        since_rv: int,
        kinds: Iterable[type[Resource]] | None,
        namespace: str | None,
        limit: int | None,
    ) -> tuple[builtins.list[WatchEvent], int]:
        """`events_since`, and the latest resourceVersion as of before the read."""
        ids = None if kinds is None else [self.kinds.of_model(k).id for k in kinds]
        with self._cond:
            latest, compacted = self._counters()
        if not compacted <= since_rv < latest:
            _check_resumable(since_rv, latest, compacted)
            return [], latest
        with gcpause.paused():
            with self._cond:
                rows = self._read_events(since_rv, ids, namespace, limit)
                # after the read: a commit since the first look may have compacted past
                # since_rv (another process's), and the rows would then miss events
                now, compacted = self._counters()
            _check_resumable(since_rv, now, compacted)
            found = [
                WatchEvent(
                    EventType(r.type),
                    self.kinds.by_id(r.kind).model,
                    r.namespace,
                    r.name,
                    r.rv,
                    r.data,
                )
                for r in rows
            ]
            return found, latest

    def wait(self, cursor: Cursor, timeout: float) -> bool:
        """Block until a write after `cursor` is committed (True) or `timeout` seconds of
        real time pass (False). Not inside a transaction."""
        return self._wait_past(cursor.rv, timeout)

    def _wait_past(self, since_rv: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            if self._depth:
                raise RuntimeError("Store.wait inside a transaction would never see a commit")
            while self._latest_rv() <= since_rv:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                step = remaining if self.poll_interval is None else self.poll_interval
                self._cond.wait(min(remaining, step))
            return True

    def watch(
        self,
        kinds: Iterable[type[Resource]] | None = None,
        *,
        namespace: str | None = None,
        since_rv: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[WatchEvent]:
        """Events after `since_rv` (default: from now), then new ones as they commit; ends
        after `timeout` seconds without a matching event (None: never)."""
        kinds = None if kinds is None else builtins.list(kinds)
        rv = self.resource_version() if since_rv is None else since_rv
        while True:
            latest = self.resource_version()
            events = self.events_since(rv, kinds=kinds, namespace=namespace, limit=_WATCH_PAGE)
            for event in events:
                rv = event.resource_version
                yield event
            if events:
                continue
            rv = max(rv, latest)
            if (
                not self._wait_past(rv, _FOREVER if timeout is None else timeout)
                and timeout is not None
            ):
                return


def _check_resumable(since_rv: int, latest: int, compacted: int) -> None:
    if since_rv > latest:
        raise Expired(
            f"resourceVersion {since_rv} is newer than the store's ({latest}): the "
            "store was replaced; list again and watch from the current resourceVersion"
        )
    if since_rv < compacted:
        raise Expired(
            f"resourceVersion {since_rv} is too old: events up to {compacted} were "
            "compacted; list again and watch from the current resourceVersion"
        )


def parse(info: KindInfo, data: str) -> Resource:
    """A fresh model of stored JSON (StoreError, one line, for one that is not readable)."""
    return stored_object(info.model, data)
