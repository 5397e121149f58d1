"""Lookup tables over the stored Queues and PriorityClasses, with Kubernetes' and
Volcano's implicit defaults filled in, so the scheduler and the controllers ask one place
and never special-case `default` or a missing class themselves (docs/scheduling.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from vcflow.api.clusterscope import ClusterObjectMeta
from vcflow.api.scheduling import DEFAULT_QUEUE, OPEN, PriorityClass, Queue, QueueSpec, QueueStatus


def implicit_default() -> Queue:
    """Volcano creates `default` (weight 1, Open, no capability); vcflow does not store it
    until someone applies one, so it is made up here."""
    return Queue(
        metadata=ClusterObjectMeta(name=DEFAULT_QUEUE),
        spec=QueueSpec(weight=1),
        status=QueueStatus(state=OPEN),
    )


@dataclass(frozen=True)
class QueueTable:
    """Queues by name; `default` is always there."""

    by_name: Mapping[str, Queue] = field(default_factory=dict)

    @classmethod
    def of(cls, queues: Iterable[Queue]) -> QueueTable:
        return cls({q.name: q for q in queues})

    def get(self, name: str) -> Queue | None:
        """The stored queue, the implicit `default`, or None for an unknown name."""
        found = self.by_name.get(name)
        if found is None and name == DEFAULT_QUEUE:
            return implicit_default()
        return found

    def names(self) -> list[str]:
        """Every queue name, `default` included, sorted."""
        return sorted({*self.by_name, DEFAULT_QUEUE})

    def __iter__(self) -> Iterator[Queue]:
        for name in self.names():
            queue = self.get(name)
            assert queue is not None
            yield queue


@dataclass(frozen=True)
class PriorityTable:
    """PriorityClass values by name; a pod without a class gets `default_value`."""

    values: Mapping[str, int] = field(default_factory=dict)
    default_value: int = 0
    default_name: str | None = None

    @classmethod
    def of(cls, classes: Iterable[PriorityClass]) -> PriorityTable:
        """The globalDefault class's value is the default (Kubernetes: else 0); admission
        allows one globalDefault, and if several were stored the lowest-named wins."""
        listed = sorted(classes, key=lambda c: c.name)
        defaults = [c for c in listed if c.global_default]
        first = defaults[0] if defaults else None
        return cls(
            {c.name: c.value for c in listed},
            first.value if first is not None else 0,
            first.name if first is not None else None,
        )

    def get(self, name: str) -> int | None:
        """A class's value, or None for an unknown name."""
        return self.values.get(name)

    def value_of(self, name: str | None) -> int | None:
        """The value a pod naming `name` gets: the default for no name, None if unknown."""
        if not name:
            return self.default_value
        return self.values.get(name)
