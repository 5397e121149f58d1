"""The pod directory's `status.json` and `terminate` files: their format, read and written only
here. The pod's supervisor (`supervisor`) writes the status record, a reaper (`reaper`) the
end of a pod whose supervisor died; the control plane reads it (`status`, `pods`) and asks
for a stop with the terminate file. Standard library only: the pod server imports it.

A record is the pod's status in the wire form of `api.pod.PodStatus` (phase, reason, message,
startTime, initContainerStatuses, containerStatuses) plus vcflow's key `vcflow`: `seq` (one
more at each write), `supervisor` ({pid, start} of the process supervising the pod),
`processes` (container name → {pid, start} of each running container's process group) and
`launch` (the launch id of the spec it runs, `seals`). Every record is sealed with the state
directory's key: one that is not (planted, copied from another pod) is `Forged`, and stands
for a pod ended, lost, as an unreadable one does — its processes are never signalled.
"""

from __future__ import annotations

import errno
import json
import os
from typing import Any

from vcflow.podserver import podfs, seals

Record = dict[str, Any]

PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
FINAL = (SUCCEEDED, FAILED)
#: The reason of a pod that ended without its supervisor (it died, or its record is lost).
SUPERVISOR_LOST = "SupervisorLost"
UNREADABLE = "the pod's status file was unreadable (cut short by an OS crash?): its end is unknown"
#: The grace period of a stop when neither the terminate file nor the pod's spec gives one
#: (Kubernetes' `terminationGracePeriodSeconds` default).
DEFAULT_GRACE = 30.0
#: The longest deadline or grace period a pod's files may set (2^31-1 s, 68 years, as
#: `api.clock.MAX_SECONDS`): a longer one (a spec stored before admission bounded it, a
#: planted file) waits this long instead of overflowing the pod server's clocks.
MAX_SECONDS = 2**31 - 1
_VCFLOW = "vcflow"


FORGED = (
    "the pod's status file was not written by its supervisor (no valid seal: planted, or "
    "copied from another pod): it was ignored"
)


class Unreadable(ValueError):
    """The status file exists but does not parse: every write publishes a whole file, so an
    OS crash cut it short."""


class Forged(Unreadable):
    """The status file is not sealed for this pod with the state directory's key (or is a
    link): not written by the pod's supervisor."""


def _path(pod_dir: str) -> str:
    return os.path.join(pod_dir, podfs.STATUS)


def claimed(pod_dir: str) -> bool:
    """Has a supervisor claimed the pod (its first record exists)?"""
    return os.path.exists(_path(pod_dir))


def load(pod_dir: str) -> Record:
    """The record, in one read (absent and unreadable told apart): FileNotFoundError (or
    NotADirectoryError) when the pod is not claimed, Unreadable when the file is cut short
    (or is not a record), Forged when its seal is not this pod's."""
    path = _path(pod_dir)
    try:
        data = podfs.read_bytes(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Forged(path) from None
        raise
    body = seals.unseal(seals.STATUS, pod_dir, data)
    try:
        raw = json.loads(data if body is None else body)
    except ValueError:
        raise Unreadable(path) from None
    if not isinstance(raw, dict):
        raise Unreadable(path)
    if body is None:
        raise Forged(path)
    return raw


def read(pod_dir: str) -> Record | None:
    """The record; None when there is none or it is unreadable."""
    try:
        return load(pod_dir)
    except (FileNotFoundError, NotADirectoryError, Unreadable):
        return None


def write(
    pod_dir: str,
    record: Record,
    *,
    fsync: bool = False,
    claim: bool = False,
    spare: str | None = None,
) -> bool:
    """Publish `record` atomically, sealed (durable with `fsync`). `claim`: only if there is
    no record yet (link(2)); False when another claimed the pod first. `spare`: the temp
    file `make_spare` readied."""
    body = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
    data = seals.seal(seals.STATUS, pod_dir, body)
    return podfs.write_bytes(_path(pod_dir), data, fsync=fsync, exclusive=claim, spare=spare)


def make_spare(pod_dir: str) -> str:
    """Ready the next `write`'s temp file now, off the critical path (`podfs.make_spare`)."""
    return podfs.make_spare(_path(pod_dir))


def supervised(
    status: Record,
    *,
    seq: int,
    supervisor: tuple[int, int | None],
    processes: dict[str, dict[str, Any]],
    launch: str,
) -> Record:
    """The supervisor's record: `status` (wire form) with the `vcflow` key."""
    status[_VCFLOW] = {
        "seq": seq,
        "supervisor": {"pid": supervisor[0], "start": supervisor[1]},
        "processes": processes,
        seals.LAUNCH: launch,
    }
    return status


def ended_lost(record: Record, message: str, launch: str) -> Record:
    """The record of a pod ended without its supervisor: Failed, reason `SUPERVISOR_LOST`, no
    process left, one write more, for `launch`. (Its containers are the caller's: `reaper`.)"""
    record["phase"] = FAILED
    record["reason"] = SUPERVISOR_LOST
    record["message"] = message
    extra = record.setdefault(_VCFLOW, {})
    extra["processes"] = {}
    extra["seq"] = seq(record) + 1
    extra[seals.LAUNCH] = launch
    return record


def unreadable(forged: bool = False) -> Record:
    """What an unreadable (or forged) record stands for: the pod ended, lost, its end
    unknown."""
    return {"phase": FAILED, "reason": SUPERVISOR_LOST, "message": FORGED if forged else UNREADABLE}


def is_final(record: Record) -> bool:
    return record.get("phase") in FINAL


def wire(record: Record) -> Record:
    """The pod status alone (`api.pod.PodStatus` wire form)."""
    return {k: v for k, v in record.items() if k != _VCFLOW}


def launch(record: Record) -> str | None:
    """The launch id the record was written for (`seals`)."""
    found = (record.get(_VCFLOW) or {}).get(seals.LAUNCH)
    return str(found) if found else None


def seq(record: Record) -> int:
    return int((record.get(_VCFLOW) or {}).get("seq") or 0)


def supervisor(record: Record) -> tuple[int, int | None]:
    """(pid, start time) of the process that supervises the pod; pid 0 when unknown."""
    sup = (record.get(_VCFLOW) or {}).get("supervisor") or {}
    return int(sup.get("pid") or 0), sup.get("start")


def supervisor_alive(record: Record) -> bool:
    return podfs.same_process(*supervisor(record))


def processes(record: Record) -> list[tuple[int, int | None]]:
    """(pid, start time) of each container process group the record says runs."""
    found = (record.get(_VCFLOW) or {}).get("processes") or {}
    return [(int(p["pid"]), p.get("start")) for p in found.values()]


# -- the terminate file ----------------------------------------------------------------------


def request_stop(pod_dir: str, grace: float) -> None:
    """Ask for the pod to stop within `grace` seconds (its supervisor is then told to look)."""
    seconds_text = f"{seconds(grace, DEFAULT_GRACE)}"
    podfs.write_bytes(os.path.join(pod_dir, podfs.TERMINATE), seconds_text.encode())


def seconds(value: object, default: float) -> float:
    """A number of seconds from a pod's files, within [0, MAX_SECONDS]; `default` when it is
    not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return default
    return max(0.0, min(float(MAX_SECONDS), float(value)))


def stop_requested(pod_dir: str) -> bool:
    return os.path.exists(os.path.join(pod_dir, podfs.TERMINATE))


def stop_grace(pod_dir: str, default: float = DEFAULT_GRACE) -> float:
    """The grace period the terminate file asks for; `default` without a readable one."""
    try:
        text = podfs.read_bytes(os.path.join(pod_dir, podfs.TERMINATE)).decode().strip()
        return seconds(float(text), default)
    except (OSError, ValueError):
        return default
