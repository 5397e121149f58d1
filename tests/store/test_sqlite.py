"""SQLite-only guarantees: persistence, crash safety (SIGKILL mid-write), several
processes on one state directory, schema versioning, and the cached counters (latest
resourceVersion, compaction mark) that keep an idle poll to one statement while every other
connection's commit is still seen."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from vcflow.api.errors import AlreadyExists, StoreError
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import DB_FILE, Cursor, Expired, SqliteStore
from vcflow.store.wire import EventRow

from .conftest import flow, vcjob

_PRELUDE = textwrap.dedent(
    """
    import sys
    from vcflow.api.errors import Conflict
    from vcflow.api.vcjob import VCJob
    from vcflow.store import SqliteStore

    TASKS = [{"name": "t", "replicas": 1, "template": {"spec": {"restartPolicy": "Never",
              "containers": [{"name": "c", "image": "busybox"}]}}}]

    def job(name, **labels):
        return VCJob.from_dict({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                "metadata": {"name": name, "labels": labels},
                                "spec": {"minAvailable": 1, "tasks": TASKS}})

    store = SqliteStore.in_state_dir(sys.argv[1])
    """
)

_CRASH_WRITER = _PRELUDE + textwrap.dedent(
    """
    for i in range(1_000_000):
        if i % 2:
            store.apply([job(f"batch-{i}-{k}", batch=str(i)) for k in range(3)])
            print(f"batch-{i}", flush=True)
        else:
            created = store.create(job(f"job-{i}", n=str(i)))
            print(f"job-{i} {created.metadata.resource_version}", flush=True)
    """
)

_COUNTER_WRITER = _PRELUDE + textwrap.dedent(
    """
    import os, time
    who, rounds, go = sys.argv[2], int(sys.argv[3]), sys.argv[4]
    while not os.path.exists(go):  # both writers start together
        time.sleep(0.002)
    for i in range(rounds):
        store.create(job(f"{who}-{i}"))
        while True:
            counter = store.get(VCJob, "default", "counter")
            count = int(counter.metadata.annotations.get("count", "0"))
            counter.metadata.annotations["count"] = str(count + 1)
            try:
                store.update(counter)
                break
            except Conflict:
                continue
    """
)


_COMPACTING_WRITER = _PRELUDE + textwrap.dedent(
    """
    small = SqliteStore.in_state_dir(sys.argv[1], event_retention=5)
    for i in range(20):
        small.create(job(f"c-{i}"))
    """
)


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(code: str, *args: str) -> None:
    child = _spawn(code, *args)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 0, err


def test_state_survives_reopen(tmp_path: Path) -> None:
    with SqliteStore.in_state_dir(tmp_path) as store:
        created = store.create(flow("f", "a"))
        store.create(vcjob("j", labels={"k": "v"}))
    assert (tmp_path / DB_FILE).exists()
    with SqliteStore.in_state_dir(tmp_path) as store:
        assert store.get(JobFlow, "default", "f").metadata.uid == created.metadata.uid
        assert [j.name for j in store.list(VCJob, label_selector="k=v")] == ["j"]
        assert store.create(vcjob("k")).metadata.resource_version == "3"
        assert [e.resource_version for e in store.events_since(1)] == [2, 3]
        assert store.check() == []


def test_journal_is_wal(tmp_path: Path) -> None:
    SqliteStore.in_state_dir(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_FILE) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    SqliteStore.in_state_dir(tmp_path).close()
    db = sqlite3.connect(tmp_path / DB_FILE)
    db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        SqliteStore.in_state_dir(tmp_path)


def test_another_programs_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    # a vcflow.db that is some other program's: vcflow added its tables to it (and WAL)
    db = sqlite3.connect(tmp_path / DB_FILE)
    db.execute("CREATE TABLE songs (title TEXT)")
    db.commit()
    db.close()
    before = (tmp_path / DB_FILE).read_bytes()
    with pytest.raises(StoreError) as refused:
        SqliteStore.in_state_dir(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path / DB_FILE}: another program's SQLite database (tables songs), not a "
        "vcflow store: give --state-dir a directory of vcflow's own"
    )
    assert (tmp_path / DB_FILE).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [DB_FILE]  # (no -wal, no -shm)


def test_sigkill_mid_writes_loses_nothing_acknowledged(tmp_path: Path) -> None:
    """Kill a writer with SIGKILL; every write it acknowledged is there, batches are whole,
    the file passes integrity and index checks, and the store takes new writes."""
    child = _spawn(_CRASH_WRITER, str(tmp_path))
    assert child.stdout is not None
    acked: list[str] = []
    deadline = time.monotonic() + 30
    while len(acked) < 150 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        acked.append(line.strip())
    child.send_signal(signal.SIGKILL)
    rest, err = child.communicate(timeout=10)
    acked += [line for line in rest.splitlines() if line]
    assert child.returncode == -signal.SIGKILL, err
    assert len(acked) >= 150, err

    with SqliteStore.in_state_dir(tmp_path) as store:
        assert store.check() == []
        names = {j.name for j in store.list(VCJob)}
        for ack in acked:
            name, *rv = ack.split()
            if name.startswith("batch-"):
                assert {f"{name}-{k}" for k in range(3)} <= names
            else:
                assert name in names
                assert store.get(VCJob, "default", name).metadata.resource_version == rv[0]
        for batch in {j.metadata.labels.get("batch") for j in store.list(VCJob)} - {None}:
            assert len(store.list(VCJob, label_selector=f"batch={batch}")) == 3
        top = max(int(j.metadata.resource_version) for j in store.list(VCJob))
        assert int(store.create(vcjob("after-crash")).metadata.resource_version) > top


def test_two_processes_share_one_state_dir(tmp_path: Path) -> None:
    """Concurrent writers in two processes: no lost update (optimistic concurrency across
    processes), every object present, resourceVersions unique, the file consistent."""
    rounds = 60
    with SqliteStore.in_state_dir(tmp_path) as store:
        store.create(vcjob("counter"))
    go = tmp_path / "go"
    children = [
        _spawn(_COUNTER_WRITER, str(tmp_path), who, str(rounds), str(go)) for who in ("p", "q")
    ]
    go.touch()
    for child in children:
        _, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    with SqliteStore.in_state_dir(tmp_path) as store:
        counter = store.get(VCJob, "default", "counter")
        assert counter.metadata.annotations["count"] == str(2 * rounds)
        jobs = store.list(VCJob)
        assert len(jobs) == 2 * rounds + 1
        rvs = [j.metadata.resource_version for j in jobs]
        assert len(set(rvs)) == len(rvs)
        events = store.events_since(0)
        assert [e.resource_version for e in events] == sorted({e.resource_version for e in events})
        assert store.check() == []


def test_watch_sees_another_process_commit(tmp_path: Path) -> None:
    with SqliteStore.in_state_dir(tmp_path) as store:
        rv = store.resource_version()
        child = _spawn(_PRELUDE + "store.create(job('from-child'))\n", str(tmp_path))
        try:
            assert store.wait(Cursor(rv), timeout=30)
            (event,) = store.events_since(rv)
        finally:
            child.communicate(timeout=30)
        assert event.object.name == "from-child"


# --- the cached counters -------------------------------------------------------------------


def test_another_stores_commits_are_seen(tmp_path: Path) -> None:
    """Two stores on one file, each with its counters cached: each sees the other's commits
    in resource_version() and events_since, and allocates resourceVersions after them."""
    with SqliteStore.in_state_dir(tmp_path) as mine, SqliteStore.in_state_dir(tmp_path) as other:
        mine.create(vcjob("a"))
        rv = mine.resource_version()
        assert mine.events_since(rv) == []
        other.create(vcjob("b"))
        assert mine.resource_version() == rv + 1
        assert [e.object.name for e in mine.events_since(rv)] == ["b"]
        assert mine.events_since(rv + 1) == []
        assert mine.create(vcjob("c")).metadata.resource_version == str(rv + 2)
        assert other.resource_version() == rv + 2
        assert [e.object.name for e in other.events_since(rv)] == ["b", "c"]
        with pytest.raises(Expired, match="newer than the store's"):
            mine.events_since(rv + 3)
        assert mine.check() == []


def test_another_process_commits_and_compaction_are_seen(tmp_path: Path) -> None:
    with SqliteStore.in_state_dir(tmp_path) as store:
        store.create(vcjob("a"))
        rv = store.resource_version()
        assert store.events_since(rv) == []
        _run(_PRELUDE + "store.create(job('from-child'))\n", str(tmp_path))
        assert store.resource_version() == rv + 1
        assert [e.object.name for e in store.events_since(rv)] == ["from-child"]
        _run(_COMPACTING_WRITER, str(tmp_path))
        with pytest.raises(Expired, match="too old"):
            store.events_since(rv)
        assert store.resource_version() == rv + 21
        assert store.events_since(rv + 21) == []


def test_compaction_by_another_store_expires_a_resume(tmp_path: Path) -> None:
    with (
        SqliteStore.in_state_dir(tmp_path) as mine,
        SqliteStore.in_state_dir(tmp_path, event_retention=5) as small,
    ):
        mine.create(vcjob("a"))
        rv = mine.resource_version()
        assert mine.events_since(rv) == []
        for i in range(20):
            small.create(vcjob(f"j{i}"))
        with pytest.raises(Expired, match="too old"):
            mine.events_since(rv)


def test_compaction_during_the_read_expires_a_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection compacts between events_since's look at the counters and its read
    of the event log: the rows it read miss events, so it raises Expired."""
    with (
        SqliteStore.in_state_dir(tmp_path) as mine,
        SqliteStore.in_state_dir(tmp_path, event_retention=5) as small,
    ):
        mine.create(vcjob("a"))
        mine.create(vcjob("b"))
        read = mine._read_events

        def compact_then_read(*args: Any) -> list[EventRow]:
            for i in range(20):
                small.create(vcjob(f"j{i}"))
            return read(*args)

        monkeypatch.setattr(mine, "_read_events", compact_then_read)
        with pytest.raises(Expired, match="too old"):
            mine.events_since(1)


def test_rolled_back_transaction_leaves_the_counters(tmp_path: Path) -> None:
    with SqliteStore.in_state_dir(tmp_path) as store, SqliteStore.in_state_dir(tmp_path) as other:
        store.create(vcjob("a"))
        with pytest.raises(AlreadyExists), store.transaction():
            store.create(vcjob("b"))
            assert store.resource_version() == 2  # its own write, not committed yet
            store.create(vcjob("a"))
        assert store.resource_version() == 1
        assert store.events_since(1) == []
        other.create(vcjob("c"))
        assert store.resource_version() == 2
        assert store.create(vcjob("d")).metadata.resource_version == "3"
        assert store.check() == []


class _FailingCommit:
    """A store's connection whose next COMMIT fails (as a full disk would make it)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.armed = True

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "COMMIT" and self.armed:
            self.armed = False
            error = sqlite3.OperationalError("database or disk is full (simulated)")
            error.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
            raise error
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def test_failed_commit_leaves_the_counters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SqliteStore.in_state_dir(tmp_path) as store, SqliteStore.in_state_dir(tmp_path) as other:
        store.create(vcjob("a"))
        monkeypatch.setattr(store, "_db", _FailingCommit(store._db))
        with pytest.raises(StoreError, match="no space left on device"):
            store.create(vcjob("b"))
        assert store.resource_version() == other.resource_version() == 1
        assert store.events_since(1) == []
        assert store.create(vcjob("c")).metadata.resource_version == "2"
        assert [e.object.name for e in other.events_since(1)] == ["c"]


@pytest.mark.optimisation
def test_idle_poll_is_one_statement(tmp_path: Path) -> None:
    """Controllers poll resource_version() and events_since(rv) in tight loops: with
    nothing new, each costs at most one statement, and the event log is not read."""
    with SqliteStore.in_state_dir(tmp_path) as store, SqliteStore.in_state_dir(tmp_path) as other:
        store.create(vcjob("a"))
        other.create(vcjob("b"))
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        try:
            for _ in range(3):
                rv = store.resource_version()  # (the first re-reads the counters: b committed)
                for kinds in (None, [VCJob]):
                    statements.clear()
                    assert store.events_since(rv, kinds=kinds, namespace="default") == []
                    assert len(statements) <= 1, statements
                    assert not [s for s in statements if "events" in s.lower()], statements
                statements.clear()
                assert store.resource_version() == rv
                assert len(statements) <= 1, statements
        finally:
            store._db.set_trace_callback(None)
        other.create(vcjob("c"))
        assert [e.object.name for e in store.events_since(rv)] == ["c"]
