"""The embedded default store: one SQLite file (`<state dir>/vcflow.db`), WAL journal;
its tables, their upgrades and their consistency check: `sqliteschema`.

Every write runs in a `BEGIN IMMEDIATE` transaction, so writers from several processes on
one file take turns (`busy_timeout`) and never interleave; readers are never blocked
(WAL). A transaction reaches SQLite at its first statement — the controllers and the
runtime open one per burst of work, and an empty burst then costs nothing — and takes the
write lock before its first read, so a read-modify-write inside it stays atomic; the watch
read (`events_since`) alone does not begin it.

Durability: with `synchronous=NORMAL` (default) a committed write survives the writing
process being killed (SIGKILL: the WAL is in the OS page cache before COMMIT returns) but
the last commits may be lost — never corrupted — on power loss or an OS crash; pass
`synchronous="FULL"` to fsync every commit and survive those too (writes then wait for the
disk).
The WAL is checkpointed by the commit that takes it past `WAL_CHECKPOINT_PAGES`.

Reads of the counters: a store keeps the latest resourceVersion and the compaction mark in
memory. Its own commits update them; another connection's commits (another process, or
another store on the file) are noticed by `PRAGMA data_version`, whose value changes when
another connection has committed since this one last asked, and only then are the counters
re-read. So `resource_version()` and an `events_since` with nothing new cost one cheap
statement (no table read), and still see every commit made before the call.

Rows written or read in write transactions are kept too (a bounded cache, with each row's
id; a name found absent is kept as such), so a read-modify-write of a recent object skips
the SELECT and its update finds the row by id. They are used only inside a write
transaction after its `data_version` check, when no other connection can commit, and
dropped when another connection's commit is noticed and when a transaction (or a
savepoint) rolls back.

Writes nested in a transaction take no savepoint (the engine's `_atomic`: a write that
fails midway aborts the whole transaction, see `backend`); `transaction()` levels do.

Threads: one connection per store, used under the engine's lock (`check_same_thread=False`);
open one store per process (or share one between threads), not one per call.

Files: a new store file is made whole aside and linked into place, and what the machine
refuses is a StoreError naming the file (`sqlitefiles`), never SQLite's exception.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Unpack, cast

from vcflow.api.errors import StoreError
from vcflow.store import sqlitefiles, sqliteschema, wire
from vcflow.store.backend import Options
from vcflow.store.base import EventType
from vcflow.store.engine import StoreEngine
from vcflow.store.wire import EventRow, Row
from vcflow.store.writeturns import turns_of

DB_FILE = "vcflow.db"
#: the watch log keeps at most this many bytes of objects (the newest events; older ones
#: are compacted as the count limit compacts them: a watch from there gets Expired)
EVENT_BYTES = 256 * 1024 * 1024
EVENT_BYTES_CHECK = 8 * 1024 * 1024
#: WAL pages after which a commit checkpoints (SQLite's default, 1,000, checkpoints 10x as
#: often: each one two fsyncs and a copy of the same hot pages); bounds the WAL at ~40 MB
WAL_CHECKPOINT_PAGES = 10_000

_COLUMNS = "o.id, o.kind, o.ns, o.name, o.uid, o.rv, o.data, o.labels, o.owners"
_CACHED_ROWS = 4096  # rows kept for read-modify-writes (a flow's few thousand objects)

_Key = tuple[str, str, str]  # (kind, namespace, name)
#: what adds an object's index entries (a label's, an owner's), and what removes them (by
#: their keys: an index is one b-tree)
_INDEX = (
    "INSERT OR IGNORE INTO labels (kind, key, value, obj) VALUES (?, ?, ?, ?)",
    "INSERT OR IGNORE INTO owners (owner, obj) VALUES (?, ?)",
)
_UNINDEX = (
    "DELETE FROM labels WHERE kind = ? AND key = ? AND value = ? AND obj = ?",
    "DELETE FROM owners WHERE owner = ? AND obj = ?",
)


class SqliteStore(StoreEngine):
    """A `base.Store` in one SQLite file; see the module docstring for the guarantees."""

    poll_interval = 0.05  # other processes' commits are seen by polling `data_version`

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        busy_timeout: float = 30.0,
        **options: Unpack[Options],
    ) -> None:
        super().__init__(**options)
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, not {synchronous!r}")
        self.path = Path(path)
        self._turns = turns_of(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            sqlitefiles.create_whole(self.path)
            self._db = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except (sqlite3.Error, OSError) as exc:
            raise sqlitefiles.failure(self.path, exc) from None
        # The committed counters, as of `PRAGMA data_version` = `_version` (None: unknown,
        # read them again); `_pending_*`: the open transaction's new values (None: unchanged);
        # `_checked`: the counters were checked inside the open transaction, which holds the
        # write lock, so no other connection can commit until it ends.
        self._rv = self._compacted = 0
        self._version: int | None = None
        self._pending_rv: int | None = None
        self._pending_compacted: int | None = None
        self._appended = 0  # bytes of events appended since the size was last looked at
        self._checked = False
        # transaction levels opened by `_begin`, and begun in SQLite (`_sql`)
        self._opened = self._begun = 0
        self._marks: list[tuple[int | None, int | None]] = []  # pending counters per level
        self._rows: dict[_Key, tuple[int, Row | None]] = {}  # (id, row or absent), oldest first
        try:
            self._open(synchronous)
        except sqlite3.Error as exc:
            self._db.close()
            raise sqlitefiles.failure(self.path, exc) from None
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def in_state_dir(cls, state_dir: str | os.PathLike[str], **options: Any) -> SqliteStore:
        """The store of a state directory: `<state_dir>/vcflow.db`."""
        return cls(Path(state_dir) / DB_FILE, **options)

    def _open(self, synchronous: str) -> None:
        foreign = sqliteschema.foreign_tables(self._db)
        if foreign:
            raise StoreError(
                f"{self.path}: another program's SQLite database (tables {', '.join(foreign)}), "
                "not a vcflow store: give --state-dir a directory of vcflow's own"
            )
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            raise StoreError(f"{self.path}: cannot use the WAL journal (got {mode})")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        self._quick_check()
        with self.transaction():
            version = self._sql().execute("PRAGMA user_version").fetchone()[0]
            if version > sqliteschema.SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: schema version {version} is newer than this vcflow "
                    f"understands ({sqliteschema.SCHEMA_VERSION}); upgrade vcflow"
                )
            self._run_script(sqliteschema.SCHEMA)
            if version == 1:
                self._run_script(sqliteschema.FROM_V1)
            columns = {r[1] for r in self._sql().execute("PRAGMA table_info(events)")}
            if "body" not in columns:
                self._run_script(sqliteschema.FROM_V2)
            if version != sqliteschema.SCHEMA_VERSION:
                self._sql().execute(f"PRAGMA user_version={sqliteschema.SCHEMA_VERSION}")

    def _quick_check(self) -> None:
        """StoreError naming the file when SQLite's quick check finds it damaged (a b-tree
        page overwritten, say): refused at open in one line, rather than a store that fails
        midway through a run with SQLite's words. It reads every page once (no index is
        compared with its table: `check` does that)."""
        found = [row[0] for row in self._db.execute("PRAGMA quick_check(1)")]
        if found != ["ok"]:
            raise StoreError(sqlitefiles.damaged(self.path, found[0] if found else "no answer"))

    def _run_script(self, script: str) -> None:
        # executescript would COMMIT the open transaction; run the statements one by one.
        for statement in script.split(";"):
            if statement.strip():
                self._sql().execute(statement)

    def close(self) -> None:
        with self._cond:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """`Backend.transaction`, with what the machine refused (a full disk, a read-only
        file) as a StoreError naming the file; nothing of the transaction is committed."""
        try:
            with super().transaction():
                yield
        except sqlite3.Error as exc:
            if sqlitefiles.code_of(exc) not in sqlitefiles.MACHINE:
                raise  # (a constraint or a misuse: vcflow's bug, not the machine's)
            raise sqlitefiles.failure(self.path, exc) from exc

    def yield_to_writers(self, timeout: float) -> bool:
        """Between two transactions: let the writers of this process that wait for the
        file's write lock (other connections: the server's API) go first, waiting at most
        `timeout` seconds; True if any waited."""
        return self._turns.let_through(timeout)

    def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and a cross-check of the indexes and
        the resourceVersion counter; empty when the file is consistent."""
        with self._cond:
            return sqliteschema.problems(self._db)

    # --- reads --------------------------------------------------------------------------

    def _phase(self, kind: str, namespace: str, name: str) -> str | None:
        found = (
            self._sql()
            .execute(
                "SELECT ifnull(json_extract(data, '$.status.state.phase'), '') FROM objects "
                "WHERE kind = ? AND ns = ? AND name = ?",
                (kind, namespace, name),
            )
            .fetchone()
        )
        return None if found is None else str(found[0])

    def _load(self, kind: str, namespace: str, name: str) -> Row | None:
        db = self._sql()
        key = (kind, namespace, name)
        cached = self._cache_current()
        if cached:
            hit = self._rows.get(key)
            if hit is not None:
                return hit[1]
        found = db.execute(
            f"SELECT {_COLUMNS} FROM objects o WHERE kind = ? AND ns = ? AND name = ?", key
        ).fetchone()
        row = None if found is None else _row(found)
        if cached:  # (absent too: a controller looks for the object it is about to create)
            self._remember(key, 0 if found is None else found[0], row)
        return row

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
        found = [
            (oid, _row((oid, *rest)))
            for oid, *rest in self._sql().execute(
                f"SELECT {_COLUMNS} FROM owners w JOIN objects o ON o.id = w.obj "
                "WHERE w.owner = ? ORDER BY o.kind, o.ns, o.name",
                (owner_uid,),
            )
        ]
        if self._cache_current():  # (in the write collecting them, which rewrites them)
            for oid, row in found:
                self._remember((row.kind, row.namespace, row.name), oid, row)
        return [row for _, row in found]

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
        counters are read only when another connection has committed since the last check.
        """
        if not self._checked:
            self._refresh()
        rv = self._rv if self._pending_rv is None else self._pending_rv
        compacted = self._compacted if self._pending_compacted is None else self._pending_compacted
        return rv, compacted

    def _refresh(self) -> None:
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            self._rows.clear()  # another connection committed: the rows may be stale
            # Outside a transaction the SELECT may see a commit made after the PRAGMA: newer
            # counters under an older version, so the next check reads them again (harmless;
            # the other order could pair old counters with a new version and miss a commit).
            self._version = None
            self._rv, self._compacted = self._db.execute(sqliteschema.COUNTERS).fetchone()
            self._version = version
        self._checked = self._db.in_transaction

    def _cache_current(self) -> bool:
        """Whether the kept rows are current: inside a write transaction (no other connection
        can commit) once `data_version` was checked in it."""
        if not self._checked and self._db.in_transaction:
            self._refresh()
        return self._checked

    def _remember(self, key: _Key, oid: int, row: Row | None) -> None:
        rows = self._rows
        rows.pop(key, None)  # (to the newest end)
        rows[key] = (oid, row)
        if len(rows) > _CACHED_ROWS:
            del rows[next(iter(rows))]

    def _read_events(
        self, since: int, kinds: Sequence[str] | None, namespace: str | None, limit: int | None
    ) -> list[EventRow]:
        sql = (
            "SELECT e.rv, e.type, e.kind, e.ns, e.name, e.data, b.data FROM events e "
            "LEFT JOIN bodies b ON b.hash = e.body WHERE e.rv > ?"
        )
        args: list[object] = [since]
        if kinds is not None:
            sql += f" AND e.kind IN ({','.join('?' * len(kinds))})"
            args += kinds
        if namespace is not None:
            sql += " AND e.ns = ?"
            args.append(namespace)
        sql += " ORDER BY e.rv"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        # the watch read does not begin a lazily opened transaction: what a watcher writes
        # in reply is checked by the write itself (preconditions), as outside one
        return [
            EventRow(
                rv,
                kind_,
                t,
                ns,
                name,
                data if body is None else wire.join_event(body, data, str(rv)),
            )
            for rv, kind_, t, ns, name, data, body in self._db.execute(sql, args)
        ]

    def _compacted_rv(self) -> int:
        return self._counters()[1]

    # --- writes -------------------------------------------------------------------------

    def _next_rv(self) -> int:
        self._sql()  # under the write lock before the counter is read
        self._pending_rv = self._counters()[0] + 1
        return self._pending_rv

    def _save(self, row: Row, old: Row | None, event: EventType) -> bool:
        key = (row.kind, row.namespace, row.name)
        values = (row.rv, wire.dumps(row.labels), wire.dumps(row.owners), row.data)
        if old is None:
            found = (
                self._sql()
                .execute(
                    "INSERT INTO objects (kind, ns, name, uid, rv, labels, owners, data) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, ns, name) DO NOTHING "
                    "RETURNING id",
                    (*key, row.uid, *values),
                )
                .fetchone()
            )
            if found is None:  # a create of a taken name: nothing was written
                return False
            oid = found[0]
            self._index(_INDEX, oid, row.kind, row.labels.items(), row.owners)
        else:
            oid = self._update(key, values)
            if old.labels != row.labels or old.owners != row.owners:  # only what changed
                old_labels, new_labels = old.labels.items(), row.labels.items()
                old_owners, new_owners = set(old.owners), set(row.owners)
                self._index(
                    _UNINDEX, oid, row.kind, old_labels - new_labels, old_owners - new_owners
                )
                self._index(_INDEX, oid, row.kind, new_labels - old_labels, new_owners - old_owners)
        self._append_event(row, event)
        self._remember(key, oid, row)
        return True

    def _update(self, key: _Key, values: tuple[int, str, str, str]) -> int:
        """Rewrite an object's rv, labels, owners and data (not its uid: the uid index would
        be rewritten too) by id when kept (its read just kept it); returns the id."""
        db = self._sql()
        hit = self._rows.get(key)
        if hit is not None and hit[1] is not None:
            sql = "UPDATE objects SET rv = ?, labels = ?, owners = ?, data = ? WHERE id = ?"
            if db.execute(sql, (*values, hit[0])).rowcount == 1:
                return hit[0]
        else:
            found = db.execute(
                "UPDATE objects SET rv = ?, labels = ?, owners = ?, data = ? "
                "WHERE kind = ? AND ns = ? AND name = ? RETURNING id",
                (*values, *key),
            ).fetchone()
            if found is not None:
                return int(found[0])
        raise StoreError(f"{self.path}: {'/'.join(key)} vanished while being updated")

    def _index(
        self,
        statements: tuple[str, str],
        oid: int,
        kind: str,
        labels: Iterable[tuple[str, str]],
        owners: Iterable[str],
    ) -> None:
        """Add (`_INDEX`) or remove (`_UNINDEX`) index entries of object `oid`."""
        label_sql, owner_sql = statements
        if labels:
            self._sql().executemany(label_sql, [(kind, key, value, oid) for key, value in labels])
        if owners:
            self._sql().executemany(owner_sql, [(owner, oid) for owner in owners])

    def _drop(self, row: Row) -> None:
        found = (
            self._sql()
            .execute(
                "DELETE FROM objects WHERE kind = ? AND ns = ? AND name = ? "
                "RETURNING id, labels, owners",
                (row.kind, row.namespace, row.name),
            )
            .fetchone()
        )
        if found is not None:  # (the stored labels: `row` may carry an update's new ones)
            oid, labels, owners = found
            self._index(_UNINDEX, oid, row.kind, wire.loads(labels).items(), wire.loads(owners))
        self._append_event(row, EventType.DELETED)
        self._rows.pop((row.kind, row.namespace, row.name), None)

    def _append_event(self, row: Row, event: EventType) -> None:
        data, body = row.data, None
        parts = wire.split_event(data) if len(data) >= wire.SHARED_BODY_MIN else None
        if parts is not None:  # the body once, however many times it is written
            body = hashlib.sha256(parts[0].encode()).hexdigest()
            added = self._sql().execute(
                "INSERT OR IGNORE INTO bodies (hash, data) VALUES (?, ?)", (body, parts[0])
            )
            self._appended += len(parts[0]) if added.rowcount == 1 else 0
            data = parts[1]
        self._sql().execute(
            "INSERT INTO events (rv, type, kind, ns, name, data, body) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row.rv, str(event), row.kind, row.namespace, row.name, data, body),
        )
        self._appended += len(data)

    def _prune_by_size(self) -> None:
        """Compact the oldest events while the watch log — the events and the bodies they
        refer to — holds more than `EVENT_BYTES` (each event holds an object as of its
        write: objects written often would otherwise fill the file long before
        `event_retention` events). Looked at once `EVENT_BYTES_CHECK` bytes were appended."""
        if self._appended < EVENT_BYTES_CHECK:
            return
        self._appended = 0
        db = self._sql()
        while True:
            (total,) = db.execute(
                "SELECT ifnull((SELECT sum(length(data)) FROM events), 0) "
                "+ ifnull((SELECT sum(length(data)) FROM bodies), 0)"
            ).fetchone()
            if total <= EVENT_BYTES:
                return
            # the oldest tenth of the events (at least one), then look again
            found = db.execute(
                "SELECT rv FROM events ORDER BY rv LIMIT 1 OFFSET "
                "(SELECT count(*) / 10 FROM events)"
            ).fetchone()
            if found is None:
                return
            self._prune(int(found[0]))

    def _prune(self, upto: int) -> None:
        self._sql().execute("DELETE FROM events WHERE rv <= ?", (upto,))
        self._sql().execute(
            "DELETE FROM bodies WHERE hash NOT IN (SELECT body FROM events WHERE body IS NOT NULL)"
        )
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
            self._check_usable()  # an aborted transaction is not begun again
            level = self._begun
            try:
                if level == 0:
                    with self._turns.queued():
                        self._db.execute("BEGIN IMMEDIATE")
                else:
                    self._db.execute(f"SAVEPOINT s{level}")
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
        if not ok:
            self._rows.clear()  # rows this level wrote are undone
        if depth > 0:
            if self._db.in_transaction:  # (SQLite rolls a full disk's transaction back whole)
                if not ok:
                    self._db.execute(f"ROLLBACK TO s{depth}")
                self._db.execute(f"RELEASE s{depth}")
            return
        try:
            if ok:
                self._commit()
            elif self._db.in_transaction:  # (else SQLite rolled it back already)
                self._db.execute("ROLLBACK")  # the cached (committed) counters stay right
        except BaseException:
            self._version = None  # whatever happened, read the counters again
            self._rows.clear()
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        finally:
            self._pending_rv = self._pending_compacted = None
            self._checked = False

    def _write_mark(self) -> tuple[int, int | None, int | None]:
        return self._db.total_changes, self._pending_rv, self._pending_compacted

    def _unwrite(self, mark: object) -> bool:
        changes, rv, compacted = cast(tuple[int, int | None, int | None], mark)
        if self._db.total_changes != changes or (self._begun and not self._db.in_transaction):
            return False  # it wrote rows (or SQLite rolled the transaction back)
        self._pending_rv, self._pending_compacted = rv, compacted
        return True

    def _abort(self) -> None:
        self._marks = [(None, None)] * len(self._marks)  # the levels end undoing nothing
        self._pending_rv = self._pending_compacted = None
        self._rows.clear()
        self._checked = False
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")
        self._begun = 0

    def _maybe_prune(self) -> None:
        if self._pending_rv is not None:  # only a transaction that wrote can pass the horizon
            super()._maybe_prune()
            self._prune_by_size()

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
    _, kind, ns, name, uid, rv, data, labels, owners = found
    return Row(kind, ns, name, uid, rv, data, wire.loads(labels), tuple(wire.loads(owners)))
