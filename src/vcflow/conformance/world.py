"""The controller harness's world: a memory store with the faults and records the cases need
(`fail_creates`, the spec of each vcjob create), the controllers, and a virtual clock. No
pod runs here, so no probe connection succeeds (`prober.Unreachable`). The controllers talk
to the memory store itself, or — with a `Serve` — to the store an API server in front of it
gives them (the Kubernetes backend: a `KubeStore` over `vcflow server`'s app; a real cluster,
whose garbage collector acts after the writes: `Converging`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import Any, Protocol, TypeVar, runtime_checkable

from vcflow.api.clock import FakeClock
from vcflow.api.errors import FieldError, ValidationFailed
from vcflow.api.meta import Resource
from vcflow.api.scheduling import Queue
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.controller.prober import Unreachable
from vcflow.kubeapi.fieldvalidation import Validation
from vcflow.store.base import Store, UnknownKind, Written
from vcflow.store.memory import MemoryStore

R = TypeVar("R", bound=Resource)


class HarnessStore(MemoryStore):
    """MemoryStore that can refuse vcjob creates and remembers each submitted spec, in
    order; it holds Queues too."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        try:  # (the cases' Queues, `admission: Hold`: the kind as the store has it, if it does)
            self.kinds.of_model(Queue)
        except UnknownKind:
            self.register_kind(Queue)
        self.faults: dict[str, tuple[str, int | None]] = {}
        self.submitted: dict[str, Any] = {}
        #: the vcjobs created, in the order their creates arrived (`vcjob_order`)
        self.created: list[str] = []

    def create(self, obj: R, *, admit: bool = True) -> R:
        self._refuse(obj)
        created = super().create(obj, admit=admit)
        self._record(obj)
        return created

    def create_reviewed(self, obj: R, *, validation: Validation = Validation.WARN) -> Written[R]:
        """(the creates of controllers behind an API server: `Serve`)"""
        self._refuse(obj)
        written = super().create_reviewed(obj, validation=validation)
        self._record(obj)
        return written

    def _refuse(self, obj: Resource) -> None:
        if isinstance(obj, VCJob) and obj.name in self.faults:
            message, left = self.faults[obj.name]
            if left is None or left > 0:
                if left is not None:
                    self.faults[obj.name] = (message, left - 1)
                raise ValidationFailed([FieldError(message, kind="Job", name=obj.name)])

    def _record(self, obj: Resource) -> None:
        if isinstance(obj, VCJob):
            self.submitted[obj.name] = obj.spec.to_dict() if obj.spec else None
            self.created.append(obj.name)


#: The store the controllers and the case's actions use, given the harness store behind it
#: (entered for the case, exited after it). The default is the harness store itself; the
#: Kubernetes backend serves it as the Kubernetes API and returns a client store of that
#: API. Whoever serves it must use the harness store as it is: its faults and records are
#: the case's, and its clock (the world's virtual clock) stamps every object.
Serve = Callable[[HarnessStore], AbstractContextManager[Store]]


@runtime_checkable
class Converging(Protocol):
    """A served store whose API server also acts on its own after some writes (a real
    cluster's garbage collector deleting a deleted flow's vcjobs): `converge` waits until
    what it will do is done and returns whether it did anything (the controllers then
    have events to read)."""

    def converge(self) -> bool: ...


def direct(harness: HarnessStore) -> AbstractContextManager[Store]:
    """The harness store itself (the memory backend)."""
    return nullcontext(harness)


class World:
    def __init__(self, namespace: str, serve: Serve = direct) -> None:
        self.namespace = namespace
        self.clock = FakeClock()
        self.harness = HarnessStore(self.clock)
        self._exits = ExitStack()
        self.store: Store = self._exits.enter_context(serve(self.harness))
        try:
            self.manager = Manager(
                self.store, self.clock, options=ControllerOptions(prober=Unreachable())
            )
            self.manager.start()
        except BaseException:
            self._exits.close()
            raise

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._exits.close()

    def restart(self) -> None:
        """New controllers on the same store, as after a crash: what the old ones knew but
        had not written is gone (they settle no more); the new ones start from the store."""
        self.manager = Manager(
            self.store, self.clock, options=ControllerOptions(prober=Unreachable())
        )
        self.manager.start()

    def settle(self) -> None:
        """Run the controllers until they are idle; over a `Converging` store, again after
        each time the API server's own work changed something."""
        self.manager.settle()
        while isinstance(self.store, Converging) and self.store.converge():
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
