"""The dashboard's live updates: `GET /ui/api/stream` as Server-Sent Events
(docs/dashboard.md): `hello`, then `row` for each change of a flow in scope (a namespace,
or one flow), `nodes` (only the nodes whose fields changed) on a flow's page, `deleted`,
`reload` when a flow's drawing changed (a flow recreated under its name), and `: ping`
every PING seconds.

One thread per dashboard (`Hub`) reads the store's Feed for JobFlow and vcjob events
(`poll_events`, then `wait` up to a second when none came: it sees the server stop) and
tells each open stream which flows changed; a stream then reads each such flow again,
at most once per COALESCE seconds (a flow's burst of writes is one frame), off the event
loop. A stream ends when the server stops, after MAX_AGE (the browser's EventSource
reconnects), or when the client leaves (seen at the next write: a ping at the latest); at
most MAX_STREAMS are open at once (503 past it). The hub's thread ends with its last
stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Receive, Send
from starlette.types import Scope as ASGIScope

from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.dashboard import views
from vcflow.reconcile import outlook
from vcflow.store.base import Cursor, Expired, Selector, Store, WatchEvent

log = logging.getLogger("vcflow.dashboard")

#: seconds between two frames of one flow, at least
COALESCE = 0.2
#: seconds between two pings of a quiet stream
PING = 15.0
#: seconds a stream lasts at most
MAX_AGE = 30 * 60.0
#: streams open at once
MAX_STREAMS = 64
#: seconds the hub waits for a write before it looks at its stop flag again
WAIT = 1.0
#: the kinds whose changes move a flow's page
KINDS = (JobFlow, VCJob)
#: a change of every flow (the feed could not go on from where it was: read them all)
ALL = ("", "")

Key = tuple[str, str]


class Listener:
    """One stream's inbox: the flows changed since it last looked, set from the hub's
    thread through the stream's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.changed: set[Key] = set()
        self.woken = asyncio.Event()

    def tell(self, keys: set[Key]) -> None:
        """(the hub's thread)"""
        self.loop.call_soon_threadsafe(self._add, keys)

    def _add(self, keys: set[Key]) -> None:
        self.changed |= keys
        self.woken.set()

    def take(self) -> set[Key]:
        found, self.changed = self.changed, set()
        self.woken.clear()
        return found

    async def wait(self, seconds: float) -> None:
        if self.changed:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.woken.wait(), timeout=max(seconds, 0.0))


class Hub:
    """The one reader of a store's Feed for every stream of a dashboard."""

    def __init__(self, store: Store, stopping: threading.Event) -> None:
        self.store, self.stopping = store, stopping
        self._lock = threading.Lock()
        self._listeners: set[Listener] = set()
        self._thread: threading.Thread | None = None

    def join(self, loop: asyncio.AbstractEventLoop) -> Listener | None:
        """A new stream's listener; None when MAX_STREAMS are open."""
        with self._lock:
            if len(self._listeners) >= MAX_STREAMS:
                return None
            listener = Listener(loop)
            self._listeners.add(listener)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="vcflow-dashboard-feed", daemon=True
                )
                self._thread.start()
            return listener

    def leave(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.discard(listener)

    @property
    def open(self) -> int:
        with self._lock:
            return len(self._listeners)

    def close(self, timeout: float = 2 * WAIT) -> None:
        """Wait for the thread to end (after `stopping` is set)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        cursor: Cursor | None = None
        while not self.stopping.is_set():
            with self._lock:
                if not self._listeners:
                    self._thread = None
                    return
                listeners = list(self._listeners)
            try:
                if cursor is None:
                    cursor = Cursor.now(self.store)
                found, cursor = self.store.poll_events(cursor, KINDS)
                if found:
                    self._tell(listeners, flows_of(found))
                else:
                    self.store.wait(cursor, WAIT)
            except Expired:
                cursor = None
                self._tell(listeners, {ALL})
            except Exception:  # (a cluster's API away a moment): looked at again
                log.warning("the dashboard's event feed failed; retrying", exc_info=True)
                self.stopping.wait(WAIT)

    @staticmethod
    def _tell(listeners: Iterable[Listener], keys: set[Key]) -> None:
        if not keys:
            return
        for listener in listeners:
            try:
                listener.tell(keys)
            except RuntimeError:  # (its event loop is closed: the stream is gone)
                continue


def flows_of(events: Iterable[WatchEvent]) -> set[Key]:
    """The flows the events are about: a JobFlow's own, a vcjob's flow (its
    `createdByJobFlow` label)."""
    found: set[Key] = set()
    for event in events:
        if event.model is JobFlow:
            found.add((event.namespace, event.name))
            continue
        value = event.object.metadata.labels.get(names.LABEL_CREATED_BY_FLOW, "")
        prefix = f"{event.namespace}."
        if value.startswith(prefix):
            found.add((event.namespace, value[len(prefix) :]))
    return found


# --- the frames of one stream ------------------------------------------------------------


class Response(StreamingResponse):
    """The stream's answer: its listener leaves the hub when the answer ends, however it
    ends — also when the client left before the first frame was read (the frames'
    generator then never starts, and its own clean-up never runs)."""

    def __init__(self, body: AsyncIterator[bytes], hub: Hub, listener: Listener) -> None:
        super().__init__(
            body,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self.hub, self.listener = hub, listener

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.hub.leave(self.listener)


def frame(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


PING_FRAME = b": ping\n\n"

#: template → durations of other flows' runs, for a flow of a namespace (`Pasts.of`)
PastOf = Callable[[str, str], dict[str, list[float]]]


@dataclass
class Scope:
    """What one stream shows: a namespace (None: all), one flow of it (its page), the
    list's label selector."""

    namespace: str | None
    flow: str | None
    selector: Selector = field(default_factory=Selector)

    def covers(self, key: Key) -> bool:
        if key == ALL:
            return True
        if self.namespace is not None and key[0] != self.namespace:
            return False
        return self.flow is None or key[1] == self.flow


class Page:
    """What a stream last sent of its flows, and the frames a change of one makes (run in
    a worker thread: it reads the store)."""

    def __init__(
        self, store: Store, scope: Scope, past_of: PastOf, now: Callable[[], datetime]
    ) -> None:
        self.store, self.scope, self.past_of, self.now = store, scope, past_of, now
        self.shape: tuple[Any, ...] | None = None
        self.nodes: dict[str, dict[str, Any]] = {}
        self.header: tuple[Any, ...] | None = None
        self.shown: set[Key] = set()

    def start(self) -> None:
        """On a flow's page: what the page already has (its graph), nothing sent."""
        if self.scope.flow is None or self.scope.namespace is None:
            return
        flow = self._get((self.scope.namespace, self.scope.flow))
        if flow is not None:
            self._remember(flow, self._look(flow, with_jobs=True))

    def frames(self, key: Key) -> list[bytes]:
        if key == ALL:
            return [f for k in self._all() for f in self.frames(k)]
        flow = self._get(key)
        if flow is None or not self.scope.selector.matches(flow.metadata.labels):
            if key in self.shown or key == (self.scope.namespace, self.scope.flow):
                self.shown.discard(key)
                return [frame("deleted", {"namespace": key[0], "name": key[1]})]
            return []
        self.shown.add(key)
        on_page = self.scope.flow is not None
        view = self._look(flow, with_jobs=on_page)
        out = [frame("row", views.row(view))]
        if not on_page:
            return out
        if views.shape(flow) != self.shape:
            self._remember(flow, view)
            return [*out, frame("reload", {"namespace": key[0], "name": key[1]})]
        now = views.nodes(view)
        changed = views.changed(self.nodes, now)
        header = self._header(view)
        if changed or header != self.header:
            out.append(frame("nodes", views.nodes_frame(view, changed)))
        self.nodes.update({n["id"]: n for n in changed})
        self.header = header
        return out

    def _remember(self, flow: JobFlow, view: views.FlowView) -> None:
        self.shape = views.shape(flow)
        self.nodes = {n["id"]: views.slim(n) for n in views.nodes(view)}
        self.header = self._header(view)

    @staticmethod
    def _header(view: views.FlowView) -> tuple[Any, ...]:
        frame_data = views.nodes_frame(view, [])
        return frame_data["phase"], frame_data["eta"], tuple(frame_data["criticalPath"])

    def _look(self, flow: JobFlow, *, with_jobs: bool) -> views.FlowView:
        jobs: list[VCJob] = []
        if with_jobs:
            selector = {
                names.LABEL_CREATED_BY_FLOW: names.created_by_value(flow.namespace, flow.name)
            }
            jobs = self.store.list(VCJob, flow.namespace, selector)
        return views.look(flow, self.now(), past=self.past_of(flow.namespace, flow.name), jobs=jobs)

    def _get(self, key: Key) -> JobFlow | None:
        try:
            return self.store.get(JobFlow, key[0], key[1])
        except NotFound:
            return None

    def _all(self) -> list[Key]:
        if self.scope.flow is not None and self.scope.namespace is not None:
            return [(self.scope.namespace, self.scope.flow)]
        flows = self.store.list(JobFlow, self.scope.namespace, self.scope.selector)
        return [(f.namespace, f.name) for f in flows] + sorted(self.shown)


async def events(
    hub: Hub,
    listener: Listener,
    page: Page,
    stopping: threading.Event,
    *,
    max_age: float = MAX_AGE,
) -> AsyncIterator[bytes]:
    """The stream's bytes (see the module docstring); leaves the hub when it ends."""
    try:
        rv = await run_in_threadpool(page.store.resource_version)
        await run_in_threadpool(page.start)
        yield frame("hello", {"resourceVersion": str(rv)})
        began = pinged = time.monotonic()
        sent: dict[Key, float] = {}
        due: dict[Key, float] = {}
        if page.scope.flow is not None and page.scope.namespace is not None:
            # once more after the hub surely follows the feed: a change between the page's
            # start and the hub's first look is not missed (a row, nodes only if changed)
            due[(page.scope.namespace, page.scope.flow)] = began + COALESCE
        while not stopping.is_set():
            now = time.monotonic()
            if now - began >= max_age:
                return
            for key in listener.take():
                if page.scope.covers(key) and key not in due:
                    due[key] = max(now, sent.get(key, -math.inf) + COALESCE)
            for key in [k for k, at in due.items() if at <= now]:
                del due[key]
                sent[key] = now
                for chunk in await run_in_threadpool(page.frames, key):
                    yield chunk
            if now - pinged >= PING:
                pinged = now
                yield PING_FRAME
            soonest = min([*due.values(), pinged + PING, began + max_age, now + 1.0])
            await listener.wait(soonest - time.monotonic())
    finally:
        hub.leave(listener)


class Pasts:
    """Per namespace, the durations of its flows' runs by template (`outlook.durations`),
    read at most every TTL seconds: the ETA of a flow counts the other flows' runs."""

    TTL = 30.0
    #: namespaces kept at once
    MAX = 1024

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[float, dict[str, dict[str, list[float]]]]] = {}

    def by_flow(self, namespace: str) -> dict[str, dict[str, list[float]]]:
        with self._lock:
            kept = self._kept.get(namespace)
        if kept is not None and time.monotonic() - kept[0] < self.TTL:
            return kept[1]
        found = outlook.durations(self.store.list(JobFlow, namespace))
        self.put(namespace, found)
        return found

    def put(self, namespace: str, found: dict[str, dict[str, list[float]]]) -> None:
        with self._lock:
            if len(self._kept) >= self.MAX:
                self._kept.clear()
            self._kept[namespace] = (time.monotonic(), found)

    def of(self, namespace: str, flow: str) -> dict[str, list[float]]:
        return outlook.elsewhere(self.by_flow(namespace), flow)
