"""Ending a pod whose supervisor died before the pod ended (`SupervisorLost`).

The processes such a pod started may still run, in the process groups its last status
recorded. A `Reaper` (run by a pod server or by `python -m vcflow.runtime.podserver reap`)
sends SIGTERM to those groups — skipping a pid that now belongs to another process (its start
time differs) — SIGKILL to what is left after the grace period (the pod's `terminate` file,
default 30 s), and writes the final status: Failed, reason `SupervisorLost`, each container
that was running terminated with exit code 137 and reason `ContainerStatusUnknown` (the
kubelet's words for a container it lost track of). `reap.lock` (flock) keeps it to one reaper.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from typing import Any

from vcflow.runtime import podfs

SUPERVISOR_LOST = "SupervisorLost"
UNREADABLE = "the pod's status file was unreadable (cut short by an OS crash?): its end is unknown"
DEFAULT_GRACE = 30.0
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
        self._lock = -1

    def begin(self, now: float) -> bool:
        """Signal the groups; False when there is nothing to do (ended, or alive after all)."""
        self._lock = os.open(os.path.join(self.dir, "reap.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return self._done()
        try:
            status = podfs.load_json(os.path.join(self.dir, podfs.STATUS))
        except (FileNotFoundError, NotADirectoryError):
            return self._done()
        except ValueError:
            status = None
        if not isinstance(status, dict):  # cut short: no process known to signal
            status, self.message = {}, UNREADABLE
        if status.get("phase") in podfs.FINAL:
            return self._done()
        extra = status.get("vcflow") or {}
        sup = extra.get("supervisor") or {}
        if podfs.same_process(sup.get("pid"), sup.get("start")):
            return self._done()
        self.status = status
        for proc in (extra.get("processes") or {}).values():
            current = podfs.process_start(proc["pid"])
            if current is None or proc.get("start") is None or current == proc["start"]:
                self.groups.append(proc["pid"])
        grace = DEFAULT_GRACE
        terminate = os.path.join(self.dir, podfs.TERMINATE)
        with contextlib.suppress(OSError, ValueError), open(terminate) as f:
            grace = max(0.0, float(f.read().strip()))
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
        status["phase"] = podfs.FAILED
        status["reason"] = SUPERVISOR_LOST
        status["message"] = self.message
        extra = status.setdefault("vcflow", {})
        extra["processes"] = {}
        extra["seq"] = int(extra.get("seq") or 0) + 1
        spec = podfs.read_json(os.path.join(self.dir, podfs.SPEC)) or {}
        podfs.write_json(
            os.path.join(self.dir, podfs.STATUS), status, fsync=bool(spec.get("fsync"))
        )
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
