"""The embedded default store: one SQLite file (`<state dir>/vcflow.db`), WAL journal.

Tables: `objects` (kind, ns, name, uid, rv, labels, owners, data JSON), the indexes
`labels` (kind, key, value → object) and `owners` (owner uid → object), the watch log
`events` (rv, type, kind, ns, name, data) and `meta` (the resourceVersion counter and the
compaction mark). Every write runs in a `BEGIN IMMEDIATE` transaction, so writers from
several processes on one file take turns (`busy_timeout`) and never interleave; readers
are never blocked (WAL). A transaction reaches SQLite at its first statement — the
controllers and the runtime open one per burst of work, and an empty burst then costs
nothing — and takes the write lock before its first read, so a read-modify-write inside
it stays atomic; the watch read (`events_since`) alone does not begin it.

Durability: with `synchronous=NORMAL` (default) a committed write survives the writing
process being killed (SIGKILL: the WAL is in the OS page cache before COMMIT returns) but
the last commits may be lost — never corrupted — on power loss or an OS crash; pass
`synchronous="FULL"` to fsync every commit and survive those too (~10x slower writes).

Reads of the counters: a store keeps the latest resourceVersion and the compaction mark in
memory. Its own commits update them; another connection's commits (another process, or
another store on the file) are noticed by `PRAGMA data_version`, whose value changes when
another connection has committed since this one last asked, and only then are the counters
re-read. So `resource_version()` and an `events_since` with nothing new cost one cheap
statement (no table read), and still see every commit made before the call.

Threads: one connection per store, used under the engine's lock (`check_same_thread=False`);
open one store per process (or share one between threads), not one per call.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from vcflow.api.clock import Clock
from vcflow.api.errors import StoreError
from vcflow.store import wire
from vcflow.store.backend import DEFAULT_RETENTION
from vcflow.store.base import EventType, KindRegistry
from vcflow.store.engine import StoreEngine
from vcflow.store.wire import EventRow, Row

DB_FILE = "vcflow.db"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('rv', 0), ('compacted', 0);
CREATE TABLE IF NOT EXISTS objects (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,
    uid TEXT NOT NULL, rv INTEGER NOT NULL,
    labels TEXT NOT NULL, owners TEXT NOT NULL, data TEXT NOT NULL,
    UNIQUE (kind, ns, name)
);
CREATE UNIQUE INDEX IF NOT EXISTS objects_uid ON objects (uid);
CREATE TABLE IF NOT EXISTS labels (
    obj INTEGER NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (obj, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS labels_kv ON labels (kind, key, value);
CREATE TABLE IF NOT EXISTS owners (
    owner TEXT NOT NULL, obj INTEGER NOT NULL, PRIMARY KEY (owner, obj)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS owners_obj ON owners (obj);
CREATE TABLE IF NOT EXISTS events (
    rv INTEGER PRIMARY KEY, type TEXT NOT NULL,
    kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL
);
"""

_COLUMNS = "o.kind, o.ns, o.name, o.uid, o.rv, o.data, o.labels, o.owners"


class SqliteStore(StoreEngine):
    """A `base.Store` in one SQLite file; see the module docstring for the guarantees."""

    poll_interval = 0.05  # other processes' commits are seen by polling `data_version`

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        kinds: KindRegistry | None = None,
        event_retention: int = DEFAULT_RETENTION,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        busy_timeout: float = 30.0,
    ) -> None:
        super().__init__(clock=clock, kinds=kinds, event_retention=event_retention)
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, not {synchronous!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        # The committed counters, as of `PRAGMA data_version` = `_version` (None: unknown,
        # read them again); `_pending_*`: the open transaction's new values (None: unchanged);
        # `_checked`: the counters were checked inside the open transaction, which holds the
        # write lock, so no other connection can commit until it ends.
        self._rv = self._compacted = 0
        self._version: int | None = None
        self._pending_rv: int | None = None
        self._pending_compacted: int | None = None
        self._checked = False
        # transaction levels opened by `_begin`, and begun in SQLite (`_sql`)
        self._opened = self._begun = 0
        self._marks: list[tuple[int | None, int | None]] = []  # pending counters per level
        try:
            self._open(synchronous)
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def in_state_dir(cls, state_dir: str | os.PathLike[str], **options: Any) -> SqliteStore:
        """The store of a state directory: `<state_dir>/vcflow.db`."""
        return cls(Path(state_dir) / DB_FILE, **options)

    def _open(self, synchronous: str) -> None:
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            raise StoreError(f"{self.path}: cannot use the WAL journal (got {mode})")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        with self.transaction():
            version = self._sql().execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: schema version {version} is newer than this vcflow "
                    f"understands ({SCHEMA_VERSION}); upgrade vcflow"
                )
            self._create_schema()
            self._sql().execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _create_schema(self) -> None:
        # executescript would COMMIT the open transaction; run the statements one by one.
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._sql().execute(statement)

    def close(self) -> None:
        with self._cond:
            self._db.close()

    def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and a cross-check of the indexes and
        the resourceVersion counter; empty when the file is consistent."""
        with self._cond:
            found = [r[0] for r in self._db.execute("PRAGMA integrity_check") if r[0] != "ok"]
            counter = self._meta("rv")
            top = self._db.execute(
                "SELECT max(ifnull((SELECT max(rv) FROM objects), 0),"
                " ifnull((SELECT max(rv) FROM events), 0))"
            ).fetchone()[0]
            if top > counter:
                found.append(f"resourceVersion counter {counter} is behind a stored rv {top}")
            found += self._check_indexes()
        return found

    def _check_indexes(self) -> list[str]:
        found = []
        for oid, kind, labels, owners in self._db.execute(
            "SELECT id, kind, labels, owners FROM objects"
        ).fetchall():
            indexed = dict(
                self._db.execute("SELECT key, value FROM labels WHERE obj = ?", (oid,)).fetchall()
            )
            if indexed != json.loads(labels):
                found.append(f"labels index of object {oid} ({kind}) differs from its labels")
            refs = {
                r[0] for r in self._db.execute("SELECT owner FROM owners WHERE obj = ?", (oid,))
            }
            if refs != set(json.loads(owners)):
                found.append(f"owners index of object {oid} ({kind}) differs from its owners")
        return found

    # --- reads --------------------------------------------------------------------------

    def _load(self, kind: str, namespace: str, name: str) -> Row | None:
        found = (
            self._sql()
            .execute(
                f"SELECT {_COLUMNS} FROM objects o WHERE kind = ? AND ns = ? AND name = ?",
                (kind, namespace, name),
            )
            .fetchone()
        )
        return None if found is None else _row(found)

    def _scan(self, kind: str, namespace: str | None, hint: tuple[str, str] | None) -> list[Row]:
        where, args = "o.kind = ?", [kind]
        if namespace is not None:
            where += " AND o.ns = ?"
            args.append(namespace)
        if hint is None:
            sql = f"SELECT {_COLUMNS} FROM objects o WHERE {where} ORDER BY o.ns, o.name"
        else:
            # CROSS JOIN fixes the join order: the label index first, so the cost is the
            # matching objects (else SQLite walks every object of the kind in (ns, name)
            # order, to skip the sort: O(kind) per selector list).
            sql = (
                f"SELECT {_COLUMNS} FROM labels l CROSS JOIN objects o ON o.id = l.obj "
                f"WHERE l.kind = ? AND l.key = ? AND l.value = ? AND {where} "
                "ORDER BY o.ns, o.name"
            )
            args = [kind, *hint, *args]
        return [_row(found) for found in self._sql().execute(sql, args)]

    def _dependents(self, owner_uid: str) -> list[Row]:
        return [
            _row(found)
            for found in self._sql().execute(
                f"SELECT {_COLUMNS} FROM owners w JOIN objects o ON o.id = w.obj "
                "WHERE w.owner = ? ORDER BY o.kind, o.ns, o.name",
                (owner_uid,),
            )
        ]

    def _uid_exists(self, uid: str) -> bool:
        return (
            self._sql().execute("SELECT 1 FROM objects WHERE uid = ?", (uid,)).fetchone()
            is not None
        )

    def _latest_rv(self) -> int:
        return self._counters()[0]

    def _counters(self) -> tuple[int, int]:
        """(latest resourceVersion, compaction mark), those of the open transaction if any.

        Costs one `PRAGMA data_version` (none once checked inside a write transaction); the
        meta table is read only when another connection has committed since the last read.
        """
        if not self._checked:
            self._refresh()
        rv = self._rv if self._pending_rv is None else self._pending_rv
        compacted = self._compacted if self._pending_compacted is None else self._pending_compacted
        return rv, compacted

    def _refresh(self) -> None:
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            # Outside a transaction the SELECT may see a commit made after the PRAGMA: newer
            # counters under an older version, so the next check reads them again (harmless;
            # the other order could pair old counters with a new version and miss a commit).
            self._version = None
            found = dict(
                self._db.execute("SELECT key, value FROM meta WHERE key IN ('rv', 'compacted')")
            )
            self._rv, self._compacted = found["rv"], found["compacted"]
            self._version = version
        self._checked = self._db.in_transaction

    def _read_events(
        self, since: int, kinds: Sequence[str] | None, namespace: str | None, limit: int | None
    ) -> list[EventRow]:
        sql = "SELECT rv, type, kind, ns, name, data FROM events WHERE rv > ?"
        args: list[object] = [since]
        if kinds is not None:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += kinds
        if namespace is not None:
            sql += " AND ns = ?"
            args.append(namespace)
        sql += " ORDER BY rv"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        # the watch read does not begin a lazily opened transaction: what a watcher writes
        # in reply is checked by the write itself (preconditions), as outside one
        return [EventRow(*found) for found in self._db.execute(sql, args)]

    def _compacted_rv(self) -> int:
        return self._counters()[1]

    def _meta(self, key: str) -> int:
        value: int = (
            self._sql().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]
        )
        return value

    # --- writes -------------------------------------------------------------------------

    def _next_rv(self) -> int:
        self._sql()  # under the write lock before the counter is read
        self._pending_rv = self._counters()[0] + 1
        return self._pending_rv

    def _save(self, row: Row, old: Row | None, event: EventType) -> None:
        labels, owners = wire.dumps(row.labels), wire.dumps(row.owners)
        (oid,) = (
            self._sql()
            .execute(
                "INSERT INTO objects (kind, ns, name, uid, rv, labels, owners, data) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, ns, name) DO UPDATE SET "
                "uid = excluded.uid, rv = excluded.rv, labels = excluded.labels, "
                "owners = excluded.owners, data = excluded.data RETURNING id",
                (row.kind, row.namespace, row.name, row.uid, row.rv, labels, owners, row.data),
            )
            .fetchone()
        )
        if old is None or old.labels != row.labels:
            self._index(
                "labels", oid, old is not None, [(oid, row.kind, *kv) for kv in row.labels.items()]
            )
        if old is None or old.owners != row.owners:
            self._index("owners", oid, old is not None, [(uid, oid) for uid in row.owners])
        self._append_event(row, event)

    def _index(self, table: str, oid: int, existed: bool, entries: list[tuple[Any, ...]]) -> None:
        """Replace the `labels` or `owners` entries of object `oid`."""
        if existed:
            self._sql().execute(f"DELETE FROM {table} WHERE obj = ?", (oid,))
        if entries:
            marks = ", ".join("?" * len(entries[0]))
            columns = "(obj, kind, key, value)" if table == "labels" else "(owner, obj)"
            self._sql().executemany(
                f"INSERT OR IGNORE INTO {table} {columns} VALUES ({marks})", entries
            )

    def _drop(self, row: Row) -> None:
        found = (
            self._sql()
            .execute(
                "DELETE FROM objects WHERE kind = ? AND ns = ? AND name = ? RETURNING id",
                (row.kind, row.namespace, row.name),
            )
            .fetchone()
        )
        if found is not None:
            self._sql().execute("DELETE FROM labels WHERE obj = ?", found)
            self._sql().execute("DELETE FROM owners WHERE obj = ?", found)
        self._append_event(row, EventType.DELETED)

    def _append_event(self, row: Row, event: EventType) -> None:
        self._sql().execute(
            "INSERT INTO events (rv, type, kind, ns, name, data) VALUES (?, ?, ?, ?, ?, ?)",
            (row.rv, str(event), row.kind, row.namespace, row.name, row.data),
        )

    def _prune(self, upto: int) -> None:
        self._sql().execute("DELETE FROM events WHERE rv <= ?", (upto,))
        (self._pending_compacted,) = (
            self._sql()
            .execute(
                "UPDATE meta SET value = max(value, ?) WHERE key = 'compacted' RETURNING value",
                (upto,),
            )
            .fetchone()
        )

    # --- transactions -------------------------------------------------------------------

    def _begin(self, depth: int) -> None:
        """Open a transaction level; SQLite sees it at its first statement (`_sql`), so a
        transaction that reads and writes nothing costs nothing — the run loop opens one
        per burst, and many bursts find nothing to do."""
        if depth == 0:
            self._checked = False  # other connections may have committed: check again
        self._opened = depth + 1
        self._marks.append((self._pending_rv, self._pending_compacted))

    def _sql(self) -> sqlite3.Connection:
        """The connection, with every opened transaction level begun in SQLite: BEGIN
        IMMEDIATE (the write lock, before the first read, so a read-modify-write is atomic
        across processes) and a SAVEPOINT per nested level."""
        while self._begun < self._opened:
            level = self._begun
            try:
                self._db.execute("BEGIN IMMEDIATE" if level == 0 else f"SAVEPOINT s{level}")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"{self.path}: cannot start a write transaction: {exc}") from exc
            self._begun = level + 1
        return self._db

    def _end(self, depth: int, ok: bool) -> None:
        self._opened = depth
        pending = self._marks.pop()
        if not ok and depth > 0:  # the level's writes are undone: their rvs are not used up
            self._pending_rv, self._pending_compacted = pending
        if self._begun <= depth:  # this level never reached SQLite: nothing to end
            if depth == 0:
                self._pending_rv = self._pending_compacted = None
                self._checked = False
            return
        self._begun = depth
        if depth > 0:
            if not ok:
                self._db.execute(f"ROLLBACK TO s{depth}")
            self._db.execute(f"RELEASE s{depth}")
            return
        try:
            if ok:
                if self._pending_rv is not None:
                    self._db.execute(
                        "UPDATE meta SET value = ? WHERE key = 'rv'", (self._pending_rv,)
                    )
                self._commit()
            else:
                self._db.execute("ROLLBACK")  # the cached (committed) counters stay right
        except BaseException:
            self._version = None  # whatever happened, read the counters again
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        finally:
            self._pending_rv = self._pending_compacted = None
            self._checked = False

    def _commit(self) -> None:
        """COMMIT, then take the transaction's counters as the committed ones. Own commits
        leave `data_version` unchanged, so the version checked inside the transaction is
        still the one these counters are current for."""
        version, self._version = (self._version if self._checked else None), None
        self._db.execute("COMMIT")
        if self._pending_rv is not None:
            self._rv = self._pending_rv
        if self._pending_compacted is not None:
            self._compacted = self._pending_compacted
        self._version = version


def _row(found: tuple[Any, ...]) -> Row:
    kind, ns, name, uid, rv, data, labels, owners = found
    return Row(kind, ns, name, uid, rv, data, wire.loads(labels), tuple(wire.loads(owners)))
