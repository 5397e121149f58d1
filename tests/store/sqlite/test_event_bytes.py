"""SQLite-only: the watch log is bounded in bytes as well as in events. Each event holds the
whole object as of its write, so big objects written often compact the oldest events long
before the count limit would (issue 16, item 5): the file stays bounded, and a watch from a
compacted position gets Expired, as from one past the count limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.vcjob import VCJob
from vcflow.store import Expired, SqliteStore
from vcflow.store import sqlite as sqlite_store

from ..conftest import vcjob

BIG = "x" * 100_000  # an annotation of 100 kB: each event of the job carries it


def test_big_objects_written_often_compact_the_oldest_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "EVENT_BYTES", 1_000_000)
    monkeypatch.setattr(sqlite_store, "EVENT_BYTES_CHECK", 200_000)
    with SqliteStore.in_state_dir(tmp_path / "state", clock=FakeClock()) as store:
        job = vcjob("big")
        job.metadata.annotations["blob"] = BIG
        store.create(job)
        start = store.resource_version()
        for i in range(60):  # 6 MB of events in all, far fewer than the count limit
            store.update_status_data(VCJob, "default", "big", {"state": {"phase": f"P{i}"}})
        kept = store._db.execute("SELECT count(*), sum(length(data)) FROM events").fetchone()
        assert kept[1] <= 1_000_000 + 200_000 + len(BIG) * 2
        assert kept[0] < 20
        with pytest.raises(Expired):
            store.events_since(start)
        assert store.events_since(store.resource_version() - 1)  # the newest are kept
