"""The controller harness's world: a memory store with the faults and records the cases need
(`fail_creates`, the spec of each vcjob create), the controllers, and a virtual clock. No
pod runs here, so no probe connection succeeds (`prober.Unreachable`)."""

from __future__ import annotations

from typing import Any, TypeVar

from vcflow.api.clock import FakeClock
from vcflow.api.errors import FieldError, ValidationFailed
from vcflow.api.meta import Resource
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.prober import Unreachable
from vcflow.store.memory import MemoryStore

R = TypeVar("R", bound=Resource)


class HarnessStore(MemoryStore):
    """MemoryStore that can refuse vcjob creates and remembers each submitted spec."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.faults: dict[str, tuple[str, int | None]] = {}
        self.submitted: dict[str, Any] = {}

    def create(self, obj: R, *, admit: bool = True) -> R:
        if isinstance(obj, VCJob) and obj.name in self.faults:
            message, left = self.faults[obj.name]
            if left is None or left > 0:
                if left is not None:
                    self.faults[obj.name] = (message, left - 1)
                raise ValidationFailed([FieldError(message, kind="Job", name=obj.name)])
        created = super().create(obj, admit=admit)
        if isinstance(obj, VCJob):
            self.submitted[obj.name] = obj.spec.to_dict() if obj.spec else None
        return created


class World:
    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.clock = FakeClock()
        self.store = HarnessStore(self.clock)
        self.manager = Manager(self.store, self.clock, prober=Unreachable())
        self.manager.start()

    def settle(self) -> None:
        self.manager.settle()

    def wait(self, seconds: float) -> None:
        """Advance virtual time, running each delayed retry at its due time."""
        end = self.clock.monotonic() + seconds
        while True:
            due = self.manager.next_due()
            if due is None or due > end:
                break
            self.clock.advance(max(0.0, due - self.clock.monotonic()))
            self.settle()
        self.clock.advance(max(0.0, end - self.clock.monotonic()))
        self.settle()
