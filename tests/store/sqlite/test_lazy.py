"""SQLite transactions begin lazily: `transaction()` only records the level, and SQLite sees
BEGIN IMMEDIATE (or a SAVEPOINT per nested level) at the first statement that needs it. So
an empty burst costs nothing, a watch read (`events_since`) never takes the write lock, and
a read inside a transaction (`get`) does — a read-modify-write stays atomic across
processes. What commits, rolls back and is seen by another connection is as before."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.errors import NotFound, StoreError
from vcflow.api.vcjob import VCJob
from vcflow.store import SqliteStore

from ..conftest import vcjob
from .conftest import Boom

#: statements that open, end or nest a transaction
_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "END")


@contextmanager
def traced(store: SqliteStore) -> Iterator[list[str]]:
    """The transaction-control statements the store's connection runs inside the block."""
    seen: list[str] = []

    def record(statement: str) -> None:
        if statement.lstrip().upper().startswith(_CONTROL):
            seen.append(statement.strip())

    store._db.set_trace_callback(record)
    try:
        yield seen
    finally:
        store._db.set_trace_callback(None)


def top(seen: list[str]) -> list[str]:
    """The outermost level's statements (without the SAVEPOINTs of nested levels)."""
    return [s for s in seen if s in ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")]


def names_of(store: SqliteStore) -> list[str]:
    return [j.name for j in store.list(VCJob)]


@pytest.mark.optimisation
def test_an_empty_transaction_reaches_no_sqlite(store: SqliteStore) -> None:
    with traced(store) as seen:
        with store.transaction():
            assert not store._db.in_transaction
        with store.transaction(), store.transaction():  # nested, still empty
            pass
    assert seen == []
    assert not store._db.in_transaction


@pytest.mark.optimisation
def test_a_watch_read_in_a_transaction_does_not_begin_it(store: SqliteStore) -> None:
    store.create(vcjob("a"))
    store.create(vcjob("b"))
    with traced(store) as seen, store.transaction():
        found = store.events_since(0)
        latest = store.resource_version()
        assert not store._db.in_transaction
    assert [e.name for e in found] == ["a", "b"]
    assert latest == 2
    assert seen == []


@pytest.mark.optimisation
def test_writes_in_one_transaction_commit_once(store: SqliteStore) -> None:
    with traced(store) as seen, store.transaction():
        for name in ("a", "b", "c"):
            store.create(vcjob(name))
    assert top(seen) == ["BEGIN IMMEDIATE", "COMMIT"]
    assert not any(s.startswith("ROLLBACK") for s in seen)
    assert names_of(store) == ["a", "b", "c"]
    assert store.resource_version() == 3
    # each write on its own is a transaction of its own: the counting above is not vacuous
    with traced(store) as alone:
        store.create(vcjob("d"))
        store.create(vcjob("e"))
    assert top(alone) == ["BEGIN IMMEDIATE", "COMMIT"] * 2


def test_an_error_after_writes_rolls_all_of_them_back(store: SqliteStore, path: Path) -> None:
    store.create(vcjob("before"))
    rv = store.resource_version()
    with traced(store) as seen, pytest.raises(Boom), store.transaction():
        store.create(vcjob("a"))
        store.create(vcjob("b"))
        raise Boom
    assert top(seen) == ["BEGIN IMMEDIATE", "ROLLBACK"]
    assert store.resource_version() == rv
    assert names_of(store) == ["before"]
    for name in ("a", "b"):
        with pytest.raises(NotFound):
            store.get(VCJob, "default", name)
    assert store.events_since(rv) == []
    with SqliteStore(path, clock=FakeClock()) as other:
        assert other.resource_version() == rv
        assert [j.name for j in other.list(VCJob)] == ["before"]
    # the counters cached by the store stay right: the next write takes the next rv
    assert store.create(vcjob("after")).metadata.resource_version == str(rv + 1)


def test_an_inner_error_undoes_only_the_inner_writes(store: SqliteStore) -> None:
    with traced(store) as seen, store.transaction():
        store.create(vcjob("outer-1"))
        with pytest.raises(Boom), store.transaction():
            store.create(vcjob("inner"))
            raise Boom
        store.create(vcjob("outer-2"))
    assert top(seen) == ["BEGIN IMMEDIATE", "COMMIT"]
    assert seen.count("ROLLBACK TO s1") == 1
    assert names_of(store) == ["outer-1", "outer-2"]
    assert [e.name for e in store.events_since(0)] == ["outer-1", "outer-2"]


def test_an_inner_level_first_written_begins_both(store: SqliteStore) -> None:
    """The first statement comes from inside the nested level: the outer BEGIN and the
    SAVEPOINT both go to SQLite then; the inner error leaves the outer transaction empty."""
    store.create(vcjob("before"))
    rv = store.resource_version()
    with traced(store) as seen, store.transaction(), pytest.raises(Boom), store.transaction():
        store.create(vcjob("inner"))
        raise Boom
    # the outer level, then the nested one (create's own write takes no savepoint)
    assert seen == ["BEGIN IMMEDIATE", "SAVEPOINT s1", "ROLLBACK TO s1", "RELEASE s1", "COMMIT"]
    assert names_of(store) == ["before"]
    assert store.events_since(rv) == []


def test_a_deep_level_first_written_begins_every_level_before_the_write(
    store: SqliteStore,
) -> None:
    """Five levels opened, the first statement in the innermost: every level is begun in
    SQLite before that statement runs, so undoing the innermost undoes all of its writes."""
    with store.transaction(), store.transaction(), store.transaction(), store.transaction():
        with pytest.raises(Boom), store.transaction():
            store.create(vcjob("deep"))
            raise Boom
        store.create(vcjob("kept"))
    assert names_of(store) == ["kept"]
    assert [e.name for e in store.events_since(0)] == ["kept"]


@pytest.mark.optimisation
def test_nested_levels_that_never_wrote_add_no_statements(store: SqliteStore) -> None:
    with traced(store) as plain, store.transaction():
        store.create(vcjob("b"))
    with traced(store) as seen, store.transaction():
        with store.transaction():
            pass
        with pytest.raises(Boom), store.transaction():
            raise Boom  # nothing to undo
        store.create(vcjob("a"))
    assert seen == plain  # the empty levels added nothing to what one write does
    assert top(seen) == ["BEGIN IMMEDIATE", "COMMIT"]
    assert names_of(store) == ["a", "b"]


def test_a_read_in_a_transaction_takes_the_write_lock(store: SqliteStore, path: Path) -> None:
    store.create(vcjob("a"))
    with SqliteStore(path, clock=FakeClock(), busy_timeout=0.05) as other:
        with store.transaction():
            store.get(VCJob, "default", "a")
            assert store._db.in_transaction
            with pytest.raises(StoreError, match="cannot start a write transaction"):
                other.create(vcjob("b"))
        other.create(vcjob("b"))  # the lock went with the transaction
        assert [j.name for j in store.list(VCJob)] == ["a", "b"]


def test_a_watch_read_in_a_transaction_leaves_others_free_to_write(
    store: SqliteStore, path: Path
) -> None:
    store.create(vcjob("a"))
    with SqliteStore(path, clock=FakeClock(), busy_timeout=0.05) as other, store.transaction():
        assert [e.name for e in store.events_since(0)] == ["a"]
        other.create(vcjob("b"))  # not locked out
        # and the open (unbegun) transaction still sees the other's commit
        assert [e.name for e in store.events_since(1)] == ["b"]
        store.create(vcjob("c"))  # the first write begins it, after b: rv 3
    assert [(e.name, e.resource_version) for e in store.events_since(0)] == [
        ("a", 1),
        ("b", 2),
        ("c", 3),
    ]


def test_another_store_sees_a_committed_lazy_transaction(store: SqliteStore, path: Path) -> None:
    with SqliteStore(path, clock=FakeClock()) as other:
        assert other.resource_version() == 0
        with store.transaction():
            store.events_since(0)  # a watch read first: not yet begun
            store.create(vcjob("a"))
            store.create(vcjob("b"))
            assert other.resource_version() == 0  # nothing visible before the commit
        assert other.resource_version() == store.resource_version() == 2
        assert [j.name for j in other.list(VCJob)] == ["a", "b"]
        assert [(e.name, e.resource_version) for e in other.events_since(0)] == [
            ("a", 1),
            ("b", 2),
        ]
        assert other.get(VCJob, "default", "b").metadata.resource_version == "2"
