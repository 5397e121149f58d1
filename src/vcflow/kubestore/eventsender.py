"""Events sent in the background, as client-go's EventBroadcaster sends them: `submit`
queues an Event and returns at once; one sender thread creates them in the order queued.
A full queue drops the new Event, counted (`dropped`) and logged; an Event the server
refuses is logged and not retried. `close` (the operator's SIGTERM) sends what is queued
within a deadline long enough for a full queue at the client's default rate limit, inside a
pod's default termination grace period; the rest is counted as dropped and logged. Used by
`store` (`KubeStore(async_events=True)`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from vcflow.api.errors import StoreError
from vcflow.api.event import Event
from vcflow.kubestore.client import Unreachable

log = logging.getLogger("vcflow.kubestore.events")

#: Events queued at most (client-go's broadcaster: 1,000)
QUEUE_SIZE = 1000
#: seconds `close` waits for the queue to be sent: a full queue at KubeClient's default
#: rate limit (`ratelimit`: QPS 50 after a burst of 100; the operator's is twice that)
#: takes about 18 s, and a pod has 30 s
#: from SIGTERM to SIGKILL by default (`terminationGracePeriodSeconds`, deploy/operator). A
#: few seconds were too few: a rate-limited burst left hundreds of Events queued at SIGTERM.
FLUSH_SECONDS = 25.0
#: tries of an Event while the server is unreachable, and the seconds between them
TRIES, RETRY_WAIT = 3, 0.5
#: a drop is logged the first time and then every this many
LOG_EVERY = 100


class EventSender:
    """The background sender of one store (see the module docstring)."""

    def __init__(self, send: Callable[[Event], object], *, size: int = QUEUE_SIZE) -> None:
        self._send = send
        self.size = size
        self.dropped = 0  # Events not sent: the queue was full, or it was closed
        self.failed = 0  # Events the server refused (or never answered)
        self.sent = 0
        self._queue: deque[Event] = deque()
        self._changed = threading.Condition()
        self._busy = False  # an Event taken from the queue is being sent
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="vcflow-events", daemon=True)
        self._started = False

    def submit(self, event: Event) -> bool:
        """Queue `event`; False (and counted) when the queue is full or closed."""
        with self._changed:
            if self._closing or len(self._queue) >= self.size:
                self._drop(1, "the event queue is full" if not self._closing else "closed")
                return False
            self._queue.append(event)
            if not self._started:
                self._started = True
                self._thread.start()
            self._changed.notify_all()
        return True

    def pending(self) -> int:
        with self._changed:
            return len(self._queue) + self._busy

    def _drop(self, count: int, why: str) -> None:
        """Count `count` Events dropped and log it (the first, then every LOG_EVERY).
        Holds the lock."""
        before = self.dropped
        self.dropped += count
        if before == 0 or before // LOG_EVERY != self.dropped // LOG_EVERY:
            log.warning("events: %s: %d event(s) dropped so far", why, self.dropped)

    def _loop(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._queue or self._closing)
                if not self._queue:
                    return
                event = self._queue.popleft()
                self._busy = True
            self._deliver(event)
            with self._changed:
                self._busy = False
                self._changed.notify_all()

    def _deliver(self, event: Event) -> None:
        for attempt in range(TRIES):
            try:
                self._send(event)
            except Unreachable as exc:
                if attempt < TRIES - 1 and not self._closing:
                    time.sleep(RETRY_WAIT)
                    continue
                self._failed(event, exc)
            except StoreError as exc:
                self._failed(event, exc)
            except Exception as exc:  # (an Event is never worth the sender thread)
                self._failed(event, exc)
            else:
                self.sent += 1
            return

    def _failed(self, event: Event, exc: BaseException) -> None:
        self.failed += 1
        log.warning(
            "events: %s %s of %s not sent: %s",
            event.type,
            event.reason,
            event.involved_object.name,
            exc,
        )

    def close(self, deadline: float = FLUSH_SECONDS) -> None:
        """Send what is queued within `deadline` seconds; the rest is dropped (counted and
        logged)."""
        with self._changed:
            self._closing = True
            queued, began = len(self._queue) + self._busy, time.monotonic()
            if queued:
                log.info("events: sending the %d queued event(s) (up to %gs)", queued, deadline)
            self._changed.notify_all()
            self._changed.wait_for(lambda: not self._queue and not self._busy, deadline)
            left = len(self._queue)
            self._queue.clear()
            if left:
                self._drop(left, f"not sent within {deadline:g}s of closing")
            elif queued:
                took = time.monotonic() - began
                log.info("events: the %d queued event(s) were sent in %.1fs", queued, took)
            self._changed.notify_all()
