"""KubeStore's cursors: a kind whose watch stream lags another's is read from its own
position, held in the caller's `Cursor` — however many polls, by however many watchers,
pass meanwhile (a table of resume points kept by the informer forgot them past its size).
Over `vcflow server`'s app."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.store.conftest import flow, vcjob
from tests.store.kubeserver import KubeBackend

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.kubestore import KubeStore, informer
from vcflow.server import watching
from vcflow.store import Cursor, MemoryStore

WATCHERS = 70  # more than the 64 resume points the informer used to keep
KINDS = (VCJob, JobFlow)


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[KubeBackend]:
    monkeypatch.setattr(watching, "POLL", 0.005)  # (the server's streams: at once)
    served = KubeBackend(MemoryStore(clock=FakeClock()))
    with served:
        yield served


def _until(check: Callable[[], bool], seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "not in time"
        time.sleep(0.01)


def _hold_flows(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The JobFlow stream brings nothing until the returned gate is set."""
    frames, gate = informer.frames, threading.Event()

    def held(client: Any, kind: Any, *args: Any, **kwargs: Any) -> Any:
        for frame in frames(client, kind, *args, **kwargs):
            if kind.info.model is JobFlow:
                gate.wait(60)
            yield frame

    monkeypatch.setattr(informer, "frames", held)
    return gate


def _vcjob_seen(store: KubeStore, rv: int) -> Callable[[], bool]:
    return lambda: store.informer.position(VCJob) >= rv


def test_a_lagging_kind_over_many_polls_loses_no_event_and_repeats_none(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = backend.store
    gate = _hold_flows(monkeypatch)
    start = Cursor.now(store)
    store.poll_events(start, KINDS)  # (the watches start)
    for i in range(3):  # written before any watcher has read them, held on their stream
        backend.engine.create(flow(f"f{i}", "a"))
    cursors = [start] * WATCHERS
    got: list[Counter[str]] = [Counter() for _ in range(WATCHERS)]

    def poll(w: int) -> None:
        found, cursors[w] = store.poll_events(cursors[w], KINDS)
        got[w].update(e.name for e in found)

    for round in range(2):
        for w in range(WATCHERS):  # each poll after another client's write: a new rv
            job = backend.engine.create(vcjob(f"x{round}-{w}"))
            _until(_vcjob_seen(store, int(job.metadata.resource_version or 0)))
            poll(w)
    assert all(store.informer.position(JobFlow) < c.rv for c in cursors)  # (it lags)
    assert not any(n.startswith("f") for g in got for n in g)
    gate.set()
    wanted = Counter(
        [f"f{i}" for i in range(3)] + [f"x{r}-{w}" for r in range(2) for w in range(WATCHERS)]
    )

    def all_in() -> bool:
        for w in range(WATCHERS):
            poll(w)
        return all(sum(g.values()) >= sum(wanted.values()) for g in got)

    _until(all_in)
    for w in range(WATCHERS):
        poll(w)  # nothing again
    assert all(g == wanted for g in got)


def test_wait_wakes_for_the_lagging_kind(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cursor holding a kind behind is woken by that kind's events, not by what it has
    read already."""
    store = backend.store
    gate = _hold_flows(monkeypatch)
    cursor = Cursor.now(store)
    store.poll_events(cursor, KINDS)  # (the watches start)
    backend.engine.create(flow("f", "a"))
    job = backend.engine.create(vcjob("x"))
    _until(_vcjob_seen(store, int(job.metadata.resource_version or 0)))
    found, cursor = store.poll_events(cursor, KINDS)
    assert [e.name for e in found] == ["x"] and cursor.position(JobFlow) < cursor.rv
    assert not store.wait(cursor, 0.2)  # the vcjob's event is read: nothing new
    threading.Timer(0.2, gate.set).start()
    began = time.monotonic()
    assert store.wait(cursor, 20)
    assert time.monotonic() - began < 5
    found, cursor = store.poll_events(cursor, KINDS)
    assert [e.name for e in found] == ["f"] and cursor.behind == ()
