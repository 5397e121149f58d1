"""KubeClient's client-side rate limit: a token bucket of `burst` tokens refilled at `qps`
a second, taken by every request and by a stream's opening, never by what an open stream
(a watch) reads."""

from __future__ import annotations

import threading

import pytest
from tests.store.conftest import vcjob
from tests.store.kubeserver import KubeBackend

from vcflow.api.clock import FakeClock
from vcflow.api.vcjob import VCJob
from vcflow.kubestore import KubeClient, watching
from vcflow.kubestore.ratelimit import DEFAULT_BURST, DEFAULT_QPS, TokenBucket
from vcflow.store import MemoryStore


class _Time:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_burst_goes_at_once_then_qps_a_second() -> None:
    time = _Time()
    bucket = TokenBucket(10, 3, clock=lambda: time.now, sleep=time.sleep)
    waits = [bucket.take() for _ in range(6)]
    assert waits[:3] == [0, 0, 0]
    assert waits[3:] == pytest.approx([0.1, 0.1, 0.1])
    time.now += 10  # idle: the bucket refills up to its burst, no further
    assert [bucket.take() for _ in range(3)] == [0, 0, 0]
    assert bucket.take() == pytest.approx(0.1)


def test_no_limit_when_qps_is_not_positive() -> None:
    time = _Time()
    bucket = TokenBucket(0, 0, clock=lambda: time.now, sleep=time.sleep)
    assert [bucket.take() for _ in range(1000)] == [0] * 1000 and not time.slept


def test_a_qps_limit_needs_a_burst() -> None:
    with pytest.raises(ValueError, match="burst must be at least 1"):
        TokenBucket(5, 0)


def test_the_default_is_fifty_a_second_after_a_hundred() -> None:
    client = KubeClient.for_url("http://127.0.0.1:1")
    assert (client.limiter.qps, client.limiter.burst) == (DEFAULT_QPS, DEFAULT_BURST) == (50, 100)
    tuned = KubeClient.for_url("http://127.0.0.1:1", qps=7.5, burst=3)
    assert (tuned.limiter.qps, tuned.limiter.burst) == (7.5, 3)


def test_requests_take_tokens_and_an_open_watch_takes_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = KubeBackend(MemoryStore(clock=FakeClock()))
    with backend as store:
        taken: list[int] = []
        take = store.client.limiter.take
        monkeypatch.setattr(store.client.limiter, "take", lambda: taken.append(1) or take())
        for i in range(3):
            store.create(vcjob(f"j{i}"))
        assert len(taken) == 3
        taken.clear()
        seen: list[str] = []

        def watch() -> None:
            for event in watching.follow(store.client, store.calls.watched([VCJob]), None, 0, 10):
                seen.append(event.name)
                if len(seen) == 6:
                    return

        thread = threading.Thread(target=watch)
        thread.start()
        for i in range(3, 6):  # written beside the client: they take none of its tokens
            backend.engine.create(vcjob(f"j{i}"))
        thread.join(20)
        assert seen == [f"j{i}" for i in range(6)]
        assert len(taken) == 1, taken  # the watch's opening; its events took none
