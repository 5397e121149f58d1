"""Watch streams as the Kubernetes API sends them: newline-delimited JSON events
`{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}` of one resource, from a
resourceVersion (unset or "0", or `sendInitialEvents=true`: every current object as ADDED
first, the latter closed by kube's `initial-events-end` BOOKMARK), filtered by the list's
selectors as kube's watch cache filters them (an object that stops matching is DELETED,
one that starts to match ADDED), with BOOKMARKs when asked (one as soon as the stream has
caught up with the store, then one every BOOKMARK_EVERY seconds of quiet), until
`timeoutSeconds`, the client leaves or the server stops. A resourceVersion the store's
event log no longer reaches is answered, as kube-apiserver does, with one ERROR event
carrying a 410 Expired Status, then the end; one the store has not reached yet is waited
for (`wait_fresh`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool

from vcflow.api.meta import Resource
from vcflow.kubeapi import status as kubestatus
from vcflow.kubeapi import watchframes
from vcflow.kubeapi.resources import APIResource
from vcflow.server.listing import snapshot
from vcflow.server.requests import ListOptions
from vcflow.server.status import ApiError
from vcflow.store.base import Cursor, EventType, Expired, Store, WatchEvent

POLL = 0.1  # seconds between two looks at the store when nothing came
PAGE = 1_000  # events read from the store at once
BOOKMARK_EVERY = 5.0  # seconds between two bookmarks of a quiet stream
FRESH_WAIT = 3.0  # seconds a watch from a resourceVersion ahead of the store waits (kube's)

Convert = Callable[[dict[str, Any]], dict[str, Any]]
Key = tuple[str, str]


def start_version(options: ListOptions) -> int | None:
    """The resourceVersion to watch after (None: list first); 400 if not a number."""
    text = options.resource_version
    if text in ("", "0"):
        return None
    if not text.isdigit() or len(text) > 19:
        raise ApiError(400, f"resourceVersion: {text!r} is not a resource version")
    return int(text)


async def wait_fresh(store: Store, options: ListOptions) -> None:
    """Wait until the store reaches the watch's resourceVersion, as kube-apiserver does;
    after FRESH_WAIT seconds its answer: 504 Timeout, "Too large resource version"."""
    given = start_version(options)
    if given is None:
        return
    end = time.monotonic() + FRESH_WAIT
    while (current := await run_in_threadpool(store.resource_version)) < given:
        if time.monotonic() >= end:
            raise ApiError(
                504,
                f"Too large resource version: {given}, current: {current}",
                reason="Timeout",
                details={
                    "causes": [
                        {
                            "reason": "ResourceVersionTooLarge",
                            "message": "Too large resource version",
                        }
                    ],
                    "retryAfterSeconds": 1,
                },
            )
        await asyncio.sleep(POLL / 2)


async def stream(
    store: Store,
    resource: APIResource,
    namespace: str | None,
    options: ListOptions,
    stopping: Callable[[], bool],
    convert: Convert | None = None,
) -> AsyncIterator[bytes]:
    """The event lines of one watch (see the module docstring)."""
    given = start_version(options)
    end = None if options.timeout is None else time.monotonic() + options.timeout
    initial = options.initial_events if options.initial_events is not None else given is None
    view = _View(namespace, options, convert or _same)
    if initial or view.selective:
        at, current = await run_in_threadpool(snapshot, store, resource, namespace, options)
        view.start([obj.to_dict() for obj in current], at, exact=given is None or initial)
        if initial:
            for data in view.matching.values():
                yield watchframes.encode("ADDED", view.shown(data))
            if options.initial_events:
                yield watchframes.bookmark(
                    resource.api_version, resource.kind, at, initial_end=True
                )
        if not view.selective:
            view.matching = {}  # (kept only to follow objects in and out of the selectors)
        since = at if given is None or initial else given
    else:
        since = given if given is not None else await run_in_threadpool(store.resource_version)
    bookmarked = time.monotonic()
    caught_up = False  # a bookmark is sent when the stream first catches up with the store
    kinds = (resource.model,)
    while not stopping() and (end is None or time.monotonic() < end):
        try:
            found, resume = await run_in_threadpool(_page, store, since, kinds, namespace)
        except Expired:
            latest = await run_in_threadpool(store.resource_version)
            yield _expired(since, latest)
            return
        if found:  # (decoded, filtered and encoded off the event loop)
            for chunk in await run_in_threadpool(view.lines, found):
                yield chunk
        since = resume
        now = time.monotonic()
        # Caught up (a page not full): a bookmark tells the client so at once — a client
        # reading the events up to a resourceVersion (KubeStore.events_since) stops on it
        # rather than waiting for silence. Kubernetes lets a server send one at any time.
        catching_up = not caught_up and len(found) < PAGE
        if options.bookmarks and (catching_up or now - bookmarked >= BOOKMARK_EVERY):
            caught_up, bookmarked = True, now
            yield watchframes.bookmark(resource.api_version, resource.kind, since)
        if not found:
            await asyncio.sleep(POLL)


def _page(
    store: Store, since: int, kinds: tuple[type[Resource], ...], namespace: str | None
) -> tuple[list[WatchEvent], int]:
    """The next events (at most PAGE: a burst of writes is read in bounded steps, each a
    short hold of the store's lock) and the resourceVersion to read on from: past the
    other kinds' and namespaces' events too once the page is not full (`Cursor.past`: the
    store's version is taken before the events are read)."""
    latest = store.resource_version()
    found = store.events_since(since, kinds=kinds, namespace=namespace, limit=PAGE)
    return found, Cursor(since).past(found, latest if len(found) < PAGE else 0).rv


class _View:
    """What one watch shows of the store's events. With selectors it keeps the objects the
    client holds (those that matched when last sent), so that an object that stops matching
    is sent as DELETED with its last matching state, and one that starts to match as ADDED
    (kube's watch cache does the same with each event's previous object)."""

    def __init__(self, namespace: str | None, options: ListOptions, shown: Convert) -> None:
        self.namespace = namespace
        self.options = options
        self.shown = shown
        self.selective = bool(options.labels.requirements) or bool(options.fields)
        self.matching: dict[Key, dict[str, Any]] = {}
        #: events up to this resourceVersion replay the past before the start snapshot: the
        #: state an object had before its first such event is not known
        self.replayed_upto = 0
        self.seen: set[Key] = set()

    def start(self, current: list[dict[str, Any]], at: int, *, exact: bool) -> None:
        self.matching = {_key_of(data): data for data in current}
        self.replayed_upto = 0 if exact else at

    def lines(self, events: Sequence[WatchEvent]) -> list[bytes]:
        found = []
        for event in events:
            if self.namespace is not None and event.namespace != self.namespace:
                continue
            data = _event_object(event)
            if not self.selective:
                found.append(watchframes.encode(event.type.value, self.shown(data)))
                continue
            sent = self._filtered(event, data)
            if sent is not None:
                found.append(watchframes.encode(sent[0], self.shown(sent[1])))
        return found

    def _filtered(
        self, event: WatchEvent, data: dict[str, Any]
    ) -> tuple[str, dict[str, Any]] | None:
        key = (event.namespace, event.name)
        replayed = event.resource_version <= self.replayed_upto and key not in self.seen
        self.seen.add(key)
        held = self.matching.pop(key, None)
        # replayed: only an object first ADDED is known to have been absent before
        unknown = replayed and event.type is not EventType.ADDED
        was = unknown or (held is not None and not replayed)
        if event.type is EventType.DELETED:
            return ("DELETED", data) if was or _passes(data, self.options) else None
        if _passes(data, self.options):
            self.matching[key] = data
            if unknown:
                return event.type.value, data
            return ("MODIFIED" if was else "ADDED"), data
        if not was:
            return None
        last = dict(held or data)  # the last state the client has, at this event's version
        last["metadata"] = {
            **(last.get("metadata") or {}),
            "resourceVersion": str(event.resource_version),
        }
        return "DELETED", last


def _same(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _key_of(data: dict[str, Any]) -> Key:
    meta = data.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _event_object(event: WatchEvent) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(event.raw)
    meta = data.setdefault("metadata", {})
    meta["resourceVersion"] = str(event.resource_version)
    return data


def _passes(data: dict[str, Any], options: ListOptions) -> bool:
    labels = (data.get("metadata") or {}).get("labels") or {}
    return options.labels.matches(labels) and options.fields.matches(data)


def _expired(since: int, latest: int) -> bytes:
    message = f"too old resource version: {since} ({latest})"
    return watchframes.error(kubestatus.failure(410, message, reason="Expired"))
