"""The control plane of `vcflow server`: the controllers and the local runtime on the state
directory's store, turned by `runtime.run.Loop` with no end of its own until `stop()` holds.

Unlike `session.LocalRun` (which runs until its flows end and terminates the pods on a
stop), a stop here detaches: the pods keep running under the pod server and the next
control plane adopts them (`Executor.start`), as `vcflow run` does after a crash. Writes
by other processes (or the server's HTTP routes, on their own connection) are seen by the
loop's polling of the store. The caller holds the controller lock (`statedir`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vcflow.controller.manager import Manager
from vcflow.controller.observer import Observer
from vcflow.controller.options import ControllerOptions
from vcflow.podserver.logrotate import KUBELET, Limits
from vcflow.reconcile.vcjob.resources import UNLIMITED, Capacity
from vcflow.runtime.executor import Executor
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.resources import machine
from vcflow.runtime.run import CREATE_BATCH, POLL, Loop
from vcflow.store.base import Store
from vcflow.store.sqlite import SqliteStore

#: seconds one commit of the control plane may take before the API's writes get a turn
BURST_BUDGET = 0.1
#: seconds the control plane waits at most, between two commits, for the API's writers
YIELD_WAIT = 0.25


@dataclass(frozen=True)
class Parts:
    """What runs: the controllers, the local runtime, both or neither."""

    controllers: bool = True
    runtime: bool = True
    capacity: Capacity = UNLIMITED
    gpus: tuple[str, ...] = ()
    log_limits: Limits = KUBELET
    poll: float = POLL
    observer: Observer | None = None  # told what the controllers do (the server's metrics)
    #: seconds one commit of the controllers or the runtime may hold the store's write lock
    burst_budget: float | None = BURST_BUDGET

    @classmethod
    def of_this_machine(
        cls, *, controllers: bool, runtime: bool, observer: Observer | None = None
    ) -> Parts:
        """Pods gang-scheduled against this host's CPUs, memory and GPUs, as `vcflow run`
        schedules them without `--capacity`."""
        found = machine()
        return cls(controllers, runtime, Capacity(found.capacity), found.gpus, observer=observer)


class _NoControllers:
    """The Loop's reconciler when the controllers are off (`--controllers off`)."""

    def settle(
        self,
        *,
        flush: bool = True,
        budget: float | None = None,
        between: Callable[[], object] | None = None,
    ) -> None:
        return None

    def next_due(self) -> float | None:
        return None


def _between_bursts(store: Store) -> Callable[[], object] | None:
    """Between two commits of the control plane: the API's writers waiting for the store's
    write lock go first (at most YIELD_WAIT seconds)."""
    if isinstance(store, SqliteStore):
        return lambda: store.yield_to_writers(YIELD_WAIT)
    return None


def _never_done() -> bool:
    return False


def run(store: Store, state_dir: Path, parts: Parts, stop: Callable[[], bool]) -> None:
    """Run `parts` on `store` until `stop()` holds; the pods are left running (detached)."""
    if not parts.runtime:
        if parts.controllers:
            manager = Manager(store, options=ControllerOptions(observer=parts.observer))
            manager.run(stop, poll=parts.poll)
        return
    runner = PodRunner(state_dir, log_limits=parts.log_limits)
    try:
        executor = Executor(store, runner, capacity=parts.capacity, gpus=parts.gpus)
        executor.start()  # adopts the pods a previous control plane left running
        controllers = (
            Manager(
                store,
                options=ControllerOptions(
                    create_batch=CREATE_BATCH, observer=parts.observer, capacity=parts.capacity
                ),
            )
            if parts.controllers
            else None
        )
        loop = Loop(
            store,
            controllers or _NoControllers(),
            executor,
            poll=parts.poll,
            burst_budget=parts.burst_budget,
            between_bursts=_between_bursts(store),
        )
        loop.run(_never_done, stop=stop, detach=True)
    finally:
        runner.close()  # pods and the pod server keep running
