"""The logs of a pod's earlier attempts, kept when its directory is removed: `pods.PodRunner`
calls `keep` before it deletes a pod directory (the pod was deleted — RestartJob, a
Ctrl-C'd run's eviction, its vcjob deleted — or its name runs again); `logs` and the run's
report read them through `attempts`.

    <state>/logs/<namespace>/<pod>/<attempt>/
        attempt.json                the pod as it ended: uid, labels, annotations,
                                    containers, its status (phase, reason, startTime,
                                    container statuses), finishedAt and keptAt
        <container>.<restart>.log   moved from the pod directory, as they were
        <container>.<restart>.log.<n>   with their rotated copies (`logrotate`)
        <container>.<restart>.log.times and their time indexes (`logtimes`)

An attempt is one pod of that name (one uid); they are numbered from 1 in the order they
ran, and the pod directory, while it exists, is the latest one. The last `KEEP` are kept per
pod name; older ones are deleted as a new one is kept. Only the logs are kept: never the
pod's spec (its environment may hold secrets) nor its files.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcflow.podserver import logrotate, logtimes, ownership, podfs
from vcflow.runtime.status import read_status

LOGS = "logs"
RECORD = "attempt.json"
#: earlier attempts kept per pod name
KEEP = 5
_LOG = re.compile(r"^(.+)\.(\d+)\.log$")


@dataclass(frozen=True)
class Attempt:
    """One attempt of a pod: kept (`directory` under the history), or the current pod
    directory (`current`)."""

    number: int
    directory: Path
    record: dict[str, Any] = field(default_factory=dict)
    current: bool = False

    @property
    def uid(self) -> str:
        return str(self.record.get("uid") or "")

    @property
    def containers(self) -> list[str]:
        """Init containers, then containers, in spec order."""
        return [str(n) for n in self.record.get("containers") or []]

    @property
    def default_container(self) -> str | None:
        """The first regular container (what kubectl picks)."""
        name = self.record.get("defaultContainer")
        return str(name) if name else None

    @property
    def status(self) -> dict[str, Any]:
        status = self.record.get("status")
        return status if isinstance(status, dict) else {}

    @property
    def container_statuses(self) -> list[dict[str, Any]]:
        """The wire statuses of its init containers, then its containers."""
        status = self.status
        listed = [
            *(status.get("initContainerStatuses") or []),
            *(status.get("containerStatuses") or []),
        ]
        return [c for c in listed if isinstance(c, dict)]

    def runs(self, container: str) -> list[tuple[int, Path]]:
        """(restart, path) of every run's log of `container`, oldest first."""
        found = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.directory):
                match = _LOG.match(entry.name)
                if match and match.group(1) == container:
                    found.append((int(match.group(2)), Path(entry.path)))
        return sorted(found)


def history_dir(state_dir: Path, namespace: str, name: str) -> Path:
    return state_dir / LOGS / namespace / name


def kept(history: Path) -> list[Attempt]:
    """The kept attempts of one pod name, oldest first."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(history):
            if entry.name.isdigit() and entry.is_dir(follow_symlinks=False):
                record = podfs.read_json(os.path.join(entry.path, RECORD))
                found.append(
                    Attempt(int(entry.name), Path(entry.path), record or {})
                    if isinstance(record, dict)
                    else Attempt(int(entry.name), Path(entry.path))
                )
    return sorted(found, key=lambda a: a.number)


def attempts(state_dir: Path, namespace: str, name: str) -> list[Attempt]:
    """Every attempt of the pod still known, oldest first: the kept ones, then the pod
    directory's (the current attempt) if it was launched."""
    out = kept(history_dir(state_dir, namespace, name))
    pod_dir = state_dir / podfs.PODS / namespace / name
    spec = podfs.read_json(str(pod_dir / podfs.SPEC))
    if isinstance(spec, dict):
        status = read_status(pod_dir)
        record = _record(spec, status.wire if status.claimed else {})
        if not out or out[-1].uid != record["uid"]:  # (else: being kept just now)
            number = out[-1].number + 1 if out else 1
            out.append(Attempt(number, pod_dir, record, current=True))
    return out


def keep(pod_dir: Path, history: Path, *, limit: int = KEEP) -> Attempt | None:
    """Move the logs of the (ended) pod in `pod_dir` to a new attempt under `history`,
    with its record, and delete the attempts beyond the last `limit`; None when the pod
    was never launched. Done again after a crash half-way, it completes the same attempt."""
    spec = podfs.read_json(str(pod_dir / podfs.SPEC))
    if not isinstance(spec, dict):
        return None
    status = read_status(pod_dir)
    record = _record(spec, status.wire if status.claimed else {})
    earlier = kept(history)
    if earlier and earlier[-1].uid == record["uid"]:
        number = earlier[-1].number
    else:
        number = earlier[-1].number + 1 if earlier else 1
    directory = history / str(number)
    ownership.make_dirs(str(directory), 4)  # logs/<namespace>/<pod>/<attempt>, owner-only
    record["attempt"] = number
    record["keptAt"] = podfs.utc_now()
    podfs.write_json(str(directory / RECORD), record)
    names = set(record["containers"])
    with contextlib.suppress(OSError):
        for entry in os.scandir(pod_dir):
            name = entry.name.removesuffix(logtimes.SUFFIX)
            match = _LOG.match(name) or logrotate.COPIED.match(name)
            if match and match.group(1) in names:  # (a log, a rotated copy, a time index)
                os.replace(entry.path, directory / entry.name)
    for old in kept(history)[: -max(limit, 1)]:
        shutil.rmtree(old.directory, ignore_errors=True)
    return Attempt(number, directory, record)


def _record(spec: dict[str, Any], wire: dict[str, Any]) -> dict[str, Any]:
    inits = [str(c.get("name")) for c in spec.get("initContainers") or []]
    mains = [str(c.get("name")) for c in spec.get("containers") or []]
    statuses = [*(wire.get("initContainerStatuses") or []), *(wire.get("containerStatuses") or [])]
    ends = [((c.get("state") or {}).get("terminated") or {}).get("finishedAt") for c in statuses]
    return {
        "uid": str(spec.get("uid") or ""),
        "labels": spec.get("labels") or {},
        "annotations": spec.get("annotations") or {},
        "containers": [*inits, *mains],
        "defaultContainer": mains[0] if mains else None,
        "status": wire,
        "finishedAt": max((e for e in ends if e), default=None),
    }
