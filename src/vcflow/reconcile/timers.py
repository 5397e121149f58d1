"""The timers of one flow — retries due, deadlines, probe rounds — as a heap with lazy
removal: setting a timer again, or cancelling it, leaves the old one in the heap, and the
owner's `valid` test drops it when it surfaces. So arming one costs O(log n) and the next
one is found in O(log n), whatever the flow's size (`FlowIndex.next_wakeup`). Pure: the
times are given.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

RETRY = "retry"  # an entry's next attempt is due
DEADLINE = "deadline"  # an entry's attempt reaches its activeDeadlineSeconds
FLOW = "flow"  # the flow reaches its activeDeadlineSeconds
PROBE = "probe"  # a probe round of (entry, target) is due


@dataclass(frozen=True, order=True)
class Timer:
    due: datetime
    seq: int
    kind: str
    name: str = ""
    target: str = ""


class Timers:
    def __init__(self, valid: Callable[[Timer], bool]) -> None:
        self._heap: list[Timer] = []
        self._seq = 0
        self._valid = valid

    def set(self, due: datetime, kind: str, name: str = "", target: str = "") -> None:
        self._seq += 1
        heapq.heappush(self._heap, Timer(due, self._seq, kind, name, target))

    def next(self) -> datetime | None:
        """When the earliest timer still valid is due (None: no timer)."""
        heap = self._heap
        while heap and not self._valid(heap[0]):
            heapq.heappop(heap)
        return heap[0].due if heap else None

    def due(self, now: datetime) -> Iterator[Timer]:
        """The valid timers due at `now`, earliest first, each removed as it is given."""
        while True:
            first = self.next()
            if first is None or first > now:
                return
            yield heapq.heappop(self._heap)

    def __len__(self) -> int:
        return len(self._heap)
