"""Events sent in the background (`KubeStore(async_events=True)`, the operator's): in the
order recorded, a full queue drops and counts (and says so), `close` sends what is queued
within its deadline; through KubeStore, a create returns before the POST."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.store.conftest import vcjob
from tests.store.kubeserver import KubeBackend

from vcflow.api.clock import FakeClock
from vcflow.api.errors import StoreError
from vcflow.api.event import Event
from vcflow.api.meta import ObjectMeta
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.kubestore.eventsender import EventSender
from vcflow.kubestore.ratelimit import DEFAULT_BURST, DEFAULT_QPS, TokenBucket
from vcflow.store import MemoryStore
from vcflow.store.events import Recorder


def _event(i: int) -> Event:
    return Event(metadata=ObjectMeta(name=f"e{i}", namespace="default"), reason=f"R{i}")


def _until(check: Any, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "not in time"
        time.sleep(0.01)


def test_events_are_sent_in_the_order_recorded() -> None:
    sent: list[str] = []
    sender = EventSender(lambda e: sent.append(e.reason))
    for i in range(200):
        assert sender.submit(_event(i))
    sender.close()
    assert sent == [f"R{i}" for i in range(200)]
    assert (sender.sent, sender.dropped, sender.failed) == (200, 0, 0)


def test_a_full_queue_drops_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    gate, sent = threading.Event(), []

    def slow(event: Event) -> None:
        gate.wait(10)
        sent.append(event.reason)

    sender = EventSender(slow, size=3)
    assert sender.submit(_event(0))
    _until(lambda: sender.pending() == 1 and not sender._queue)  # taken, being sent
    with caplog.at_level(logging.WARNING, logger="vcflow.kubestore.events"):
        results = [sender.submit(_event(i)) for i in range(1, 7)]
    assert results == [True, True, True, False, False, False]
    assert sender.dropped == 3
    assert "the event queue is full: 1 event(s) dropped so far" in caplog.text
    gate.set()
    sender.close()
    assert sent == ["R0", "R1", "R2", "R3"] and sender.dropped == 3


def test_close_sends_what_is_queued_within_its_deadline() -> None:
    sent: list[str] = []

    def slow(event: Event) -> None:
        time.sleep(0.05)
        sent.append(event.reason)

    sender = EventSender(slow)
    for i in range(10):
        sender.submit(_event(i))
    began = time.monotonic()
    sender.close(deadline=10)
    assert sent == [f"R{i}" for i in range(10)] and time.monotonic() - began < 5
    assert not sender.submit(_event(99)) and sender.dropped == 1  # closed

    stuck = EventSender(lambda e: time.sleep(0.5))
    for i in range(10):
        stuck.submit(_event(i))
    began = time.monotonic()
    stuck.close(deadline=0.2)
    assert time.monotonic() - began < 2
    assert stuck.dropped >= 8 and stuck.sent + stuck.dropped + stuck.pending() <= 10


def test_close_sends_a_rate_limited_backlog(caplog: pytest.LogCaptureFixture) -> None:
    """At the operator's default client rate limit, its burst spent by the burst that
    queued them, Events left at SIGTERM go at QPS 50: a backlog of 300 takes 6 s, past the
    5 s `close` gave them before (issue 25: 170 of a backlog dropped). All are sent."""
    bucket = TokenBucket(DEFAULT_QPS, DEFAULT_BURST)
    for _ in range(DEFAULT_BURST):
        bucket.take()
    sent: list[str] = []

    def limited(event: Event) -> None:
        bucket.take()
        sent.append(event.reason)

    sender = EventSender(limited)
    for i in range(300):
        assert sender.submit(_event(i))
    with caplog.at_level(logging.INFO, logger="vcflow.kubestore.events"):
        sender.close()
    assert (sender.sent, sender.dropped) == (300, 0)
    assert re.search(r"events: sending the \d+ queued event\(s\) \(up to 25s\)", caplog.text)
    assert re.search(r"events: the \d+ queued event\(s\) were sent in ", caplog.text)


def test_a_refused_event_is_logged_and_the_next_sent(caplog: pytest.LogCaptureFixture) -> None:
    sent: list[str] = []

    def refuse_first(event: Event) -> None:
        if event.reason == "R0":
            raise StoreError("Error from server (Forbidden): no")
        sent.append(event.reason)

    sender = EventSender(refuse_first)
    with caplog.at_level(logging.WARNING, logger="vcflow.kubestore.events"):
        sender.submit(_event(0))
        sender.submit(_event(1))
        sender.close()
    assert sent == ["R1"] and sender.failed == 1
    assert "Normal R0 of  not sent: Error from server (Forbidden): no" in caplog.text


@pytest.fixture
def backend() -> Iterator[KubeBackend]:
    served = KubeBackend(MemoryStore(clock=FakeClock()))
    with served:
        yield served


def test_kubestore_returns_before_the_post_and_close_flushes(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = KubeStore(KubeClient.for_url(backend.served.url, timeout=10), async_events=True)
    job = store.create(vcjob("j"))
    gate = threading.Event()
    events_client = store._event_client
    assert events_client is not None
    request = events_client.request

    def held(method: str, path: str, **kwargs: Any) -> Any:
        if "/events" in path:
            gate.wait(10)
        return request(method, path, **kwargs)

    monkeypatch.setattr(events_client, "request", held)
    recorder = Recorder(store, FakeClock())
    began = time.monotonic()
    for i in range(5):
        recorder.record(job, "Normal", "Created", f"create {i}")
    assert time.monotonic() - began < 1  # none waited for its POST
    assert backend.engine.list(Event) == []
    gate.set()
    store.close()
    messages = [e.message for e in backend.engine.list(Event)]
    assert sorted(messages) == [f"create {i}" for i in range(5)]


def test_events_go_through_a_client_with_a_rate_limit_of_their_own(backend: KubeBackend) -> None:
    """As kube-scheduler's: the Events of a burst do not take the controllers' tokens. The
    same server, user, qps and burst."""
    client = KubeClient.for_url(backend.served.url, timeout=10, qps=7, burst=3)
    store = KubeStore(client, async_events=True)
    events = store._event_client
    assert events is not None and events is not client
    assert events.limiter is not client.limiter
    assert (events.limiter.qps, events.limiter.burst) == (7, 3)
    assert events.url == client.url
    job = store.create(vcjob("j"))
    Recorder(store, FakeClock()).record(job, "Normal", "Created", "through its own client")
    store.close()
    assert [e.message for e in backend.engine.list(Event)] == ["through its own client"]
