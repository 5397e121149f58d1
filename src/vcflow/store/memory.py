"""The in-memory store: the unit-test fake, with the same semantics as the SQLite store.

Objects are kept as immutable JSON rows (so nothing the store holds is ever handed out),
with a label index (kind, key, value) → keys and an owner index uid → keys. Transactions
keep an undo log; savepoints are marks in it, and a write nested in a transaction is
undone — or, when it failed after writing, aborts the transaction — as on SQLite (see
`backend`). Nothing survives the process.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import islice
from typing import TypeVar, Unpack, cast

from vcflow.store.backend import Options
from vcflow.store.base import EventType
from vcflow.store.engine import StoreEngine
from vcflow.store.wire import EventRow, Row

_Key = tuple[str, str]  # (namespace, name)
_K = TypeVar("_K")
_V = TypeVar("_V")


class MemoryStore(StoreEngine):
    """A dict-backed `base.Store`; thread-safe through the engine's lock."""

    def __init__(self, **options: Unpack[Options]) -> None:
        super().__init__(**options)
        self._rows: dict[str, dict[_Key, Row]] = {}
        self._by_label: dict[tuple[str, str, str], set[_Key]] = {}
        self._by_owner: dict[str, set[tuple[str, str, str]]] = {}
        self._by_uid: dict[str, tuple[str, str, str]] = {}
        self._events: list[EventRow] = []
        self._rv = 0
        self._compacted = 0
        self._undo: list[tuple[str, _Key, Row | None]] = []
        self._marks: list[tuple[int, int, int]] = []  # (undo, events, rv) per level

    def close(self) -> None:
        """Nothing to release."""

    # --- reads --------------------------------------------------------------------------

    def _load(self, kind: str, namespace: str, name: str) -> Row | None:
        return self._rows.get(kind, {}).get((namespace, name))

    def _scan(self, kind: str, namespace: str | None, hint: tuple[str, str] | None) -> list[Row]:
        rows = self._rows.get(kind, {})
        keys = sorted(self._by_label.get((kind, *hint), ()) if hint is not None else rows)
        return [rows[k] for k in keys if namespace is None or k[0] == namespace]

    def _dependents(self, owner_uid: str) -> list[Row]:
        found = []
        for kind, ns, name in sorted(self._by_owner.get(owner_uid, ())):
            row = self._load(kind, ns, name)
            if row is not None:
                found.append(row)
        return found

    def _uid_exists(self, uid: str) -> bool:
        return uid in self._by_uid

    def _latest_rv(self) -> int:
        return self._rv

    def _read_events(
        self, since: int, kinds: Sequence[str] | None, namespace: str | None, limit: int | None
    ) -> list[EventRow]:
        start = bisect.bisect_right(self._events, since, key=lambda e: e.rv)
        wanted = None if kinds is None else set(kinds)
        matching = (
            e
            for e in self._events[start:]  # (islice would step over the first `start`)
            if (wanted is None or e.kind in wanted)
            and (namespace is None or e.namespace == namespace)
        )
        return list(islice(matching, limit))

    def _compacted_rv(self) -> int:
        return self._compacted

    # --- writes -------------------------------------------------------------------------

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _save(self, row: Row, old: Row | None, event: EventType) -> bool:
        key = (row.namespace, row.name)
        if old is None and self._load(row.kind, *key) is not None:
            return False
        self._put(row.kind, key, row)
        self._append_event(row, event)
        return True

    def _drop(self, row: Row) -> None:
        self._put(row.kind, (row.namespace, row.name), None)
        self._append_event(row, EventType.DELETED)

    def _append_event(self, row: Row, event: EventType) -> None:
        self._events.append(EventRow(row.rv, event, row.kind, row.namespace, row.name, row.data))

    def _prune(self, upto: int) -> None:
        cut = bisect.bisect_right(self._events, upto, key=lambda e: e.rv)
        del self._events[:cut]
        self._compacted = max(self._compacted, upto)

    def _put(self, kind: str, key: _Key, row: Row | None) -> None:
        """Set or remove one object, logging the previous state for rollback."""
        self._undo.append((kind, key, self._rows.get(kind, {}).get(key)))
        self._set(kind, key, row)

    def _set(self, kind: str, key: _Key, row: Row | None) -> None:
        rows = self._rows.setdefault(kind, {})
        old = rows.get(key)
        if old is not None:
            self._unindex(old)
            del rows[key]
        if row is not None:
            rows[key] = row
            self._index(row)

    def _index(self, row: Row) -> None:
        key = (row.namespace, row.name)
        for label in row.labels.items():
            self._by_label.setdefault((row.kind, *label), set()).add(key)
        for uid in row.owners:
            self._by_owner.setdefault(uid, set()).add((row.kind, *key))
        self._by_uid[row.uid] = (row.kind, *key)

    def _unindex(self, row: Row) -> None:
        key = (row.namespace, row.name)
        for label in row.labels.items():
            _discard(self._by_label, (row.kind, *label), key)
        for uid in row.owners:
            _discard(self._by_owner, uid, (row.kind, *key))
        self._by_uid.pop(row.uid, None)

    # --- transactions -------------------------------------------------------------------

    def _begin(self, depth: int) -> None:
        self._marks.append(self._write_mark())

    def _end(self, depth: int, ok: bool) -> None:
        mark = self._marks.pop()
        if not ok:
            self._roll_back(mark)
        if depth == 0:
            self._undo.clear()

    def _roll_back(self, mark: tuple[int, int, int]) -> None:
        undo_mark, event_mark, rv_mark = mark
        while len(self._undo) > undo_mark:
            kind, key, row = self._undo.pop()
            self._set(kind, key, row)
        del self._events[event_mark:]
        self._rv = rv_mark  # a rolled-back write uses up no resourceVersion

    def _write_mark(self) -> tuple[int, int, int]:
        return len(self._undo), len(self._events), self._rv

    def _unwrite(self, mark: object) -> bool:
        undo_mark, event_mark, rv_mark = cast(tuple[int, int, int], mark)
        if len(self._undo) != undo_mark or len(self._events) != event_mark:
            return False
        self._rv = rv_mark
        return True

    def _abort(self) -> None:
        top = self._marks[0]
        self._marks = [top] * len(self._marks)  # every level now ends where the first began
        self._roll_back(top)


def _discard(index: dict[_K, set[_V]], key: _K, value: _V) -> None:
    members = index.get(key)
    if members is not None:
        members.discard(value)
        if not members:
            del index[key]
