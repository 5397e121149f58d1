"""`yield_to_writers`: a thread that commits burst after burst (the server's control plane)
lets the writers of its process that wait for the file's write lock (the API) go first,
instead of leaving them to SQLite's busy handler, which may keep them waiting for seconds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tests.store.conftest import template

from vcflow.api.clock import FakeClock
from vcflow.api.jobtemplate import JobTemplate
from vcflow.store import SqliteStore


def test_a_queued_writer_goes_before_the_next_burst(path: Path, store: SqliteStore) -> None:
    other = SqliteStore(path, clock=FakeClock())
    written: list[str] = []
    try:
        with store.transaction():
            store.create(template("burst-1"))
            writer = threading.Thread(
                target=lambda: written.append(
                    other.create(template("api")).metadata.resource_version or ""
                )
            )
            writer.start()
            deadline = time.monotonic() + 10
            while not other._turns._waiting and time.monotonic() < deadline:
                time.sleep(0.005)
        assert store.yield_to_writers(10.0) is True
        store.create(template("burst-2"))  # waits for the API's commit, then goes on
        writer.join(10)
        assert written, "the queued writer never wrote"
        api = store.get(JobTemplate, "default", "api")
        second = store.get(JobTemplate, "default", "burst-2")
        assert int(api.metadata.resource_version or 0) < int(second.metadata.resource_version or 0)
    finally:
        other.close()


def test_with_no_writer_queued_it_does_not_wait(store: SqliteStore) -> None:
    began = time.monotonic()
    assert store.yield_to_writers(5.0) is False
    assert time.monotonic() - began < 1.0
