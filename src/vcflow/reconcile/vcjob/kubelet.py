"""What the kubelet does to a pod's status (reference §9): placement, start, a container exit
under the pod's `restartPolicy` (in-place restarts with `restartCount`), and
`activeDeadlineSeconds` counted from the pod's start on the node.

The conformance harness's simulated kubelet (`conformance.kubelet_sim`) moves the cases' pods
with these; real pods get the same states from their supervisor (`podserver.supervisor`), and
the runtime shell uses the constants and readers. Each function returns a new pod and leaves
its argument alone. Pure: `now` is passed in.
"""

from __future__ import annotations

from datetime import datetime

from vcflow.api.clock import later, parse_rfc3339, rfc3339
from vcflow.api.phases import PodPhase
from vcflow.api.pod import (
    ContainerState,
    ContainerStateRunning,
    ContainerStateTerminated,
    ContainerStateWaiting,
    ContainerStatus,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
)

NODE = "localhost"
DEADLINE_EXCEEDED = "DeadlineExceeded"
#: The exit code of a container killed by SIGKILL (activeDeadlineSeconds).
KILLED = 137
ALIVE = (PodPhase.PENDING, PodPhase.RUNNING)


def place(pod: Pod, now: datetime, node: str = NODE) -> Pod:
    """Bound to this machine: still Pending, containers being created, deadline clock on."""
    out = pod.clone()
    out.spec = out.spec or PodSpec()
    out.spec.node_name = node
    status = out.status or PodStatus(phase=PodPhase.PENDING)
    status.start_time = rfc3339(now)
    status.conditions = [_condition("PodScheduled", now)]
    waiting = ContainerState(waiting=ContainerStateWaiting(reason="ContainerCreating"))
    status.container_statuses = [
        ContainerStatus(name=c.name or "", state=waiting) for c in out.spec.containers or []
    ]
    out.status = status
    return out


def start(pod: Pod, now: datetime) -> Pod:
    """Every container started and Ready: phase Running."""
    out = pod.clone()
    status = out.status or PodStatus()
    status.phase = PodPhase.RUNNING
    for container in status.container_statuses or []:
        container.state = _running(now)
        container.ready = True
        container.started = True
    status.conditions = [
        _condition("PodScheduled", now),
        _condition("Initialized", now),
        _condition("ContainersReady", now),
        _condition("Ready", now),
    ]
    out.status = status
    return out


def exit_container(pod: Pod, code: int, now: datetime, container: int = 0) -> Pod:
    """Container `container` exits with `code`. `Never`: it stays terminated; `OnFailure`:
    restarted in place unless the code is 0; `Always`: restarted in place. The pod ends
    (Succeeded when every container exited 0, else Failed) once no container runs."""
    out = pod.clone()
    status = out.status or PodStatus()
    statuses = status.container_statuses or []
    if not 0 <= container < len(statuses):
        raise ValueError(f"pod {pod.name} has no container {container}")
    target = statuses[container]
    terminated = _terminated(code, now)
    if _restarts(restart_policy(pod), code):
        target.last_state = ContainerState(terminated=terminated)
        target.state = _running(now)
        target.restart_count += 1
        status.phase = PodPhase.RUNNING
    else:
        target.state = ContainerState(terminated=terminated)
        target.ready = False
        status.phase = _phase_when_done(statuses) or PodPhase.RUNNING
    out.status = status
    return out


def exceed_deadline(pod: Pod, now: datetime) -> Pod:
    """`activeDeadlineSeconds` passed: every container killed, the pod Failed whatever its
    restartPolicy (reason DeadlineExceeded)."""
    out = pod.clone()
    status = out.status or PodStatus()
    status.phase = PodPhase.FAILED
    status.reason = DEADLINE_EXCEEDED
    status.message = "Pod was active on the node longer than the specified deadline"
    for container in status.container_statuses or []:
        if container.state is None or container.state.terminated is None:
            container.state = ContainerState(terminated=_terminated(KILLED, now, "Error"))
        container.ready = False
    out.status = status
    return out


def deadline(pod: Pod) -> datetime | None:
    """When `activeDeadlineSeconds` fails this pod; None when it never will."""
    seconds = pod.spec.active_deadline_seconds if pod.spec else None
    status = pod.status
    if seconds is None or status is None or not status.start_time or pod.deleting:
        return None
    if pod.phase not in ALIVE:
        return None
    return later(parse_rfc3339(status.start_time), seconds)  # (clamped, as ttl's)


def restart_policy(pod: Pod) -> str:
    return (pod.spec.restart_policy if pod.spec else None) or "Always"


def exit_code(pod: Pod) -> int:
    """The terminated exit code of the **first** container status, 0 if unknown (§4.2)."""
    statuses = pod.status.container_statuses if pod.status else None
    if not statuses or statuses[0].state is None or statuses[0].state.terminated is None:
        return 0
    return statuses[0].state.terminated.exit_code


def restart_count(pod: Pod) -> int:
    """Restarts summed over all containers and init containers."""
    status = pod.status
    if status is None:
        return 0
    every = [*(status.container_statuses or []), *(status.init_container_statuses or [])]
    return sum(c.restart_count for c in every)


def is_ready(pod: Pod) -> bool:
    """Running with every container Ready (what `dependsOn` waits for, §8.3)."""
    statuses = pod.status.container_statuses if pod.status else None
    return pod.phase == PodPhase.RUNNING and bool(statuses) and all(c.ready for c in statuses or [])


def _restarts(policy: str, code: int) -> bool:
    return policy == "Always" or (policy == "OnFailure" and code != 0)


def _phase_when_done(statuses: list[ContainerStatus]) -> PodPhase | None:
    ended = [c.state.terminated for c in statuses if c.state is not None]
    if len(ended) != len(statuses) or any(t is None for t in ended):
        return None
    return PodPhase.SUCCEEDED if all(t and t.exit_code == 0 for t in ended) else PodPhase.FAILED


def _running(now: datetime) -> ContainerState:
    return ContainerState(running=ContainerStateRunning(started_at=rfc3339(now)))


def _terminated(code: int, now: datetime, reason: str | None = None) -> ContainerStateTerminated:
    return ContainerStateTerminated(
        exit_code=code,
        reason=reason or ("Completed" if code == 0 else "Error"),
        finished_at=rfc3339(now),
    )


def _condition(kind: str, now: datetime) -> PodCondition:
    return PodCondition(type=kind, status="True", last_transition_time=rfc3339(now))
