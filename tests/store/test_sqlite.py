"""SQLite-only guarantees: persistence, crash safety (SIGKILL mid-write), several
processes on one state directory, schema versioning."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vcflow.api.errors import StoreError
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import DB_FILE, SqliteStore

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


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


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
            assert store.wait(rv, timeout=30)
            (event,) = store.events_since(rv)
        finally:
            child.communicate(timeout=30)
        assert event.object.name == "from-child"
