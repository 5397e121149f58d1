"""What the runtime's scheduler reads from the store besides vcjobs and pods: the Queues and
PriorityClasses (docs/scheduling.md). They change rarely, so they are listed once and then
kept from the store's events, not read at every pass. A store that does not hold these
kinds gives none: every job is in the implicit `default` queue, every class worth 0.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcflow.api.meta import Resource
from vcflow.api.queues import PriorityTable, QueueTable
from vcflow.api.scheduling import PriorityClass, Queue
from vcflow.reconcile.vcjob import joborder
from vcflow.store.base import EventType, Store, UnknownKind, WatchEvent

KINDS: tuple[type[Resource], ...] = (Queue, PriorityClass)


class SchedulingInputs:
    def __init__(self, fixed: Mapping[str, int] | None = None) -> None:
        # `fixed`: class values given by the caller (the conformance `priority_classes`),
        # laid over the stored classes
        self.fixed = dict(fixed or {})
        self.queues = QueueTable()
        self.classes: dict[str, PriorityClass] = {}
        self.priorities = joborder.Priorities(self.fixed)

    def kinds(self, store: Store) -> tuple[type[Resource], ...]:
        """The kinds of `KINDS` this store holds (the ones to watch)."""
        held = []
        for model in KINDS:
            try:
                store.kinds.of_model(model)
            except UnknownKind:
                continue
            held.append(model)
        return tuple(held)

    def load(self, store: Store) -> None:
        """List them again (at start, and when the watch expired)."""
        kinds = self.kinds(store)
        self.queues = QueueTable.of(store.list(Queue) if Queue in kinds else [])
        found = store.list(PriorityClass) if PriorityClass in kinds else []
        self.classes = {c.name: c for c in found}
        self._tabulate()

    def observe(self, event: WatchEvent) -> None:
        """A Queue or PriorityClass event."""
        obj = event.object
        deleted = event.type is EventType.DELETED
        if isinstance(obj, Queue):
            stored = dict(self.queues.by_name)
            if deleted:
                stored.pop(obj.name, None)
            else:
                stored[obj.name] = obj
            self.queues = QueueTable(stored)  # (a new table: a pass may hold the old one)
        elif isinstance(obj, PriorityClass):
            if deleted:
                self.classes.pop(obj.name, None)
            else:
                self.classes[obj.name] = obj
            self._tabulate()

    def _tabulate(self) -> None:
        """Class values; the globalDefault's is a class-less job's, else 0."""
        table = PriorityTable.of(self.classes.values())
        values = {**table.values, **self.fixed}
        self.priorities = joborder.Priorities(values, table.default_value)
