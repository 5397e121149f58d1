"""KubeStore's persistent watches: one stream per kind however often it is polled, resumed
after a network error, a 410 raised as Expired (then a fresh start), `wait` woken by
another client's write, and `close` ending them. Over `vcflow server`'s app."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.store.conftest import vcjob
from tests.store.kubeserver import KubeBackend

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.kubestore import KubeStore, Unreachable, informer
from vcflow.store import Expired, MemoryStore
from vcflow.store.base import Cursor


@pytest.fixture
def backend() -> Iterator[KubeBackend]:
    served = KubeBackend(MemoryStore(clock=FakeClock(), event_retention=20))
    with served:
        yield served


def _opened(store: KubeStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    paths: list[str] = []
    stream = store.client.stream

    def counted(path: str, **kwargs: Any) -> Any:
        paths.append(path)
        return stream(path, **kwargs)

    monkeypatch.setattr(store.client, "stream", counted)
    return paths


def _until(check: Any, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "not in time"
        time.sleep(0.01)


def test_polls_share_one_stream_per_kind(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = backend.store
    opened = _opened(store, monkeypatch)
    rv, seen = Cursor.now(store), []
    for i in range(10):
        store.create(vcjob(f"j{i}"))
        found, rv = store.poll_events(rv, (VCJob, JobFlow))
        seen += [e.name for e in found]
    assert seen == [f"j{i}" for i in range(10)]  # own writes are read back at once
    assert sorted(opened) == sorted({p for p in opened}) and len(opened) == 2


def test_another_clients_write_wakes_wait_and_arrives(backend: KubeBackend) -> None:
    store = backend.store
    rv = Cursor.now(store)
    assert store.poll_events(rv, (VCJob,)) == ([], rv)
    threading.Timer(0.2, lambda: backend.engine.create(vcjob("other"))).start()
    began = time.monotonic()
    assert store.wait(rv, 20)
    assert time.monotonic() - began < 5
    found, _ = store.poll_events(rv, (VCJob,))
    assert [e.name for e in found] == ["other"]
    assert not store.wait(Cursor(found[-1].resource_version), 0.2)  # nothing since: times out


def test_a_lagging_kind_loses_no_event_and_repeats_none(backend: KubeBackend) -> None:
    """Resume points are as far as the store has seen; a kind behind it still gets its
    events once, from where it was."""
    store = backend.store
    rv = Cursor.now(store)
    store.poll_events(rv, (VCJob, JobFlow))
    got: list[str] = []
    for i in range(5):
        backend.engine.create(vcjob(f"x{i}"))
        store.create(vcjob(f"own{i}"))
        found, rv = store.poll_events(rv, (VCJob, JobFlow))
        got += [e.name for e in found]
    end = time.monotonic() + 10
    while len(got) < 10 and time.monotonic() < end:  # (the others' writes: when they come)
        found, rv = store.poll_events(rv, (VCJob, JobFlow))
        got += [e.name for e in found]
    assert sorted(got) == sorted([f"x{i}" for i in range(5)] + [f"own{i}" for i in range(5)])


def test_a_network_error_is_retried_from_where_it_was(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = backend.store
    frames, failed = informer.frames, []

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if len(failed) < 2:
            failed.append(1)
            raise Unreachable("connection reset")
        return frames(*args, **kwargs)

    monkeypatch.setattr(informer, "frames", flaky)
    rv = Cursor.now(store)
    store.create(vcjob("a"))
    found, _ = store.poll_events(rv, (VCJob,))
    assert [e.name for e in found] == ["a"] and len(failed) == 2


def test_a_compacted_resume_is_expired_then_starts_afresh(backend: KubeBackend) -> None:
    store = backend.store
    for i in range(30):
        backend.engine.create(vcjob(f"j{i}"))
    with pytest.raises(Expired, match="too old resource version"):
        _until(lambda: bool(store.poll_events(Cursor(2), (VCJob,))[0]))
    rv = Cursor.now(store)
    store.create(vcjob("after"))
    found, _ = store.poll_events(rv, (VCJob,))
    assert [e.name for e in found] == ["after"]


def test_close_ends_the_watches(backend: KubeBackend) -> None:
    store = backend.store
    store.poll_events(Cursor.now(store), (VCJob,))
    _until(lambda: any(t.name == "watch Job" for t in threading.enumerate()))
    store.informer.stop()
    began = time.monotonic()
    assert store.wait(Cursor(), 5)  # stopped: nothing to wait for
    assert time.monotonic() - began < 1
    backend.engine.create(vcjob("late"))  # the stream's next frame ends its thread
    _until(lambda: not any(t.name == "watch Job" for t in threading.enumerate()), 15)
