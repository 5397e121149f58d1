"""Persistent watches, as client-go's informers keep them: one watch stream per kind, in a
background thread, started the first time a kind is asked for and resumed from the last
resourceVersion it saw (bookmarks included) whenever the server ends it; a network error
is retried with backoff. What arrives is kept, so `KubeStore.events_since` answers from
memory and `wait` blocks on a condition instead of opening streams at every poll. Used
by `calls` and `feed`; stopped by `KubeStore.close()`.

- A 410 (the resourceVersion is compacted) is raised as `Expired` by the next read, and
  every watch is dropped: the caller lists again and the watches start over from there.
- A kind's events are complete up to its stream's resourceVersion, which is all a stream
  says: the `base.Cursor` a `poll` hands out is as far as the store has seen (other kinds
  included) but for each kind it polled whose stream is behind that, which it holds at
  its own position; so a kind whose stream lags another's loses no event and repeats
  none, and the informer keeps nothing per watcher.
- Read-your-writes: a read waits (a little) until each kind's stream has passed the
  store's own last write of it (`written`) and brought the DELETED event of each of its
  deletes the server answered with a Status, which has no resourceVersion (`deleting`:
  kube-apiserver's answer for a custom resource); a poll without `own_writes` (the store
  reads from the cache) does not.
- With cached reads (`read`), a kind's objects are also kept (`cache.KindCache`): listed
  once, then each event applied as it arrives, under the lock the events are kept under,
  so the cache is never behind the events a watcher has been handed. Dropping the watches
  (410, close) drops the caches too: the next read lists again.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from vcflow.api.errors import StoreError
from vcflow.api.meta import Resource
from vcflow.kubestore.cache import Key, KindCache
from vcflow.kubestore.client import KubeClient, Unreachable
from vcflow.kubestore.watching import READ_TIMEOUT, STREAM_SECONDS, Watched, frames
from vcflow.store.base import Cursor, EventType, Expired, WatchEvent

#: seconds a read waits for the streams to bring the store's own writes
OWN_WRITES_WAIT = 10.0
#: bytes of events kept per kind; past it the older half is dropped (reads from before
#: it open a stream of their own, as without a watch)
KEPT_BYTES = 64 * 1024 * 1024
#: seconds between two tries of a stream that could not connect (doubling up to the last)
BACKOFF = (0.1, 5.0)

Positions = dict[type[Resource], int]
#: a kind's objects and the resourceVersion of their list (`read`'s `lister`)
Listed = tuple[list[tuple[Key, int, str]], int]
#: tries of a cache's initial list (one whose watch cannot start from it is listed again)
LIST_TRIES = 3
T = TypeVar("T")


@dataclass
class _Feed:
    """One kind's watch: its events (in stream order, so by resourceVersion), how far the
    stream is complete (`progress`), what was dropped (`floor`: events after it are all
    here) and the error that ended it."""

    kind: Watched
    floor: int
    progress: int
    events: list[WatchEvent] = field(default_factory=list)
    rvs: list[int] = field(default_factory=list)
    size: int = 0
    error: BaseException | None = None

    def after(self, rv: int) -> list[WatchEvent]:
        """The events after `rv`, each a new WatchEvent (parsed anew when read: one reader
        cannot change what the next one sees)."""
        return [
            WatchEvent(e.type, e.model, e.namespace, e.name, e.resource_version, e.raw)
            for e in self.events[bisect.bisect_right(self.rvs, rv) :]
        ]

    def add(self, event: WatchEvent) -> None:
        self.events.append(event)
        self.rvs.append(event.resource_version)
        self.size += len(event.raw)
        if self.size > KEPT_BYTES and len(self.events) > 1:
            half = len(self.events) // 2
            self.floor = self.rvs[half - 1]
            self.size -= sum(len(e.raw) for e in self.events[:half])
            del self.events[:half], self.rvs[:half]


class Informer:
    """The persistent watches of one KubeStore (see the module docstring)."""

    def __init__(self, client: KubeClient, namespace: str | None = None) -> None:
        self.client = client
        self.namespace = namespace
        self.written: Positions = {}  # the resourceVersion of the store's last write, by kind
        #: by kind, the objects (key → uid) this store deleted, answered by a Status, whose
        #: DELETED event has not arrived yet: what a read waits for besides `written`
        self.deleting: dict[type[Resource], dict[Key, str]] = {}
        self._feeds: dict[type[Resource], _Feed] = {}
        self._changed = threading.Condition()
        self._generation = 0  # bumped when every watch is dropped (410, close)
        self._stopped = False
        self._caches: dict[type[Resource], KindCache] = {}
        self._listing = threading.Lock()  # one initial list at a time

    # --- reads ------------------------------------------------------------------------

    def events(
        self,
        kinds: Sequence[Watched],
        since_rv: int,
        namespace: str | None,
        *,
        latest: int = 0,
        idle: float = 0.0,
    ) -> list[WatchEvent] | None:
        """The events of `kinds` after `since_rv`, by resourceVersion; None when some kind's
        watch does not reach back that far (the caller reads them otherwise). With
        `latest` (the server's resourceVersion), first waits up to `idle` seconds for every
        kind's stream to pass it: a quiet kind's stream says nothing until a bookmark."""
        with self._changed:
            feeds = self._ready(kinds, Cursor(since_rv))
            if feeds is None:
                return None
            if latest:
                self._changed.wait_for(
                    lambda: all(f.error is not None or f.progress >= latest for f in feeds), idle
                )
                self._raise(feeds)
            found = [e for feed in feeds for e in feed.after(since_rv)]
        return _sorted(found, namespace)

    def poll(
        self, kinds: Sequence[Watched], cursor: Cursor, *, own_writes: bool = True
    ) -> tuple[list[WatchEvent], Cursor] | None:
        """`Store.poll_events`: the events of `kinds` after `cursor` (each kind after its own
        position) and the next cursor; None when some kind's watch does not reach back
        that far. Not `own_writes`: what has arrived, without waiting for the store's own
        writes (the cache has them; their events come at a later poll)."""
        with self._changed:
            feeds = self._ready(kinds, cursor, own_writes=own_writes)
            if feeds is None:
                return None
            found: list[WatchEvent] = []
            positions: Positions = {}
            for feed in feeds:
                start = cursor.position(feed.kind.info.model)
                found.extend(feed.after(start))
                positions[feed.kind.info.model] = max(start, feed.progress)
            # as far as this store has seen (other kinds too: their events are not read
            # again); a polled kind whose stream is behind that keeps its own position
            seen = [f.progress for f in self._feeds.values()]
            rv = max([cursor.rv, *positions.values(), *seen, *self.written.values()])
        return _sorted(found, None), Cursor.per_kind(rv, positions)

    def wait(self, kinds: Sequence[Watched], cursor: Cursor, timeout: float) -> bool:
        """True once an event arrived on any watch (the kinds read so far; `kinds` when none
        is) after `cursor`'s position for its kind, or the store wrote after `cursor`;
        False after `timeout`."""
        with self._changed:
            if max(self.written.values(), default=0) > cursor.rv:
                return True
            if not self._feeds:
                self._start(kinds, cursor)

            def arrived() -> bool:
                return self._stopped or any(
                    f.error is not None
                    or bool(f.rvs and f.rvs[-1] > cursor.position(f.kind.info.model))
                    for f in self._feeds.values()
                )

            return self._changed.wait_for(arrived, timeout)

    def wrote(self, model: type[Resource], rv: int) -> None:
        with self._changed:
            self.written[model] = max(self.written.get(model, 0), rv)

    def position(self, model: type[Resource]) -> int:
        """How far the kind's watch has come (0: none runs): taken before a delete, for
        `deleted`."""
        with self._changed:
            feed = self._feeds.get(model)
            return feed.progress if feed is not None else 0

    def deleted(self, model: type[Resource], key: Key, uid: str, since: int) -> None:
        """This store deleted the object `key` (of `uid`; any, if "") and the server answered
        with a Status, no resourceVersion: reads wait for its DELETED event as they wait
        for a write's resourceVersion — unless the kind has no watch running, or the event
        came already (after `since`, the kind's `position` before the delete)."""
        with self._changed:
            feed = self._feeds.get(model)
            if feed is None or feed.error is not None:
                return
            start = bisect.bisect_right(feed.rvs, since)
            if any(_deletes(e, key, uid) for e in feed.events[start:]):
                return
            self.deleting.setdefault(model, {})[key] = uid

    # --- the cache ----------------------------------------------------------------------

    def read(self, kind: Watched, lister: Callable[[], Listed], fn: Callable[[KindCache], T]) -> T:
        """`fn` of `kind`'s cache, under the lock; the cache is first listed (`lister`, a
        direct list) if it is not yet, and its watch started from that list (a 410 on it:
        listed again). A watch ended by another error raises it."""
        model = kind.info.model
        with self._changed:
            cache = self._synced(model)
            if cache is not None:
                return fn(cache)
        with self._listing:
            for _ in range(LIST_TRIES):
                with self._changed:
                    cache = self._synced(model)
                    if cache is not None:
                        return fn(cache)
                    generation = self._generation
                items, rv = lister()
                with self._changed:
                    if generation != self._generation or self._stopped:
                        continue
                    cache = KindCache(rv, items)
                    feed = self._feeds.get(model)
                    if feed is not None and feed.error is not None:
                        if not isinstance(feed.error, Expired):
                            raise feed.error
                        self._drop()  # (410: every watch starts over, this one from the list)
                        feed = None
                    if feed is None:
                        self._start([kind], Cursor(rv))
                    elif feed.floor > rv:
                        continue  # events between the list and the watch are missing
                    else:
                        for event in feed.after(rv):
                            cache.event(event)
                    self._caches[model] = cache
                    if self.written.get(model, 0) > rv:  # (written while it was listed)
                        self._changed.wait_for(
                            lambda: (
                                self._stopped or self._caught_up(model, self.written.get(model, 0))
                            ),
                            OWN_WRITES_WAIT,
                        )
                    return fn(cache)
        raise StoreError(f"listing {kind.info.kind}: its watch could not start from the list")

    def _synced(self, model: type[Resource]) -> KindCache | None:
        """The kind's cache if it is listed and its watch goes on; a 410 drops every watch
        (None: list again); another error that ended the watch is raised. Holds the lock."""
        cache, feed = self._caches.get(model), self._feeds.get(model)
        if cache is None or feed is None:
            return None
        if feed.error is None:
            return cache
        if isinstance(feed.error, Expired):
            self._drop()
            return None
        raise feed.error

    def _caught_up(self, model: type[Resource], rv: int) -> bool:
        feed = self._feeds.get(model)
        return feed is None or feed.error is not None or feed.progress >= rv

    def put(self, model: type[Resource], key: Key, rv: int, data: str) -> None:
        """The answer to this store's own write, into the kind's cache (if it has one)."""
        with self._changed:
            cache = self._caches.get(model)
            if cache is not None and rv > cache.listed:
                cache.put(key, rv, data)

    def remove(self, model: type[Resource], key: Key, rv: int) -> None:
        """This store deleted the object: out of the kind's cache (if it has one)."""
        with self._changed:
            cache = self._caches.get(model)
            if cache is not None:
                cache.remove(key, rv)

    def removed(self, model: type[Resource], key: Key, uid: str) -> None:
        """This store deleted the object, answered by a Status (no resourceVersion): out of
        the kind's cache (if it has one), by uid (`KindCache.removed`)."""
        with self._changed:
            cache = self._caches.get(model)
            if cache is not None:
                cache.removed(key, uid)

    def _ready(
        self, kinds: Sequence[Watched], cursor: Cursor, *, own_writes: bool = True
    ) -> list[_Feed] | None:
        """The feeds of `kinds` (started from `cursor` if new), once each has passed the
        store's own last write of its kind; None if one starts after `cursor`'s position
        for its kind. Raises the error that ended a watch (Expired: every watch is
        dropped). Holds the lock."""
        self._start(kinds, cursor)
        feeds = [self._feeds[k.info.model] for k in kinds]

        def caught_up() -> bool:
            return all(
                f.error is not None
                or (
                    f.progress >= self.written.get(f.kind.info.model, 0)
                    and not self.deleting.get(f.kind.info.model)
                )
                for f in feeds
            )

        if own_writes:
            self._changed.wait_for(caught_up, OWN_WRITES_WAIT)
        if any(cursor.position(f.kind.info.model) < f.floor for f in feeds):
            return None  # (checked after the wait: the events kept may be cut meanwhile)
        self._raise(feeds)
        return feeds

    def _raise(self, feeds: Sequence[_Feed]) -> None:
        """The error that ended a watch (Expired: every watch is dropped). Holds the lock."""
        for feed in feeds:
            if feed.error is not None:
                error = feed.error
                if isinstance(error, Expired):
                    self._drop()
                raise error

    # --- the watches ------------------------------------------------------------------

    def _start(self, kinds: Iterable[Watched], cursor: Cursor) -> None:
        """A watch of each kind of `kinds` that has none, from `cursor`'s position for it."""
        for kind in kinds:
            if kind.info.model in self._feeds or self._stopped:
                continue
            at = cursor.position(kind.info.model)
            feed = _Feed(kind, floor=at, progress=at)
            self._feeds[kind.info.model] = feed
            thread = threading.Thread(
                target=self._pump,
                args=(feed, self._generation),
                name=f"watch {kind.info.kind}",
                daemon=True,
            )
            thread.start()

    def _live(self, generation: int) -> bool:
        return not self._stopped and generation == self._generation

    def _pump(self, feed: _Feed, generation: int) -> None:
        """Watch `feed`'s kind until stopped, resuming from its progress."""
        backoff = BACKOFF[0]
        while self._live(generation):
            try:
                for _, rv, event in frames(
                    self.client,
                    feed.kind,
                    self.namespace,
                    feed.progress,
                    seconds=STREAM_SECONDS,
                    read_timeout=READ_TIMEOUT,
                ):
                    with self._changed:
                        if not self._live(generation):
                            return
                        if event is not None:
                            feed.add(event)
                            cache = self._caches.get(feed.kind.info.model)
                            if cache is not None:
                                cache.event(event)
                            self._delete_seen(feed.kind.info.model, event)
                        feed.progress = max(feed.progress, rv)
                        self._changed.notify_all()
                    backoff = BACKOFF[0]
            except TimeoutError:
                continue  # silent for READ_TIMEOUT: reopened from where it was
            except Unreachable:
                with self._changed:
                    self._changed.wait_for(lambda: not self._live(generation), backoff)
                backoff = min(BACKOFF[1], backoff * 2)
            except BaseException as exc:  # (410 Expired, 401, 403...: the reader sees it)
                with self._changed:
                    if self._live(generation):
                        feed.error = exc
                    self._changed.notify_all()
                return

    def _delete_seen(self, model: type[Resource], event: WatchEvent) -> None:
        """A DELETED event a read may be waiting for (`deleting`). Holds the lock."""
        pending = self.deleting.get(model)
        if not pending or event.type is not EventType.DELETED:
            return
        key = (event.namespace, event.name)
        if key in pending and _deletes(event, key, pending[key]):
            del pending[key]

    def _drop(self) -> None:
        """Forget every watch (their threads end at their next frame). Holds the lock."""
        self._generation += 1
        self._feeds.clear()
        self.deleting.clear()  # (the watches that would bring their events are gone)
        self._caches.clear()
        self._changed.notify_all()

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._drop()


def _deletes(event: WatchEvent, key: Key, uid: str) -> bool:
    """`event` is the DELETED event of the object `key` of `uid` (any, if "")."""
    if event.type is not EventType.DELETED or (event.namespace, event.name) != key:
        return False
    if not uid:
        return True
    meta = json.loads(event.raw).get("metadata") or {}
    return bool(meta.get("uid") == uid)


def _sorted(found: list[WatchEvent], namespace: str | None) -> list[WatchEvent]:
    if namespace is not None:
        found = [e for e in found if e.namespace == namespace]
    found.sort(key=lambda e: e.resource_version)
    return found
