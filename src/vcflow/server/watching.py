"""Watch streams as the Kubernetes API sends them: newline-delimited JSON events
`{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}` of one resource, from a
resourceVersion (unset or "0": every current object as ADDED first), filtered by the
list's selectors, with BOOKMARKs when asked, until `timeoutSeconds`, the client leaves or
the server stops. A resourceVersion the store's event log no longer reaches is answered,
as kube-apiserver does, with one ERROR event carrying a 410 Expired Status, then the end.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from vcflow.api.resources import APIResource
from vcflow.server.listing import snapshot
from vcflow.server.requests import ListOptions
from vcflow.server.status import ApiError
from vcflow.store.base import Expired, Store, WatchEvent

POLL = 0.1  # seconds between two looks at the store when nothing came
BOOKMARK_EVERY = 5.0  # seconds between two bookmarks of a quiet stream

Convert = Callable[[dict[str, Any]], dict[str, Any]]


def start_version(options: ListOptions) -> int | None:
    """The resourceVersion to watch after (None: list first); 400 if not a number."""
    text = options.resource_version
    if text in ("", "0"):
        return None
    if not text.isdigit() or len(text) > 19:
        raise ApiError(400, f"resourceVersion: {text!r} is not a resource version")
    return int(text)


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
    shown = convert or _same
    if given is not None:
        since = given
    else:
        since, current = await run_in_threadpool(snapshot, store, resource, namespace, options)
        for obj in current:
            yield _line("ADDED", shown(obj.to_dict()))
    bookmarked = time.monotonic()
    kinds = (resource.model,)
    while not stopping() and (end is None or time.monotonic() < end):
        try:
            found, resume = await run_in_threadpool(store.poll_events, since, kinds)
        except Expired:
            latest = await run_in_threadpool(store.resource_version)
            yield _expired(since, latest)
            return
        for event in found:
            if namespace is not None and event.namespace != namespace:
                continue
            data = _event_object(event)
            if _passes(data, options):
                yield _line(event.type.value, shown(data))
        since = resume
        now = time.monotonic()
        if options.bookmarks and now - bookmarked >= BOOKMARK_EVERY:
            bookmarked = now
            yield _line("BOOKMARK", _bookmark(resource, since))
        if not found:
            await asyncio.sleep(POLL)


def _same(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _event_object(event: WatchEvent) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(event.raw)
    meta = data.setdefault("metadata", {})
    meta["resourceVersion"] = str(event.resource_version)
    return data


def _passes(data: dict[str, Any], options: ListOptions) -> bool:
    labels = (data.get("metadata") or {}).get("labels") or {}
    return options.labels.matches(labels) and options.fields.matches(data)


def _bookmark(resource: APIResource, rv: int) -> dict[str, Any]:
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"resourceVersion": str(rv)},
    }


def _expired(since: int, latest: int) -> bytes:
    status = ApiError(410, f"too old resource version: {since} ({latest})", reason="Expired")
    return _line("ERROR", status.body())


def _line(kind: str, obj: dict[str, Any]) -> bytes:
    return (json.dumps({"type": kind, "object": obj}, separators=(",", ":")) + "\n").encode()
