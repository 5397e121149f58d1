"""The vcjobs of one flow sync created several at a time (`ControllerOptions(create_workers=N)`, the
operator's), over KubeStore with cached reads: the POSTs overlap, each vcjob is created
once, and the answers are taken in plan order — a name another object holds is still a
NameConflict, the Created events keep the plan's order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.store.conftest import flow, template, vcjob
from tests.store.kubeserver import KubeBackend

from vcflow.api.clock import FakeClock
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.store import MemoryStore

ENTRIES = [f"e{i}" for i in range(6)]


@pytest.fixture
def backend() -> Iterator[KubeBackend]:
    served = KubeBackend(MemoryStore(clock=FakeClock()))
    with served:
        yield served


def _overlap(store: KubeStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The most vcjob POSTs in flight at once, as a one-item list (each POST held 50 ms)."""
    most, now, lock = [0], [0], threading.Lock()
    request = store.client.request

    def held(method: str, path: str, **kwargs: Any) -> Any:
        if method != "POST" or not path.endswith("/jobs"):
            return request(method, path, **kwargs)
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        try:
            time.sleep(0.05)
            return request(method, path, **kwargs)
        finally:
            with lock:
                now[0] -= 1

    monkeypatch.setattr(store.client, "request", held)
    return most


@pytest.mark.parametrize("workers", [1, 4])
def test_one_syncs_creates_overlap_and_are_taken_in_order(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    for name in ENTRIES:
        backend.engine.create(template(name))
    backend.engine.create(vcjob("f-e2"))  # another's: e2 is a NameConflict
    store = KubeStore(
        KubeClient.for_url(backend.served.url, timeout=10), cached_reads=True, async_events=True
    )
    most = _overlap(store, monkeypatch)
    manager = Manager(store, options=ControllerOptions(create_workers=workers))
    try:
        backend.engine.create(flow("f", *ENTRIES))
        deadline = time.monotonic() + 20
        while len(backend.engine.list(VCJob)) < len(ENTRIES):
            assert time.monotonic() < deadline, "not created in time"
            manager.step()
        for _ in range(20):
            manager.step()
    finally:
        manager.flows.close()
        store.close()
    created = [j.name for j in backend.engine.list(VCJob) if j.metadata.owner_references]
    assert sorted(created) == [f"f-{e}" for e in ENTRIES if e != "e2"]
    assert most[0] == (1 if workers == 1 else 4)
    stored = backend.engine.get(JobFlow, "default", "f")
    assert stored.status is not None
    assert stored.status.to_dict()["conditions"]["f-e2"]["reason"] == "NameConflict"
    events = backend.engine.list(Event)
    events.sort(key=lambda e: int(e.metadata.resource_version))
    messages = [e.message for e in events if e.reason == "Created"]
    assert messages == [f"create a job named f-{e}!" for e in ENTRIES if e != "e2"]
