"""The in-process loop of `vcflow run`: the controllers and the runtime on one store,
settled in turn until neither writes, then blocked on the pod processes (`Executor.wait`)
for at most `poll` seconds — the store's other writers are seen at the next turn — or less
when a timer is due. It ends when `done()` holds, when `timeout` passes, or when `stop()`
holds (Ctrl-C): then every running pod is terminated and removed from the store, so that a
later run recreates it (as after an eviction) and the flows go on — or, with `detach`
(`vcflow server` on SIGTERM), left running under the pod server: the next control plane
adopts them, as after a crash.

The controllers are passed in (anything with `settle()` and `next_due()`, i.e.
`controller.manager.Manager`, made with `create_batch=CREATE_BATCH`): the runtime does not
import them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from vcflow.runtime.executor import Executor
from vcflow.store.base import Store

POLL = 0.1
STOP_GRACE = 5.0
RECHECK = 0.5  # seconds between two `done()` checks when nothing was written
#: vcjobs a flow sync creates at a time (`ControllerOptions.create_batch`): the runtime takes each
#: batch to its launched pods before the next is created, so a wide flow's pods start while
#: the rest of its vcjobs are still being created (the pod server runs them on another core)
CREATE_BATCH = 50


class Reconciler(Protocol):
    def settle(
        self,
        *,
        flush: bool = True,
        budget: float | None = None,
        between: Callable[[], object] | None = None,
    ) -> None: ...
    def next_due(self) -> float | None: ...


class Ending(StrEnum):
    DONE = "done"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class Outcome:
    ending: Ending
    terminated: int = 0  # pods terminated on interruption


def _never() -> bool:
    return False


class Loop:
    def __init__(
        self,
        store: Store,
        controllers: Reconciler,
        executor: Executor[Any],
        *,
        poll: float = POLL,
        on_tick: Callable[[], None] | None = None,
        burst_budget: float | None = None,
        between_bursts: Callable[[], object] | None = None,
    ) -> None:
        """`burst_budget` (seconds) bounds how long one commit of the controllers or the
        runtime may hold the store, and `between_bursts` runs between two of them: the
        server shares its store with its API (`SqliteStore.yield_to_writers`)."""
        self.store, self.controllers, self.executor = store, controllers, executor
        self.poll = poll
        self.on_tick = on_tick
        self.burst_budget = burst_budget
        self.between_bursts = between_bursts

    def settle(self, stop: Callable[[], bool] = _never) -> None:
        """Controllers, then runtime, again until a round writes nothing — or `stop()` holds
        (checked at every step of the runtime: a deadline or a Ctrl-C is seen however much
        there is to do). The runtime settles the controllers too whenever it is idle,
        inside its burst (`_controllers`): what follows a pod's end — the flow's next
        vcjob, then its pod — is one commit."""
        while not stop():
            before = self.store.resource_version()
            # statuses are written when due, not at every lull: a long chain would otherwise
            # rewrite its whole flow status once per job (Manager.run does the same)
            if self.burst_budget is None:
                self.controllers.settle(flush=False)
                self.executor.settle(idle=self._controllers, stop=stop)
            else:
                # bounded commits: the controllers settle between two bursts of the runtime
                # (not inside one), each commit at most `burst_budget` long
                self.controllers.settle(
                    flush=False, budget=self.burst_budget, between=self.between_bursts
                )
                if self.between_bursts is not None:
                    self.between_bursts()
                self.executor.settle(
                    stop=stop, budget=self.burst_budget, between=self.between_bursts
                )
            if self.store.resource_version() == before:
                return

    def _controllers(self) -> bool:
        before = self.store.resource_version()
        self.controllers.settle(flush=False)
        return self.store.resource_version() != before

    def run(
        self,
        done: Callable[[], bool],
        *,
        timeout: float | None = None,
        stop: Callable[[], bool] = _never,
        stop_grace: float = STOP_GRACE,
        detach: bool = False,
    ) -> Outcome:
        """Turns until `done()`, the timeout or `stop()`; on a stop the running pods are
        terminated, or with `detach` left running (every status is written either way)."""
        end = None if timeout is None else time.monotonic() + timeout

        def over() -> bool:
            return stop() or (end is not None and time.monotonic() >= end)

        checked, checked_at = -1, 0.0
        while True:
            if stop():
                return self._detach() if detach else self._interrupt(stop_grace)
            self.settle(over)
            rv = self.store.resource_version()
            # after every write, and once in a while without one (`done` may end a run
            # that nothing moves any more)
            if rv != checked or time.monotonic() - checked_at >= RECHECK:
                checked, checked_at = rv, time.monotonic()
                if done():
                    self._tick()
                    return Outcome(Ending.DONE)
            self._tick()
            if stop():
                return self._detach() if detach else self._interrupt(stop_grace)
            now = time.monotonic()
            if end is not None and now >= end:
                self.controllers.settle()  # write every status before giving up
                return Outcome(Ending.TIMEOUT)
            wait = self.poll
            wakeup = self.executor.next_wakeup()
            if wakeup is not None:
                wait = min(wait, wakeup)
            due = self.controllers.next_due()
            if due is not None:
                wait = min(wait, due - now)
            if end is not None:
                wait = min(wait, end - now)
            self.executor.wait(max(0.0, wait))

    def _tick(self) -> None:
        if self.on_tick is not None:
            self.on_tick()

    def _detach(self) -> Outcome:
        """Leave the pods running (the pod server keeps supervising them); statuses written."""
        self.controllers.settle()
        self._tick()
        return Outcome(Ending.INTERRUPTED)

    def _interrupt(self, grace: float) -> Outcome:
        count = self.executor.terminate_all(grace, grace + 5.0, evict=True)
        self.controllers.settle()  # write every status before leaving
        self._tick()
        return Outcome(Ending.INTERRUPTED, count)
