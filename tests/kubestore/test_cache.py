"""KubeStore's cached reads (`cached_reads=True`, the operator's): listed once, then kept
by the informer's watch — another client's writes and deletes arrive, the store's own
writes are read back at once without a request, a write refused as stale (409) re-reads
the object, a 410 on the watch lists again. Over `vcflow server`'s app."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.store.conftest import template, vcjob
from tests.store.kubeserver import KubeBackend

from vcflow.api.clock import FakeClock
from vcflow.api.errors import AlreadyExists, Conflict, NotFound
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.kubestore import KubeClient, KubeStore, Unreachable, cache, informer
from vcflow.store import MemoryStore, wire
from vcflow.store.base import Cursor


@pytest.fixture
def backend() -> Iterator[KubeBackend]:
    served = KubeBackend(MemoryStore(clock=FakeClock(), event_retention=20))
    with served:
        yield served


@pytest.fixture
def cached(backend: KubeBackend) -> Iterator[KubeStore]:
    store = KubeStore(KubeClient.for_url(backend.served.url, timeout=10), cached_reads=True)
    with store:
        yield store


def _requests(store: KubeStore, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every request `store` sends from now on: (method, path)."""
    sent: list[tuple[str, str]] = []
    request = store.client.request

    def counted(method: str, path: str, **kwargs: Any) -> Any:
        sent.append((method, path))
        return request(method, path, **kwargs)

    monkeypatch.setattr(store.client, "request", counted)
    return sent


def _until(check: Any, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < end, "not in time"
        time.sleep(0.01)


def _names(store: KubeStore) -> list[str]:
    return [j.name for j in store.list(VCJob)]


def test_lists_once_then_reads_without_requests(
    backend: KubeBackend, cached: KubeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        backend.engine.create(vcjob(name, labels={"app": name}))
    backend.engine.create(vcjob("c", "other"))
    sent = _requests(cached, monkeypatch)
    assert _names(cached) == ["a", "b", "c"]  # waits for its initial list
    assert [m for m, _ in sent] == ["GET"]  # the list
    assert cached.get(VCJob, "default", "a").metadata.labels == {"app": "a"}
    assert [j.name for j in cached.list(VCJob, "default")] == ["a", "b"]
    assert cached.names(VCJob, "default", {"app": "b"}) == ["b"]
    assert cached.names(VCJob, "default", "app") == ["a", "b"]
    with pytest.raises(NotFound) as missing:
        cached.get(VCJob, "default", "zzz")
    assert len(sent) == 1  # every read after the list from the cache
    with pytest.raises(NotFound) as direct:
        backend.store.get(VCJob, "default", "zzz")
    assert str(missing.value) == str(direct.value)  # as the API server says it


def test_own_writes_are_read_back_at_once(
    cached: KubeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _names(cached) == []
    # the watch brings nothing more: what is read is the store's own writes only
    monkeypatch.setattr(cache.KindCache, "event", lambda self, event: None)
    sent = _requests(cached, monkeypatch)
    created = cached.create(vcjob("mine"))
    assert cached.get(VCJob, "default", "mine").metadata.uid == created.metadata.uid
    cached.create(template("t"))  # (a kind not read yet: its first read lists it)
    got = cached.get(JobTemplate, "default", "t")
    written = cached.update_status_data(
        JobTemplate, "default", "t", {"jobDependsOnList": ["x"]}, base=got
    )
    again = cached.get(JobTemplate, "default", "t")
    assert again.metadata.resource_version == written.metadata.resource_version
    assert again.status is not None and again.status.job_depends_on_list == ["x"]
    cached.delete(VCJob, "default", "mine")
    with pytest.raises(NotFound):
        cached.get(VCJob, "default", "mine")
    gets = [path for method, path in sent if method == "GET"]
    assert gets == ["/apis/flow.volcano.sh/v1alpha1/jobtemplates"]  # the template's list


def test_another_clients_writes_and_deletes_arrive(backend: KubeBackend, cached: KubeStore) -> None:
    assert _names(cached) == []
    backend.engine.create(vcjob("theirs"))
    _until(lambda: _names(cached) == ["theirs"])
    backend.engine.delete(VCJob, "default", "theirs")
    _until(lambda: _names(cached) == [])


def test_an_older_state_never_replaces_a_newer_one(cached: KubeStore) -> None:
    assert _names(cached) == []
    first = cached.create(vcjob("j"))
    newer = cached.update_status_data(VCJob, "default", "j", {"state": {"phase": "Running"}})
    rv = int(first.metadata.resource_version)
    cached.informer.put(VCJob, ("default", "j"), rv, wire.dumps(first.to_dict()))  # (late)
    assert cached.get(VCJob, "default", "j").metadata.resource_version == (
        newer.metadata.resource_version
    )
    assert cached.phase(VCJob, "default", "j") == "Running"


def test_a_stale_write_refused_rereads_the_object(
    backend: KubeBackend, cached: KubeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controllers' paths: create → 409 AlreadyExists → get (is it ours?); a status
    write with a stale resourceVersion → 409 Conflict → get → write again."""
    cached.create(template("t"))
    old = cached.get(JobTemplate, "default", "t")
    assert _names(cached) == []
    monkeypatch.setattr(cache.KindCache, "event", lambda self, event: None)  # a lagging watch
    backend.engine.create(vcjob("foreign", labels={"owner": "someone"}))
    with pytest.raises(NotFound):
        cached.get(VCJob, "default", "foreign")  # the cache has not seen it
    with pytest.raises(AlreadyExists):
        cached.create(vcjob("foreign"))
    assert cached.get(VCJob, "default", "foreign").metadata.labels == {"owner": "someone"}
    stored = backend.engine.get(JobTemplate, "default", "t")
    backend.engine.update_status_data(
        JobTemplate, "default", "t", {"jobDependsOnList": ["a"]}, base=stored
    )
    with pytest.raises(Conflict):
        cached.update_status_data(
            JobTemplate,
            "default",
            "t",
            {"jobDependsOnList": ["b"]},
            resource_version=old.metadata.resource_version,
            base=old,
        )
    fresh = cached.get(JobTemplate, "default", "t")
    assert fresh.status is not None and fresh.status.job_depends_on_list == ["a"]


def test_a_410_on_the_watch_lists_again(
    backend: KubeBackend, cached: KubeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch could not resume for a while; the server compacted past where it was
    (410): the next read lists again and the watch starts over from that list."""
    monkeypatch.setattr(informer, "STREAM_SECONDS", 1)  # (streams end, and are resumed, often)
    frames, down = informer.frames, [True]
    tries: list[int] = []

    def flaky(*args: Any, **kwargs: Any) -> Any:
        if down[0] and tries:
            tries.append(1)
            raise Unreachable("connection refused")
        tries.append(1)
        return frames(*args, **kwargs)

    monkeypatch.setattr(informer, "frames", flaky)
    backend.engine.create(vcjob("first"))  # (a list at resourceVersion 0 would watch from "now")
    assert _names(cached) == ["first"]
    _until(lambda: len(tries) >= 3)  # the first stream ended; resuming it fails
    for i in range(30):  # (the server keeps 20 events: the resume point is compacted)
        backend.engine.create(vcjob(f"j{i:02}"))
    sent = _requests(cached, monkeypatch)
    down[0] = False
    feed = cached.informer._feeds[VCJob]
    _until(lambda: feed.error is not None)
    assert _names(cached) == ["first", *(f"j{i:02}" for i in range(30))]
    assert [m for m, _ in sent] == ["GET"]  # listed again
    backend.engine.create(vcjob("later"))  # and the new watch goes on from that list
    _until(lambda: "later" in _names(cached))


def test_reads_stay_direct_without_the_option(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = backend.store
    backend.engine.create(vcjob("a"))
    sent = _requests(store, monkeypatch)
    store.get(VCJob, "default", "a")
    store.get(VCJob, "default", "a")
    assert [m for m, _ in sent] == ["GET", "GET"]


def test_polls_do_not_wait_for_own_writes_and_lose_nothing(
    backend: KubeBackend, cached: KubeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the cache answering reads, a poll hands out what has arrived instead of
    waiting for the watch to bring the store's own writes; what it has not brought yet
    comes at a later poll, and `wait` wakes for it."""
    frames, gate = informer.frames, threading.Event()
    gate.set()

    def held(*args: Any, **kwargs: Any) -> Any:
        for frame in frames(*args, **kwargs):
            gate.wait(30)
            yield frame

    monkeypatch.setattr(informer, "frames", held)
    assert _names(cached) == []
    rv = Cursor.now(cached)
    _, rv = cached.poll_events(rv, (VCJob,))
    gate.clear()  # the watch brings nothing for now
    backend.engine.create(vcjob("theirs"))
    cached.create(vcjob("mine"))
    began = time.monotonic()
    found, resume = cached.poll_events(rv, (VCJob,))
    assert found == [] and time.monotonic() - began < 1  # not waited for
    assert _names(cached) == ["mine"]  # (its own write, from the cache)
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(cached.wait(resume, 20)))
    waiter.start()
    began = time.monotonic()
    gate.set()
    waiter.join(25)
    assert woke == [True] and time.monotonic() - began < 5
    _until(lambda: len(cached.informer._feeds[VCJob].events) == 2)
    found, _ = cached.poll_events(resume, (VCJob,))
    assert [e.name for e in found] == ["theirs", "mine"]
