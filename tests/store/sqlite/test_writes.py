"""SQLite-only: what a write costs and what that relies on. A write inside a transaction
takes no savepoint (a statement failing midway aborts the transaction instead); rows
written or read in a write transaction are kept, so a read-modify-write runs no SELECT —
and a kept row is never used once stale (another store's or process's commit, a rollback);
an update does not rewrite the uid index; the schema upgrade from version 1."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.errors import Conflict, StoreError
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore
from vcflow.store.base import Cursor
from vcflow.store.sqliteschema import SCHEMA_VERSION

from ..conftest import vcjob
from ..test_sqlite import _PRELUDE, _run
from .conftest import Boom


@pytest.fixture
def other(path: Path, store: SqliteStore) -> Iterator[SqliteStore]:
    """A second store on the same file (as another process would be)."""
    with SqliteStore(path, clock=FakeClock()) as opened:
        yield opened


@contextmanager
def traced(store: SqliteStore) -> Iterator[list[str]]:
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store._db.set_trace_callback(None)


def fail_statement(store: SqliteStore, table: str, name: str) -> None:
    """Make SQLite itself refuse an insert into `table` of object `name` (a real statement
    error, as a full disk would give)."""
    store._db.execute(
        f"CREATE TEMP TRIGGER fail_{table} BEFORE INSERT ON main.{table} "
        f"WHEN NEW.name = '{name}' BEGIN SELECT RAISE(ABORT, 'simulated failure'); END"
    )


def annotation(store: SqliteStore, name: str) -> str | None:
    return store.get(VCJob, "default", name).metadata.annotations.get("n")


def annotated(job: VCJob, value: str) -> VCJob:
    job.metadata.annotations["n"] = value
    return job


# --- no savepoint per write; a statement failing midway --------------------------------


@pytest.mark.optimisation
def test_writes_in_a_transaction_take_no_savepoint(store: SqliteStore) -> None:
    with traced(store) as seen, store.transaction():
        store.create(vcjob("a"))
        store.update_status(store.get(VCJob, "default", "a"))
        store.delete(VCJob, "default", "a")
        with store.transaction():  # a nested transaction is still a savepoint
            store.create(vcjob("b"))
    control = [s for s in seen if s.split()[0] in ("BEGIN", "SAVEPOINT", "RELEASE", "COMMIT")]
    assert control == ["BEGIN IMMEDIATE", "SAVEPOINT s1", "RELEASE s1", "COMMIT"]


def test_a_statement_failing_midway_rolls_the_transaction_back(
    store: SqliteStore, other: SqliteStore
) -> None:
    """The object's row is written, then SQLite refuses its event: the transaction is
    rolled back at once (the write lock goes with it) and cannot commit."""
    store.create(vcjob("before"))
    fail_statement(store, "events", "mid")
    with pytest.raises(StoreError, match="rolled back"), store.transaction():
        store.create(vcjob("a", labels={"k": "v"}))
        with pytest.raises(sqlite3.IntegrityError, match="simulated"):
            store.create(vcjob("mid", labels={"k": "v"}))
        assert not store._db.in_transaction
        other.create(vcjob("other"))  # not locked out any more
    assert [j.name for j in other.list(VCJob)] == ["before", "other"]
    assert [j.name for j in store.list(VCJob)] == ["before", "other"]
    assert store.list(VCJob, label_selector="k=v") == []
    assert store.create(vcjob("a")).metadata.resource_version == "3"
    assert store.check() == []


def test_a_statement_failing_first_leaves_the_transaction_going(store: SqliteStore) -> None:
    """SQLite refuses the write's first statement: nothing of it was written, so the
    transaction goes on (and the write took no resourceVersion)."""
    fail_statement(store, "objects", "mid")
    with store.transaction():
        store.create(vcjob("a"))
        with pytest.raises(sqlite3.IntegrityError, match="simulated"):
            store.create(vcjob("mid"))
        store.create(vcjob("b"))
    assert [(e.name, e.resource_version) for e in store.events_since(0)] == [("a", 1), ("b", 2)]
    assert store.check() == []


# --- kept rows ------------------------------------------------------------------------


@pytest.mark.optimisation
def test_a_read_modify_write_of_a_kept_row_runs_no_select(store: SqliteStore) -> None:
    store.create(vcjob("before"))
    with traced(store) as seen, store.transaction():
        created = store.create(vcjob("a"))
        store.update_status(created)
        store.update(annotated(store.get(VCJob, "default", "a"), "1"))
        store.update_status_data(VCJob, "default", "a", {"state": {"phase": "Running"}})
        store.delete(VCJob, "default", "a", force=True)
    assert not [s for s in seen if s.startswith("SELECT") and "FROM objects" in s], seen
    # and an update rewrites neither the uid nor the row's key (their indexes)
    updates = [s.split(" = ", 1)[0] for s in seen if s.startswith("UPDATE objects")]
    assert updates == ["UPDATE objects SET rv"] * 2  # (update_status(created): no change)


def test_kept_rows_never_hide_another_stores_commit(store: SqliteStore, other: SqliteStore) -> None:
    """Each store keeps the row it wrote; the other's commit is seen by the next read and
    by the next read-modify-write (merged onto it, and its preconditions checked on it)."""
    with store.transaction():
        mine = store.create(annotated(vcjob("a"), "mine"))
    theirs = other.update(annotated(other.get(VCJob, "default", "a"), "theirs"))
    with store.transaction():
        assert annotation(store, "a") == "theirs"
        with pytest.raises(Conflict):
            store.update(annotated(mine.clone(), "stale"))  # mine's rv is stale now
        store.update_status_data(VCJob, "default", "a", {"state": {"phase": "Running"}})
    assert annotation(other, "a") == "theirs"
    with pytest.raises(Conflict):  # and the other way round
        other.update(annotated(theirs, "stale"))
    assert other.get(VCJob, "default", "a").metadata.resource_version == "3"


def test_kept_rows_are_dropped_on_rollback(store: SqliteStore) -> None:
    store.create(annotated(vcjob("a"), "committed"))
    with pytest.raises(Boom), store.transaction():
        store.update(annotated(store.get(VCJob, "default", "a"), "rolled back"))
        raise Boom
    with store.transaction():
        assert annotation(store, "a") == "committed"
        with pytest.raises(Boom), store.transaction():  # a savepoint's rollback too
            store.update(annotated(store.get(VCJob, "default", "a"), "rolled back"))
            raise Boom
        assert annotation(store, "a") == "committed"
        job = store.get(VCJob, "default", "a")
        store.update_status_data(VCJob, "default", "a", {"state": {"phase": "Running"}})
    assert annotation(store, "a") == "committed"
    assert job.metadata.resource_version == "1"
    assert store.get(VCJob, "default", "a").metadata.resource_version == "2"
    assert store.check() == []


def test_a_name_kept_as_absent_is_created(store: SqliteStore, other: SqliteStore) -> None:
    with store.transaction():
        assert store._load("batch.volcano.sh/v1alpha1/Job", "default", "a") is None
        store.create(vcjob("a"))
        assert store.get(VCJob, "default", "a").name == "a"
    with store.transaction():
        assert store._load("batch.volcano.sh/v1alpha1/Job", "default", "b") is None
    other.create(vcjob("b"))
    with store.transaction():
        assert store.get(VCJob, "default", "b").name == "b"


def test_kept_rows_see_another_process_commit(path: Path, store: SqliteStore) -> None:
    with store.transaction():
        store.create(annotated(vcjob("job"), "mine"))
    _run(
        _PRELUDE
        + "j = store.get(VCJob, 'default', 'job')\n"
        + "j.metadata.annotations['n'] = 'child'\n"
        + "store.update(j)\n",
        str(path.parent),
    )
    with store.transaction():
        store.update_status_data(VCJob, "default", "job", {"state": {"phase": "Running"}})
    assert annotation(store, "job") == "child"
    assert store.get(VCJob, "default", "job").metadata.resource_version == "3"


# --- counters ---------------------------------------------------------------------------


@pytest.mark.optimisation
def test_a_commit_writes_no_counter(store: SqliteStore) -> None:
    store.resource_version()  # (a new store reads the counters once)
    with traced(store) as seen:
        store.create(vcjob("a"))
        store.create(vcjob("b"))
    assert not [s for s in seen if s.startswith(("UPDATE meta", "INSERT INTO meta"))], seen
    assert store.resource_version() == 2
    assert store.check() == []


@pytest.mark.optimisation
def test_an_idle_poll_is_one_statement(store: SqliteStore, other: SqliteStore) -> None:
    store.create(vcjob("a"))
    other.create(vcjob("b"))
    assert [e.name for e in store.poll_events(Cursor(1), [VCJob])[0]] == ["b"]
    with traced(store) as seen:
        assert store.poll_events(Cursor(2), [VCJob]) == ([], Cursor(2))
    assert seen == ["PRAGMA data_version"]


# --- schema version 1 -------------------------------------------------------------------

_V1_INDEXES = """
CREATE TABLE labels_v1 (
    obj INTEGER NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (obj, key)
) WITHOUT ROWID;
INSERT INTO labels_v1 SELECT obj, kind, key, value FROM labels;
DROP TABLE labels;
ALTER TABLE labels_v1 RENAME TO labels;
CREATE INDEX labels_kv ON labels (kind, key, value);
CREATE INDEX owners_obj ON owners (obj);
PRAGMA user_version=1;
"""


def as_version_1(path: Path, counter: int) -> None:
    """Turn a file into a schema version 1 one: each index with its second b-tree (by
    object), and the resourceVersion counter in meta."""
    db = sqlite3.connect(path)
    db.executescript(_V1_INDEXES)
    db.execute("UPDATE meta SET value = ? WHERE key = 'rv'", (counter,))
    db.commit()
    db.close()


def test_a_version_1_file_is_upgraded(path: Path) -> None:
    with SqliteStore(path, clock=FakeClock()) as store:
        owner = store.create(vcjob("owner", labels={"k": "v"}))
        store.create(vcjob("dep", labels={"k": "v", "x": "y"}, owners=(owner,)))
    as_version_1(path, counter=2)
    with SqliteStore(path, clock=FakeClock()) as store:
        assert store.check() == []
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        indexes = {r[0] for r in store._db.execute("SELECT name FROM sqlite_schema")}
        assert not {"labels_kv", "owners_obj"} & indexes
        assert [j.name for j in store.list(VCJob, label_selector="k=v")] == ["dep", "owner"]
        job = store.get(VCJob, "default", "dep")
        job.metadata.labels = {"k": "w"}
        assert store.update(job).metadata.resource_version == "3"
        assert [j.name for j in store.list(VCJob, label_selector="k=w")] == ["dep"]
        store.delete(VCJob, "default", "owner")  # collects its dependent through `owners`
        assert store.list(VCJob) == []
        assert store.check() == []


def test_a_version_1_counter_ahead_of_the_events_is_kept(path: Path) -> None:
    """Version 1 kept the counter in meta; should it be ahead of every stored event, the
    next resourceVersion still follows it (never reused)."""
    with SqliteStore(path, clock=FakeClock()) as store:
        store.create(vcjob("a"))
    as_version_1(path, counter=40)
    with SqliteStore(path, clock=FakeClock()) as store:
        assert store.resource_version() == 40
        assert store.create(vcjob("b")).metadata.resource_version == "41"
    with SqliteStore(path, clock=FakeClock()) as store:
        assert store.resource_version() == 41
        assert store.check() == []


def test_counter_survives_compacting_every_event(path: Path) -> None:
    with SqliteStore(path, clock=FakeClock(), event_retention=0) as store:
        for name in ("a", "b", "c"):
            store.create(vcjob(name))
        assert store._db.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    with SqliteStore(path, clock=FakeClock()) as store:
        assert store.resource_version() == 3
        assert store.create(vcjob("d")).metadata.resource_version == "4"


def test_removal_by_an_update_unindexes_the_stored_labels(store: SqliteStore) -> None:
    """The update that empties the finalizers of an object being deleted removes it, with
    labels of its own: the index entries removed are those of the stored labels."""
    store.create(vcjob("a", labels={"k": "old"}, finalizers=["example.com/keep"]))
    store.delete(VCJob, "default", "a")
    held = store.get(VCJob, "default", "a")
    held.metadata.labels, held.metadata.finalizers = {"k": "new"}, []
    store.update(held)
    assert store.check() == []
    store.create(vcjob("b"))  # (may take the removed object's id)
    assert store.list(VCJob, label_selector="k=old") == []
    assert store.check() == []


def test_a_version_2_file_is_upgraded(path: Path) -> None:
    """Version 2's watch log had no shared bodies: its events read as before, and big
    objects written after the upgrade share theirs."""
    with SqliteStore(path, clock=FakeClock()) as store:
        store.create(vcjob("old"))
    db = sqlite3.connect(path)
    db.execute("DROP TABLE bodies")
    db.execute("ALTER TABLE events DROP COLUMN body")
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    with SqliteStore(path, clock=FakeClock()) as store:
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert [e.object.name for e in store.events_since(0)] == ["old"]
        big = vcjob("big")
        big.metadata.annotations["blob"] = "x" * 100_000
        store.create(big)
        assert store._db.execute("SELECT count(*) FROM bodies").fetchone()[0] == 1
        assert [e.object.name for e in store.events_since(0)] == ["old", "big"]
        assert store.check() == []
