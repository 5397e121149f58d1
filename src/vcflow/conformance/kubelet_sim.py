"""The runtime harness's simulated kubelet: a `runtime.runner.Runner` that runs no process.
A launched pod is placed (`reconcile.vcjob.kubelet.place`) and then changes only when a case
says so — it starts (`pod_running`), a container exits (`pod_exit`), its Terminating pods
finish (`pods_gone`) — or when its `activeDeadlineSeconds` passes on the virtual clock, which
the real pod supervisor enforces and so does this one (`next_due`, `fire_due`).

A terminated pod ends at once (Failed, reason Terminated, as a supervisor reports it), unless
`hold_deletions`: then it keeps running until `pods_gone`, and `remove` answers False
("not done with it yet") for a Terminating pod until then, so it stays Terminating in the
store. Pure bookkeeping over the pure kubelet functions; time comes from the given clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.meta import ObjectMeta
from vcflow.api.phases import PodPhase
from vcflow.api.pod import ContainerState, ContainerStateTerminated, Pod, PodSpec
from vcflow.reconcile.vcjob import kubelet
from vcflow.runtime.launch import LaunchError, PodRequest
from vcflow.runtime.status import RunStatus

#: What a container stopped by SIGTERM exits with (128 + 15).
TERMINATED_CODE = 143
NOWHERE = Path("/nonexistent/vcflow-simulated-kubelet")


class SimHandle:
    """One simulated pod run: its pod (status as the kubelet would report it) and the
    `RunStatus` the shell reads."""

    def __init__(self, request: PodRequest, now: datetime) -> None:
        self.namespace, self.name, self.uid = request.namespace, request.name, request.uid
        meta = ObjectMeta(name=request.name, namespace=request.namespace, uid=request.uid)
        self.pod = kubelet.place(
            Pod(metadata=meta, spec=PodSpec.model_validate(request.spec.to_dict())), now
        )
        self.seq = 1  # (a supervisor's claim: the shell writes nothing for it)
        self.stopping = False  # terminated, held until `pods_gone`
        self.released = False  # `pods_gone`: the node is done with it
        self.last: RunStatus | None = None
        self._publish()

    @property
    def key(self) -> names.ObjectKey:
        return names.object_key(self.namespace, self.name)

    @property
    def ended(self) -> bool:
        return self.pod.phase not in kubelet.ALIVE

    def change(self, pod: Pod) -> None:
        self.pod = pod
        self.seq += 1
        self._publish()

    def _publish(self) -> None:
        status = self.pod.status.to_dict() if self.pod.status else {}
        self.last = RunStatus(
            phase=self.pod.phase, launched=True, claimed=True, seq=self.seq, wire=status
        )

    def __repr__(self) -> str:
        return f"SimHandle({self.namespace}/{self.name})"


class SimulatedKubelet:
    def __init__(self, clock: clocks.Clock, *, hold_deletions: bool = False) -> None:
        self.clock = clock
        self.hold_deletions = hold_deletions
        self.runs: dict[names.ObjectKey, SimHandle] = {}
        self._changed: set[names.ObjectKey] = set()

    # -- the Runner interface ---------------------------------------------------------------

    def pod_dir(self, namespace: str, name: str) -> Path:
        return NOWHERE / namespace / name

    def launch(self, request: PodRequest) -> SimHandle:
        key = names.object_key(request.namespace, request.name)
        run = self.runs.get(key)
        if run is not None and run.uid == request.uid:
            return run
        if not request.spec.containers:
            raise LaunchError(f"pod {key}: the pod has no containers")
        # (another uid: the old pod is gone from the store, and so is its run here)
        run = self.runs[key] = SimHandle(request, self.clock.now())
        return run

    def adopt(self, namespace: str, name: str) -> SimHandle | None:
        return self.runs.get(names.object_key(namespace, name))

    def wait(self, handles: Sequence[SimHandle], timeout: float | None) -> list[SimHandle]:
        """The given runs that changed since the last call; never blocks (virtual time)."""
        changed = [h for h in handles if h.key in self._changed]
        self._changed.difference_update(h.key for h in changed)
        return changed

    def terminate(self, handle: SimHandle, grace_seconds: float) -> None:
        if handle.ended or handle.stopping:
            return
        if self.hold_deletions:
            handle.stopping = True
        else:
            self._stop(handle)

    def remove(self, handle: SimHandle) -> bool:
        if not handle.ended:
            raise LaunchError(f"pod {handle.key} has not ended")
        if self.hold_deletions and not handle.released:
            return False
        if self.runs.get(handle.key) is handle:
            del self.runs[handle.key]
        return True

    # -- what the cases do -----------------------------------------------------------------

    def start(self, key: names.ObjectKey) -> None:
        run = self._run(key)
        run.change(kubelet.start(run.pod, self.clock.now()))
        self._changed.add(key)

    def exit(self, key: names.ObjectKey, code: int) -> None:
        run = self._run(key)
        run.change(kubelet.exit_container(run.pod, code, self.clock.now()))
        self._changed.add(key)

    def release(self, keys: Iterable[names.ObjectKey]) -> None:
        """These Terminating pods finish (`pods_gone`): a run still going ends now."""
        for key in keys:
            run = self.runs.get(key)
            if run is None:
                continue
            run.released = True
            if not run.ended:
                self._stop(run)

    def next_due(self) -> datetime | None:
        """When the earliest `activeDeadlineSeconds` passes, None if none will."""
        dues = (kubelet.deadline(r.pod) for r in self.runs.values() if not r.stopping)
        return min((d for d in dues if d is not None), default=None)

    def fire_due(self) -> None:
        """Fail every pod whose deadline passed (DeadlineExceeded)."""
        now = self.clock.now()
        for key, run in self.runs.items():
            due = None if run.stopping else kubelet.deadline(run.pod)
            if due is not None and due <= now:
                run.change(kubelet.exceed_deadline(run.pod, now))
                self._changed.add(key)

    def _run(self, key: names.ObjectKey) -> SimHandle:
        run = self.runs.get(key)
        if run is None:
            raise LaunchError(f"pod {key} was never launched")
        return run

    def _stop(self, run: SimHandle) -> None:
        """The pod's containers got SIGTERM and exited: Failed, reason Terminated."""
        now = clocks.rfc3339(self.clock.now())
        pod = run.pod.clone()
        assert pod.status is not None  # (placed)
        pod.status.phase = PodPhase.FAILED
        pod.status.reason = "Terminated"
        pod.status.message = "the pod was terminated"
        for container in pod.status.container_statuses or []:
            if container.state is None or container.state.terminated is None:
                stopped = ContainerStateTerminated(
                    exit_code=TERMINATED_CODE, reason="Error", finished_at=now
                )
                container.state = ContainerState(terminated=stopped)
            container.ready = False
        run.change(pod)
        self._changed.add(run.key)
