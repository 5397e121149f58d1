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
from vcflow.reconcile.vcjob.resources import UNLIMITED, Capacity
from vcflow.runtime.executor import Executor
from vcflow.runtime.logrotate import KUBELET, Limits
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.resources import machine
from vcflow.runtime.run import CREATE_BATCH, POLL, Loop
from vcflow.store.base import Store


@dataclass(frozen=True)
class Parts:
    """What runs: the controllers, the local runtime, both or neither."""

    controllers: bool = True
    runtime: bool = True
    capacity: Capacity = UNLIMITED
    gpus: tuple[str, ...] = ()
    log_limits: Limits = KUBELET
    poll: float = POLL

    @classmethod
    def of_this_machine(cls, *, controllers: bool, runtime: bool) -> Parts:
        """Pods gang-scheduled against this host's CPUs, memory and GPUs, as `vcflow run`
        schedules them without `--capacity`."""
        found = machine()
        return cls(controllers, runtime, Capacity(found.capacity), found.gpus)


class _NoControllers:
    """The Loop's reconciler when the controllers are off (`--controllers off`)."""

    def settle(self, *, flush: bool = True) -> None:
        return None

    def next_due(self) -> float | None:
        return None


def _never_done() -> bool:
    return False


def run(store: Store, state_dir: Path, parts: Parts, stop: Callable[[], bool]) -> None:
    """Run `parts` on `store` until `stop()` holds; the pods are left running (detached)."""
    if not parts.runtime:
        if parts.controllers:
            manager = Manager(store)
            manager.run(stop, poll=parts.poll)
        return
    runner = PodRunner(state_dir, log_limits=parts.log_limits)
    try:
        executor = Executor(store, runner, capacity=parts.capacity, gpus=parts.gpus)
        executor.start()  # adopts the pods a previous control plane left running
        controllers = Manager(store, create_batch=CREATE_BATCH) if parts.controllers else None
        loop = Loop(store, controllers or _NoControllers(), executor, poll=parts.poll)
        loop.run(_never_done, stop=stop, detach=True)
    finally:
        runner.close()  # pods and the pod server keep running
