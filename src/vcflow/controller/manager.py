"""Runs the controllers: reads store events from a resourceVersion, hands them to every
controller, and works their queues. Single-threaded and deterministic; `settle()` for CLI
commands and tests, `run()` for long-running use."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from vcflow.api import clock as clocks
from vcflow.api import gcpause
from vcflow.api.meta import Resource
from vcflow.controller.events import Recorder
from vcflow.controller.jobflow import FlowController
from vcflow.controller.jobtemplate import TemplateController
from vcflow.controller.observer import Observer
from vcflow.controller.options import ControllerOptions
from vcflow.store.base import Cursor, Expired, Store, WatchEvent, batched


class Controller(Protocol):
    name: str
    watches: tuple[type[Resource], ...]

    def resync(self) -> None: ...
    def handle(self, event: WatchEvent) -> None: ...
    def process_one(self) -> bool: ...
    def queue_depth(self) -> int: ...


class Manager:
    def __init__(
        self,
        store: Store,
        clock: clocks.Clock | None = None,
        *,
        options: ControllerOptions | None = None,
    ) -> None:
        """`options`: how the controllers work (`ControllerOptions`; default: one flow
        sync creates every ready vcjob, real sockets probe, pods run locally)."""
        options = options or ControllerOptions()
        self.store = store
        self.clock = clock or clocks.SystemClock()
        self.observer = options.observer or Observer()
        self.recorder = Recorder(store, self.clock)
        self.flows = FlowController(
            store, self.clock, self.recorder, replace(options, observer=self.observer)
        )
        self.templates = TemplateController(store, self.clock, delay=options.template_delay)
        self.controllers: list[Controller] = [self.flows, self.templates]
        # only these kinds are read (and parsed) from the watch: pods and Events are many
        self.kinds = tuple(dict.fromkeys(k for c in self.controllers for k in c.watches))
        self.cursor = Cursor()
        self.started = False
        self.observer.attach(self.queue_depths)

    def start(self) -> None:
        """Full resync: every flow and template is queued; events are read from now on."""
        self.cursor = Cursor.now(self.store)
        for controller in self.controllers:
            controller.resync()
        self.started = True

    def pump(self) -> int:
        """Hand every store event since the last call to the controllers."""
        try:
            events, cursor = self.store.poll_events(self.cursor, self.kinds)
        except Expired:
            self.start()
            return 0
        for event in events:
            for controller in self.controllers:
                controller.handle(event)
        self.cursor = cursor
        return len(events)

    def step(self, *, flush: bool = True) -> bool:
        """Read events, then sync one ready key per controller; True if anything happened.

        Idle (no event, no ready key), it writes the flow statuses its syncs left dirty — all
        of them, or with `flush=False` only once they are due — so a `settle()` ends with
        every status written; during a long burst it writes them whenever they are due
        (`FlowController.flush_due`)."""
        if not self.started:
            self.start()
        worked = self.pump() > 0
        for controller in self.controllers:
            began = time.perf_counter()
            if controller.process_one():
                self.observer.synced(controller.name, time.perf_counter() - began)
                worked = True
        if not worked:
            if flush:
                return self.flows.flush()
            return self.flows.flush(due_only=True) if self.flows.flush_due() else False
        if self.flows.flush_due():
            self.flows.flush(due_only=True)
        return True

    def settle(
        self,
        *,
        max_steps: int = 10_000_000,
        flush: bool = True,
        budget: float | None = None,
        between: Callable[[], object] | None = None,
    ) -> None:
        """Work until no event is unread, no key is ready now (delayed keys wait) and every
        flow's status is written (with `flush=False`: every status that is due). A flow
        whose sync stopped at `create_batch` is synced again at the next call, not in this
        one: the caller gets to act on the vcjobs created so far. With a `budget` (seconds)
        the work is committed whenever that much time went by, and `between` is called
        before it goes on: a caller that shares the store with others (the server) holds
        its write lock for bounded bursts."""
        # One commit for the burst: a commit is half the cost of a small write. Nothing here
        # waits, and nothing outside the store acts on a write before the burst commits. An
        # idle burst costs nothing: the transaction begins at its first statement, and the
        # watch read does not begin it.
        self.flows.requeue_deferred()
        steps = 0
        while True:
            until = None if budget is None else time.monotonic() + budget
            with gcpause.paused(), batched(self.store):
                while True:
                    steps += 1
                    if steps > max_steps or not self.step(flush=flush):
                        return
                    if until is not None and time.monotonic() >= until:
                        break
            if between is not None:
                between()

    def queue_depths(self) -> dict[str, int]:
        """Keys waiting in each controller's work queue (ready or delayed), by controller
        name. Safe to call from another thread (it only reads sizes)."""
        return {controller.name: controller.queue_depth() for controller in self.controllers}

    def next_due(self) -> float | None:
        """Monotonic time of the earliest delayed key of any controller — a failed sync's
        backoff, or a flow's timer (a retry due, a deadline, a probe round) — or of the flow
        statuses a `settle(flush=False)` left to write when they are due; now when a flow
        has vcjobs left to create (`create_batch`)."""
        if self.flows.deferred:
            return self.clock.monotonic()
        dues = [d for d in (self.flows.queue.next_due(), self.templates.queue.next_due()) if d]
        flush_in = self.flows.flush_wait()
        if flush_in is not None:
            dues.append(self.clock.monotonic() + flush_in)
        return min(dues) if dues else None

    def run(self, stop: Callable[[], bool], *, poll: float = 0.5) -> None:
        """Work until `stop()` is true, sleeping on the store between bursts; then settle.

        Between bursts a flow's status is written once it is due, not at every lull: a
        flow whose jobs finish one by one (a long chain of real jobs) would otherwise have
        its whole status rewritten — and logged for watchers — at every job."""
        while not stop():
            self.settle(flush=False)
            due = self.next_due()
            wait = poll if due is None else min(poll, due - self.clock.monotonic())
            if wait > 0:
                self.store.wait(self.cursor, wait)
        self.settle()
