"""When the JobFlow controller writes the statuses its syncs left dirty: the flush timing,
on the controller's injected clock, kept apart from what a flush writes.

A flow whose phase changed (what `vcflow run`, `kubectl wait` and users wait for) is due
`phase_interval` seconds after the change (0: at once), alone: within that window its next
changes ride along in the same write — on a busy API server a single-job flow's Running and
Succeed then cost one status write, not two. Every other dirty flow is due
`status_interval` seconds after one became dirty, or 50x the last such flush's cost if that
is longer, so writing statuses stays a small part of the work.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from vcflow.api.clock import Clock

K = TypeVar("K", bound=Hashable)

#: A flush of every dirty flow may take this fraction of the time between such flushes.
FLUSH_SHARE = 0.02


class StatusDue(Generic[K]):
    def __init__(self, clock: Clock, status_interval: float, phase_interval: float) -> None:
        self._clock = clock
        self._least = status_interval
        self._phase_interval = phase_interval
        self._interval = status_interval
        #: flows synced since their status was last written
        self.dirty: dict[K, None] = {}
        #: the dirty flows whose phase changed, and when it first did since their last write
        self.urgent: dict[K, float] = {}
        self._flush_at: float | None = None

    def mark(self, key: K, *, phase_changed: bool) -> None:
        """`key`'s sync changed its status (`phase_changed`: its phase too)."""
        now = self._clock.monotonic()
        self.dirty[key] = None
        if phase_changed:
            self.urgent.setdefault(key, now)
        elif self._flush_at is None:
            self._flush_at = now + self._interval

    def drop(self, key: K) -> None:
        """`key` is gone: nothing of it is written."""
        self.dirty.pop(key, None)
        self.urgent.pop(key, None)

    def clear(self) -> None:
        self.dirty.clear()
        self.urgent.clear()
        self._flush_at = None

    def due(self) -> bool:
        """Some status is due now (the manager then flushes mid-burst)."""
        wait = self.wait()
        return wait is not None and wait <= 0

    def wait(self) -> float | None:
        """Seconds until a status is due (None: none is dirty; 0 or less: due now)."""
        dues = []
        if self.urgent:
            dues.append(min(self.urgent.values()) + self._phase_interval)
        if self._flush_at is not None:
            dues.append(self._flush_at)
        return min(dues) - self._clock.monotonic() if dues else None

    def to_write(self, *, due_only: bool) -> tuple[list[K], bool]:
        """The flows whose status is to be written now, and whether that is every dirty
        one (not `due_only`, or the interval is up) rather than only those whose new phase
        is due."""
        now = self._clock.monotonic()
        every = not due_only or (self._flush_at is not None and now >= self._flush_at)
        if every:
            return list(self.dirty), True
        ready = now - self._phase_interval
        return [k for k, since in self.urgent.items() if since <= ready], False

    def written(self, key: K) -> None:
        """`key`'s status was written (or found unchanged, or given up on)."""
        self.dirty.pop(key, None)
        self.urgent.pop(key, None)

    def flushed(self, *, every: bool, wrote: bool, began: float) -> None:
        """A flush that began at `began` (the clock's monotonic time) is over: the next
        interval is measured from now."""
        now = self._clock.monotonic()
        if every and wrote:
            self._interval = max(self._least, (now - began) / FLUSH_SHARE)
        if not self.dirty:
            self._flush_at = None
        elif every or self._flush_at is None:  # (the latter: only urgent flows were dirty)
            self._flush_at = now + self._interval
