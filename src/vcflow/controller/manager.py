"""Runs the controllers: reads store events from a resourceVersion, hands them to every
controller, and works their queues. Single-threaded and deterministic; `settle()` for CLI
commands and tests, `run()` for long-running use."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Protocol

from vcflow.api import clock as clocks
from vcflow.controller.events import Recorder
from vcflow.controller.jobflow import FlowController
from vcflow.controller.jobtemplate import TemplateController
from vcflow.store.base import Expired, Store, WatchEvent


class Controller(Protocol):
    def resync(self) -> None: ...
    def handle(self, event: WatchEvent) -> None: ...
    def process_one(self) -> bool: ...


class Manager:
    def __init__(self, store: Store, clock: clocks.Clock | None = None) -> None:
        self.store = store
        self.clock = clock or clocks.SystemClock()
        self.recorder = Recorder(store, self.clock)
        self.flows = FlowController(store, self.clock, self.recorder)
        self.templates = TemplateController(store, self.clock)
        self.controllers: list[Controller] = [self.flows, self.templates]
        self.rv = 0
        self.started = False

    def start(self) -> None:
        """Full resync: every flow and template is queued; events are read from now on."""
        self.rv = self.store.resource_version()
        for controller in self.controllers:
            controller.resync()
        self.started = True

    def pump(self) -> int:
        """Hand every store event since the last call to the controllers."""
        try:
            events = self.store.events_since(self.rv)
        except Expired:
            self.start()
            return 0
        for event in events:
            for controller in self.controllers:
                controller.handle(event)
            self.rv = event.resource_version
        return len(events)

    def step(self) -> bool:
        """Read events, then sync one ready key per controller; True if anything happened."""
        if not self.started:
            self.start()
        worked = self.pump() > 0
        for controller in self.controllers:
            worked |= controller.process_one()
        return worked

    def settle(self, *, max_steps: int = 10_000_000) -> None:
        """Work until no event is unread and no key is ready now (delayed keys wait)."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            for _ in range(max_steps):
                if not self.step():
                    return
        finally:
            if was_enabled:
                gc.enable()

    def next_due(self) -> float | None:
        """Monotonic time of the earliest delayed key of any controller."""
        dues = [d for d in (self.flows.queue.next_due(), self.templates.queue.next_due()) if d]
        return min(dues) if dues else None

    def run(self, stop: Callable[[], bool], *, poll: float = 0.5) -> None:
        """Work until `stop()` is true, sleeping on the store between bursts."""
        while not stop():
            self.settle()
            due = self.next_due()
            wait = poll if due is None else max(0.0, min(poll, due - self.clock.monotonic()))
            if wait > 0:
                self.store.wait(self.rv, wait)
