"""A pod run as the control plane sees it: `PodHandle` and the `RunStatus` read from the pod
directory. Reading is all it takes — a handle is a path, so one made by `adopt` after a
control-plane restart is as good as the one `launch` returned.

`RunStatus.wire` is the pod status in the wire form of `api.pod.PodStatus` (phase, reason,
message, startTime, containerStatuses, initContainerStatuses): what the runtime shell writes
into the Pod object.

A pod whose status.json says Pending or Running but whose supervisor is gone (its pid is
dead, a zombie, or now another process: the start time differs) is reported **Failed** with
reason **`SupervisorLost`** and `lost=True`: nothing will record its end, and the processes it
started may still run — `PodRunner.terminate` kills their process groups and records the end.
A status.json that does not parse was cut short (every write, the claim included, puts a
whole file in place; an OS crash can still leave one empty): lost alike, with nothing known
to kill. So is one not sealed for this pod with the state directory's key, or written for
another launch than the handle's (`statusfile.Forged`): a planted "Succeeded" ends nothing.
Launched but not yet claimed by a supervisor: Pending, `claimed=False`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcflow.podserver import podfs, seals, statusfile
from vcflow.podserver.statusfile import FAILED, FINAL, PENDING, SUPERVISOR_LOST


@dataclass(frozen=True)
class ContainerRun:
    """One container's state: `waiting`, `running` or `terminated` (kubelet's words)."""

    name: str
    init: bool
    state: str
    restart_count: int = 0
    reason: str | None = None
    message: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    last_exit_code: int | None = None

    @classmethod
    def from_wire(cls, data: dict[str, Any], init: bool) -> ContainerRun:
        state = data.get("state") or {}
        kind = next(iter(state), "waiting")
        body = state.get(kind) or {}
        last = (data.get("lastState") or {}).get("terminated") or {}
        return cls(
            name=data.get("name", ""),
            init=init,
            state=kind,
            restart_count=int(data.get("restartCount") or 0),
            reason=body.get("reason"),
            message=body.get("message"),
            exit_code=body.get("exitCode"),
            signal=body.get("signal"),
            started_at=body.get("startedAt"),
            finished_at=body.get("finishedAt"),
            last_exit_code=last.get("exitCode"),
        )


@dataclass(frozen=True)
class RunStatus:
    phase: str
    reason: str | None = None
    message: str | None = None
    start_time: str | None = None
    containers: tuple[ContainerRun, ...] = ()
    init_containers: tuple[ContainerRun, ...] = ()
    launched: bool = False
    claimed: bool = False
    supervisor_alive: bool = False
    lost: bool = False
    seq: int = 0
    wire: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def finished(self) -> bool:
        return self.phase in FINAL

    @property
    def exit_code(self) -> int | None:
        """The first container's terminated exit code (what Volcano reads), else None."""
        first = self.containers[0] if self.containers else None
        return first.exit_code if first is not None and first.state == "terminated" else None

    def container(self, name: str) -> ContainerRun | None:
        for c in (*self.init_containers, *self.containers):
            if c.name == name:
                return c
        return None

    @property
    def key(self) -> tuple[object, ...]:
        """Changes whenever anything observable changes."""
        return (self.launched, self.claimed, self.seq, self.lost, self.phase)


def read_status(pod_dir: Path, launch: str | None = None) -> RunStatus:
    """The pod's status; `launch`: the launch id of its spec (a record written for another
    launch is forged)."""
    where = str(pod_dir)
    try:
        raw = statusfile.load(where)  # (one read: absent and unreadable told apart)
    except (FileNotFoundError, NotADirectoryError):
        launched = (pod_dir / podfs.SPEC).exists()
        return RunStatus(phase=PENDING, launched=launched)
    except statusfile.Forged:
        return _parse(statusfile.unreadable(forged=True), alive=False, lost=True)
    except statusfile.Unreadable:
        return _parse(statusfile.unreadable(), alive=False, lost=True)
    if launch is not None and statusfile.launch(raw) != launch:
        return _parse(statusfile.unreadable(forged=True), alive=False, lost=True)
    if statusfile.is_final(raw):
        return _parse(raw, alive=False)
    if statusfile.supervisor_alive(raw):
        return _parse(raw, alive=True)
    again = statusfile.read(where)  # it may have written the end just before exiting
    if again is not None and statusfile.is_final(again):
        return _parse(again, alive=False)
    lost = dict(raw, phase=FAILED, reason=SUPERVISOR_LOST)
    lost["message"] = (
        f"the pod's supervisor (pid {statusfile.supervisor(raw)[0]}) died before the pod "
        "ended; its processes may still run until the pod is terminated"
    )
    return _parse(lost, alive=False, lost=True)


def _parse(raw: dict[str, Any], *, alive: bool, lost: bool = False) -> RunStatus:
    wire = statusfile.wire(raw)
    return RunStatus(
        phase=str(raw.get("phase") or PENDING),
        reason=raw.get("reason"),
        message=raw.get("message"),
        start_time=raw.get("startTime"),
        containers=tuple(
            ContainerRun.from_wire(c, False) for c in wire.get("containerStatuses") or []
        ),
        init_containers=tuple(
            ContainerRun.from_wire(c, True) for c in wire.get("initContainerStatuses") or []
        ),
        launched=True,
        claimed=True,
        supervisor_alive=alive,
        lost=lost,
        seq=statusfile.seq(raw),
        wire=wire,
    )


class PodHandle:
    """A launched pod, by its directory. `status()` reads it afresh; `last` is what the
    latest `status()` (or `PodRunner.wait`) saw."""

    def __init__(self, pod_dir: Path, uid: str = "", *, launch: str | None = None) -> None:
        self.pod_dir = pod_dir
        self.namespace = pod_dir.parent.name
        self.name = pod_dir.name
        self.last: RunStatus | None = None
        self._uid = uid
        self.launch = launch  # the launch id of its spec.json (`seals`), if known

    @property
    def uid(self) -> str:
        """The uid of the pod it was launched for (its spec.json), '' until one is readable."""
        if not self._uid:
            spec = podfs.read_json(str(self.pod_dir / podfs.SPEC))
            self._uid = str(spec.get("uid") or "") if isinstance(spec, dict) else ""
        return self._uid

    def status(self) -> RunStatus:
        self.last = read_status(self.pod_dir, self.launch)
        return self.last

    def refresh(self) -> bool:
        """Read the status; True when it differs from `last`."""
        before = self.last
        return before is None or self.status().key != before.key

    def __repr__(self) -> str:
        return f"PodHandle({self.namespace}/{self.name})"


def adopt(pod_dir: Path) -> PodHandle | None:
    """A handle on the pod in `pod_dir` if this state directory's control plane launched
    it (its spec.json is sealed, `seals`), else None."""
    spec = seals.read_spec(str(pod_dir))
    if spec is None:
        return None
    launch = spec.get(seals.LAUNCH)
    handle = PodHandle(pod_dir, str(spec.get("uid") or ""), launch=str(launch) if launch else None)
    handle.status()
    return handle
