"""Watch streams of the Kubernetes API as the store's WatchEvents: one stream per kind
(`?watch=true&resourceVersion=N&allowWatchBookmarks=true`), merged. Used by `feed`;
`frames` (one stream's events and bookmarks) also by `informer`, the persistent watches.

- `catch_up`: the events after a resourceVersion up to the server's current one (reads
  from before the persistent watches began), without blocking for long: each kind's
  stream is read (all at once, on threads) until it shows an event or a BOOKMARK at or
  past that resourceVersion, ends, or stays silent for `idle` seconds — the Kubernetes API
  has no "events so far" call, and kube-apiserver sends bookmarks only now and then, so a
  silent stream is taken as caught up.
- `follow`: the events as they come, a stream reopened from its last resourceVersion when
  the server ends it; ends after `timeout` seconds without one.
A resourceVersion the server no longer keeps (HTTP 410, or a watch's ERROR event with a
410 Status) raises Expired: list again, then watch from the list's resourceVersion.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from vcflow.kubeapi import resources, watchframes
from vcflow.kubestore import status as statuses
from vcflow.kubestore.client import KubeClient
from vcflow.store import wire
from vcflow.store.base import EventType, KindInfo, WatchEvent

#: seconds the server keeps one watch open before we reopen it
STREAM_SECONDS = 60
#: seconds a followed stream may stay silent before it is reopened (the server ends it
#: after STREAM_SECONDS, and sends bookmarks meanwhile)
READ_TIMEOUT = STREAM_SECONDS + 10.0


@dataclass(frozen=True)
class Watched:
    """One kind to watch: its store kind, its API resource and what turns the objects the
    server sends into the kind's wire form (None: they are)."""

    info: KindInfo
    resource: resources.APIResource
    convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def _query(since_rv: int, seconds: int) -> list[tuple[str, str]]:
    return [
        ("watch", "true"),
        ("resourceVersion", str(since_rv)),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", str(max(1, seconds))),
    ]


def frames(
    client: KubeClient,
    kind: Watched,
    namespace: str | None,
    since_rv: int,
    *,
    seconds: int,
    read_timeout: float,
) -> Iterator[tuple[str, int, WatchEvent | None]]:
    """(type, resourceVersion, event or None for a bookmark) of one watch stream."""
    path = kind.resource.path(namespace)
    query = _query(since_rv, seconds)
    with client.stream(path, query=query, timeout=read_timeout) as (head, lines):
        if not head.ok:
            raise statuses.error_for(head, kind=kind.info.kind)
        for line in lines:
            frame = watchframes.decode(line)
            if frame is None:
                continue
            rv = frame.resource_version
            if frame.type == "BOOKMARK":
                yield "BOOKMARK", rv, None
                continue
            obj = frame.object
            meta = obj.get("metadata") or {}
            if kind.convert is not None:
                obj = kind.convert(obj)
            obj.setdefault("apiVersion", kind.info.api_version)
            obj.setdefault("kind", kind.info.kind)
            event = WatchEvent(
                EventType(frame.type),
                kind.info.model,
                str(meta.get("namespace") or ""),
                str(meta.get("name") or ""),
                rv,
                wire.dumps(obj),
            )
            yield frame.type, rv, event


def catch_up(
    client: KubeClient,
    kinds: Sequence[Watched],
    namespace: str | None,
    since_rv: int,
    latest: int,
    *,
    idle: float,
) -> list[WatchEvent]:
    """The events of `kinds` after `since_rv`, up to `latest` (at least), by resourceVersion."""
    found: list[list[WatchEvent]] = [[] for _ in kinds]
    errors: list[BaseException] = []

    def read(index: int) -> None:
        try:
            for _, rv, event in frames(
                client, kinds[index], namespace, since_rv, seconds=1, read_timeout=idle
            ):
                if event is not None:
                    found[index].append(event)
                if rv >= latest:
                    return
        except TimeoutError:
            return  # silent for `idle`: taken as caught up (see the module docstring)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(len(kinds))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    merged = [event for events in found for event in events]
    merged.sort(key=lambda e: e.resource_version)
    return merged


def follow(
    client: KubeClient,
    kinds: Sequence[Watched],
    namespace: str | None,
    since_rv: int,
    timeout: float | None,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[WatchEvent]:
    """Events of `kinds` after `since_rv` as they come; ends after `timeout` seconds without
    one (None: never). One thread per kind feeds a queue; each reopens its stream from
    its last resourceVersion when the server ends it."""
    feed: queue.Queue[WatchEvent | BaseException] = queue.Queue()
    done = threading.Event()

    def pump(kind: Watched) -> None:
        rv = since_rv
        try:
            while not done.is_set():
                try:
                    for _, frame_rv, event in frames(
                        client,
                        kind,
                        namespace,
                        rv,
                        seconds=STREAM_SECONDS,
                        read_timeout=READ_TIMEOUT,
                    ):
                        rv = max(rv, frame_rv)
                        if event is not None:
                            feed.put(event)
                        if done.is_set():
                            return
                except TimeoutError:
                    continue  # a silent stream: reopened from where it was
        except BaseException as exc:
            feed.put(exc)

    threads = [threading.Thread(target=pump, args=(k,), daemon=True) for k in kinds]
    for thread in threads:
        thread.start()
    try:
        while True:
            wait = 0.2 if timeout is None else min(0.2, timeout)
            deadline = None if timeout is None else time.monotonic() + timeout
            item: WatchEvent | BaseException | None = None
            while item is None:
                if stop():
                    return
                try:
                    item = feed.get(timeout=wait)
                except queue.Empty:
                    if deadline is not None and time.monotonic() >= deadline:
                        return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        done.set()
