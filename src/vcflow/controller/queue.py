"""A keyed, deduplicating, rate-limited work queue (client-go's workqueue, single worker).

Keys added while queued collapse into one; a failed key comes back after a capped exponential
backoff (5 ms · 2^(k−1), at most `max_delay`) and is never dropped — the controller decides
what to tell the user after `warn_after` failures. Time comes from an injected clock.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from typing import Generic, TypeVar

from vcflow.api.clock import Clock

K = TypeVar("K")


class WorkQueue(Generic[K]):
    def __init__(self, clock: Clock, *, base_delay: float = 0.005, max_delay: float = 60.0) -> None:
        self._clock = clock
        self._base = base_delay
        self._max = max_delay
        self._ready: OrderedDict[K, None] = OrderedDict()
        self._delayed: list[tuple[float, int, K]] = []
        self._due: dict[K, float] = {}
        self._failures: dict[K, int] = {}
        self._seq = 0

    def add(self, key: K, *, first: bool = False) -> None:
        """Queue `key` now (no-op if it is already waiting to run); with `first`, ahead of
        every key ready now (moved there if it was waiting behind them)."""
        self._due.pop(key, None)
        self._ready[key] = None
        if first:
            self._ready.move_to_end(key, last=False)

    def add_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds, unless it is queued sooner already."""
        if key in self._ready:
            return
        due = self._clock.monotonic() + delay
        if key in self._due and self._due[key] <= due:
            return
        self._due[key] = due
        self._seq += 1
        heapq.heappush(self._delayed, (due, self._seq, key))

    def add_rate_limited(self, key: K) -> float:
        """Queue `key` after its backoff; returns the delay used."""
        failures = self._failures.get(key, 0) + 1
        self._failures[key] = failures
        delay: float = min(self._base * 2.0 ** min(failures - 1, 40), self._max)
        self.add_after(key, delay)
        return delay

    def failures(self, key: K) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        """Reset `key`'s backoff after a successful sync."""
        self._failures.pop(key, None)

    def get(self) -> K | None:
        """The next key ready now, oldest first; None when nothing is ready."""
        self._promote()
        if not self._ready:
            return None
        key, _ = self._ready.popitem(last=False)
        return key

    def next_due(self) -> float | None:
        """Monotonic time at which the earliest delayed key becomes ready."""
        while self._delayed and self._due.get(self._delayed[0][2]) != self._delayed[0][0]:
            heapq.heappop(self._delayed)
        return self._delayed[0][0] if self._delayed else None

    def is_ready(self, key: K) -> bool:
        """`key` is queued to run now (not only after a delay)."""
        return key in self._ready

    def __len__(self) -> int:
        return len(self._ready) + len(self._due)

    def _promote(self) -> None:
        now = self._clock.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            due, _, key = heapq.heappop(self._delayed)
            if self._due.get(key) == due:
                del self._due[key]
                self._ready[key] = None
