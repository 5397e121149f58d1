"""Ending a pod whose supervisor died before the pod ended (`SupervisorLost`).

The processes such a pod started may still run, in the process groups its last status
recorded. A `Reaper` (run by a pod server or by `python -m vcflow.podserver reap`)
sends SIGTERM to those groups — skipping a pid that now belongs to another process (its start
time differs) — SIGKILL to what is left after the grace period (the pod's `terminate` file,
default 30 s), and writes the final status: Failed, reason `SupervisorLost`, each container
that was running terminated with exit code 137 and reason `ContainerStatusUnknown` (the
kubelet's words for a container it lost track of). `reap.lock` (flock) keeps it to one reaper.
It reaps only a pod whose spec.json the control plane sealed, and signals only the groups a
sealed status records (a forged one, `statusfile.Forged`, names none).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from typing import Any

from vcflow.podserver import ownership, podfs, seals, statusfile

POLL = 0.05


class Reaper:
    def __init__(self, pod_dir: str) -> None:
        self.dir = os.path.abspath(pod_dir)
        self.finished = False
        self.groups: list[int] = []
        self.kill_at = 0.0
        self.next_poll = 0.0
        self.status: dict[str, Any] = {}
        self.message = "the pod's supervisor died before the pod ended"
        self.spec: dict[str, Any] | None = None
        self._lock = -1

    def begin(self, now: float) -> bool:
        """Signal the groups; False when there is nothing to do (ended, or alive after all)."""
        self.spec = seals.read_spec(self.dir)
        if self.spec is None:  # not a pod this state directory's control plane launched
            return self._done()
        self._lock = ownership.open_lock(os.path.join(self.dir, "reap.lock"))
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return self._done()
        try:
            status = statusfile.load(self.dir)
        except (FileNotFoundError, NotADirectoryError):
            return self._done()
        except statusfile.Forged:  # not its supervisor's: no process known to signal
            status, self.message = {}, statusfile.FORGED
        except statusfile.Unreadable:  # cut short: no process known to signal
            status, self.message = {}, statusfile.UNREADABLE
        if status and statusfile.launch(status) != self.spec.get(seals.LAUNCH):
            status, self.message = {}, statusfile.FORGED  # another launch's (copied here)
        if statusfile.is_final(status) or statusfile.supervisor_alive(status):
            return self._done()
        self.status = status
        for pid, start in statusfile.processes(status):
            current = podfs.process_start(pid)
            if current is None or start is None or current == start:
                self.groups.append(pid)
        grace = statusfile.stop_grace(self.dir)
        _signal(self.groups, signal.SIGTERM)
        self.kill_at = now + grace
        self.next_poll = now
        return True

    def step(self, now: float) -> None:
        if self.finished:
            return
        self.groups = [g for g in self.groups if _group_alive(g)]
        if self.groups and now < self.kill_at:
            self.next_poll = now + POLL
            return
        _signal(self.groups, signal.SIGKILL)
        self._write_final()
        self._done()

    def wake_at(self) -> float | None:
        return None if self.finished else min(self.next_poll, self.kill_at)

    def _write_final(self) -> None:
        status, now = self.status, podfs.utc_now()
        for kind in ("initContainerStatuses", "containerStatuses"):
            for container in status.get(kind) or []:
                running = (container.get("state") or {}).get("running")
                if running is None:
                    continue
                container["state"] = {
                    "terminated": {
                        "exitCode": 137,
                        "reason": "ContainerStatusUnknown",
                        "message": "the pod's supervisor died; its process group was killed",
                        "startedAt": running.get("startedAt"),
                        "finishedAt": now,
                    }
                }
                container["ready"] = container["started"] = False
        spec = self.spec or {}
        final = statusfile.ended_lost(status, self.message, str(spec.get(seals.LAUNCH)))
        statusfile.write(self.dir, final, fsync=bool(spec.get("fsync")))
        podfs.notify(spec.get("notify"), self.dir)

    def _done(self) -> bool:
        self.finished = True
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1
        return False


def _signal(groups: list[int], sig: int) -> None:
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
