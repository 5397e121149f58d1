"""SQLite-only: what the watch log keeps of big objects (issue 16, item 5). An event of a big
object keeps its status and refers to the rest, stored once: status writes of a big object
copy only the status, and each event still reads back as the whole object as of its write.
And the log is bounded in bytes as well as in events: big objects that change often compact
the oldest events, and a watch from there gets Expired, as from one past the count limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.vcjob import VCJob
from vcflow.store import Expired, SqliteStore
from vcflow.store import sqlite as sqlite_store

from ..conftest import vcjob

BIG = "x" * 100_000  # an annotation of 100 kB: every event of the job holds it


def _big_job(store: SqliteStore) -> int:
    job = vcjob("big")
    job.metadata.annotations["blob"] = BIG
    store.create(job)
    return store.resource_version()


def test_status_writes_of_a_big_object_keep_one_copy_of_its_body(tmp_path: Path) -> None:
    with SqliteStore.in_state_dir(tmp_path / "state", clock=FakeClock()) as store:
        start = _big_job(store)
        for i in range(60):
            store.update_status_data(VCJob, "default", "big", {"state": {"phase": f"P{i}"}})
        (bodies,) = store._db.execute("SELECT count(*) FROM bodies").fetchone()
        (logged,) = store._db.execute("SELECT sum(length(data)) FROM events").fetchone()
        assert bodies == 1 and logged < 60 * 1_000  # statuses only, not 60 x 100 kB
        events = store.events_since(start - 1)
        assert len(events) == 61
        for i, event in enumerate(events[1:]):
            job = event.object
            assert isinstance(job, VCJob)
            assert job.phase == f"P{i}"
            assert job.metadata.annotations["blob"] == BIG
            assert job.metadata.resource_version == str(event.resource_version)
        # the text is the object's as stored, byte for byte
        current = store._db.execute("SELECT data FROM objects WHERE name = 'big'").fetchone()[0]
        assert events[-1].raw == current


def test_big_objects_that_change_often_compact_the_oldest_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "EVENT_BYTES", 1_000_000)
    monkeypatch.setattr(sqlite_store, "EVENT_BYTES_CHECK", 200_000)
    with SqliteStore.in_state_dir(tmp_path / "state", clock=FakeClock()) as store:
        start = _big_job(store)
        for i in range(60):  # a new 100 kB body each time: 6 MB, far fewer than 20,000 events
            job = store.get(VCJob, "default", "big")
            job.metadata.annotations["blob"] = f"{i:03d}" + BIG
            store.update(job)
        sizes = store._db.execute(
            "SELECT (SELECT count(*) FROM events), (SELECT sum(length(data)) FROM bodies)"
        ).fetchone()
        assert sizes[0] < 20
        assert sizes[1] <= 1_000_000 + 200_000 + 2 * len(BIG)
        with pytest.raises(Expired):
            store.events_since(start)
        assert store.events_since(store.resource_version() - 1)  # the newest are kept
