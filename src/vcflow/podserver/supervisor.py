"""The pod supervisor: runs one pod's containers as the kubelet would, and records its status.

`PodSupervisor` is the state machine of one pod; `server.Loop` drives one (exec mode) or
many (the pod server) of them in one single-threaded process. A supervisor claims its pod by
publishing the first `status.json` with link(2) — a second one for the same pod finds it there
and gives up, so a pod never starts twice — then:

1. init containers one at a time, in order; each must exit 0 before the next starts;
2. then every regular container at once, each in its own process group (`spawn`);
3. a container that exits is restarted in place when the restart policy says so (Always:
   every exit; OnFailure: a non-zero exit; init containers: a non-zero exit unless Never),
   with `restartCount` + 1 and the previous run in `lastState`. Back-off between restarts:
   0.1 s doubling to 5 s, reset after a run of 10 s — the kubelet's is 10 s doubling to
   5 min, reset after 10 min; this is one machine and nothing is pulled, so it is shorter;
4. the pod ends as the kubelet decides: Never → Succeeded when every container exited 0,
   Failed when one did not (once all ended), or at once when an init container fails;
   OnFailure → Succeeded when all exited 0; Always → never by itself.

Phases: Pending (claimed, init containers) → Running (regular containers started) →
Succeeded | Failed. Exit codes: the exit status, 128+N when killed by signal N.

Termination messages, as the kubelet copies a container's `terminationMessagePath`: each run
starts with a new, empty, owner-only file `<pod dir>/<container>.termination-log` (`spawn`;
`$VCFLOW_OUTPUTS` names it when the container's env has that variable, `launch`); when the
run ends, however it ends, the first 4096 bytes of it (UTF-8, errors replaced) are its
`state.terminated.message` — kept in `lastState` across a restart; an empty file gives no
message. With `terminationMessagePolicy: FallbackToLogsOnError`, a run that failed and left
the file empty gets the last 80 lines (at most 2048 bytes) of its log instead.

When a container's main process exits, whatever it left in its process group is SIGKILLed,
and so is every other process it started, also one that left the group or the session
(`descendants`: a cgroup per run, else the pod server as a subreaper) — a container's
processes end with it, as in a container.

Stops, both ending the pod Failed (unless it already ended by itself):
- terminate (a `terminate` file in the pod dir holding the grace period, which the driver is
  told to look at with SIGUSR1; a terminate file present at the claim counts too): SIGTERM to
  every running container group, SIGKILL after the grace period; reason `Terminated`.
  Containers not started yet never start.
- `activeDeadlineSeconds`, enforced here, counted from the claim (the pod's `startTime`)
  across restarts: every group SIGKILLed at once (exit code 137); reason `DeadlineExceeded`.

Status writes: at the claim (before anything starts), at the end, and in between at most
`COALESCE` (2 ms) after a change; each one atomic (`statusfile.write`, fsync'd when the spec
says so) and announced on the events FIFO — but the claim, which a write within `COALESCE`
follows (the containers start at once), or the end: waking the control plane for it cost it a
status read per pod and nothing used it. A supervisor killed within those 2 ms of starting
a container leaves that process unrecorded, so a reaper cannot kill it. The driver turns an
unexpected error into `abort`: containers killed, pod Failed with reason `SupervisorError`.

A recorded process carries its start time (`podfs.process_start`), which tells a reaper a
pid reused by another process. It is read when a status first records the process, not as
it starts: a container that ends within `COALESCE` (a short job's often does) is reaped before
any status records it, and costs no read. The read is still exact: until the supervisor
reaps its child, the pid cannot be reused, and a zombie's /proc entry keeps its start time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Any

from vcflow.podserver import logrotate, logtimes, oserrors, podfs, seals, spawn, statusfile
from vcflow.podserver.descendants import Descendants, Run
from vcflow.podserver.statusfile import DEFAULT_GRACE, FAILED, FINAL, PENDING, RUNNING, SUCCEEDED

BACKOFF_INITIAL, BACKOFF_MAX, BACKOFF_RESET = 0.1, 5.0, 10.0
#: A status change waits this long for the next one, so that a container that exits at once
#: costs one status write, not two. The end of a pod is written at once.
COALESCE = 0.002
#: Seconds between two tries of a status write a full disk refused.
RETRY = 1.0
TERMINATED, DEADLINE_EXCEEDED = "Terminated", "DeadlineExceeded"
SUPERVISOR_ERROR = "SupervisorError"
WAITING, RUN, DONE = "waiting", "running", "terminated"


class Container:
    """One container of the pod and its current run."""

    def __init__(self, spec: dict[str, Any], init: bool) -> None:
        self.name: str = spec["name"]
        self.init = init
        self.argv: list[str] | None = spec.get("argv")
        self.env: dict[str, str] = spec.get("env") or {}
        self.cwd: str = spec["workingDir"]
        self.isolation: dict[str, Any] | None = spec.get("isolation")  # `isolation`
        #: `terminationMessagePolicy: FallbackToLogsOnError` (`launch`)
        self.fallback_to_logs = bool(spec.get("fallbackToLogs"))
        self.state = WAITING
        self.waiting_reason = "PodInitializing"
        self.pid = 0
        self.pid_start: int | None = None
        self.runs = 0
        self.restart_count = 0
        self.failures = 0
        self.due: float | None = 0.0 if not init else None
        self.started_mono = 0.0
        self.started_at: str | None = None
        self.terminated: dict[str, Any] | None = None
        self.last: dict[str, Any] | None = None
        self.tracked: Run | None = None  # its current run's descendants (`descendants`)
        self.marked = 0  # its current run's log size at its time index's last mark (`logtimes`)

    def record(self) -> dict[str, Any]:
        """The running process as a reaper needs it; its start time is read the first time
        (see the module docstring)."""
        if self.pid_start is None:
            self.pid_start = podfs.process_start(self.pid, zombie=True)
        return {"pid": self.pid, "start": self.pid_start}

    def wire(self) -> dict[str, Any]:
        """The container status, in the wire form of `api.pod.ContainerStatus`."""
        state: dict[str, Any]
        if self.state == RUN:
            state = {"running": {"startedAt": self.started_at}}
        elif self.state == DONE:
            state = {"terminated": self.terminated}
        else:
            state = {"waiting": {"reason": self.waiting_reason}}
        out: dict[str, Any] = {
            "name": self.name,
            "ready": self.state == RUN and not self.init,
            "started": self.state == RUN,
            "restartCount": self.restart_count,
            "state": state,
        }
        if self.last is not None:
            out["lastState"] = {"terminated": self.last}
        return out


class PodSupervisor:
    """One pod's state machine. The driver (`server.Loop`) calls `claim` once, then
    `exited` for each container process it reaps, `step` whenever something happened or
    `wake_at` passed, and `check_terminate` when asked to; it is done when `finished`."""

    def __init__(
        self,
        pod_dir: str,
        owner: tuple[int, int | None],
        registry: dict[int, PodSupervisor],
        descendants: Descendants | None = None,
    ) -> None:
        self.dir = os.path.abspath(pod_dir)
        spec = seals.read_spec(self.dir)
        if spec is None:
            raise ValueError(f"no {podfs.SPEC} sealed by this state directory's control plane")
        self.launch = str(spec.get(seals.LAUNCH))
        self.inits = [Container(c, True) for c in spec.get("initContainers") or []]
        self.mains = [Container(c, False) for c in spec.get("containers") or []]
        if self.inits:
            self.inits[0].due = 0.0
        self.policy: str = spec.get("restartPolicy") or "Always"
        deadline = spec.get("activeDeadlineSeconds")
        self.deadline = None if deadline is None else statusfile.seconds(deadline, 0.0)
        grace = spec.get("terminationGracePeriodSeconds") or DEFAULT_GRACE
        self.grace_default = statusfile.seconds(grace, DEFAULT_GRACE)
        self.backoff: list[float] = spec.get("backoff") or [BACKOFF_INITIAL, BACKOFF_MAX]
        self.fsync = bool(spec.get("fsync"))
        self.log_limits = logrotate.Limits.of(spec)
        self.events: str | None = spec.get("notify")
        self.phase = PENDING
        self.reason: str | None = None
        self.message: str | None = None
        self.start_time = podfs.utc_now()
        self.t0 = time.monotonic()
        self.next_init = 0
        self.mains_started = False
        self.stop: tuple[str, str] | None = None
        self.kill_at = 0.0
        self.killed = False
        self.term_requested = False
        self.regrace = False  # asked to stop again while stopping: its grace read again
        self.registry = registry
        self.by_pid: dict[int, Container] = {}
        self.seq = 0
        self.dirty = False
        self.write_at: float | None = None
        self.retry_at: float | None = None  # a status write the full disk refused: again then
        self.spare: str | None = None  # the next status write's temp file, made ahead
        self.claimed = False
        self.owner = owner
        self.descendants = descendants  # what ends a container's processes with it

    @property
    def finished(self) -> bool:
        """Ended, and its end recorded (a status that could not be written is kept)."""
        return self.phase in FINAL and not self.dirty

    def claim(self) -> bool:
        """Publish the first status; False (and nothing started) if another has the pod."""
        if not self.write(claim=True):
            return False
        self.claimed = True
        work = os.path.join(self.dir, podfs.WORK)
        if any(c.cwd == work for c in (*self.inits, *self.mains)):
            with contextlib.suppress(OSError):  # then the container cannot run, and says why
                os.makedirs(work, 0o700, exist_ok=True)
        self.check_terminate()
        return True

    def check_terminate(self) -> None:
        """A stop asked for (the terminate file); asked again while the pod is stopping, its
        grace is read again at the next step: a shorter one cuts the stop short, as a second
        `kubectl delete --grace-period` does (`vcflow run`'s Ctrl-C of a pod already
        Terminating under a long grace); a longer one never lengthens it."""
        if not statusfile.stop_requested(self.dir):
            return
        if not self.term_requested:
            self.term_requested = True
        elif self.stop is not None and not self.killed:
            self.regrace = True

    def exited(self, pid: int, status: int, now: float) -> None:
        """Container process `pid` ended with wait status `status`."""
        container = self.by_pid.pop(pid, None)
        self.registry.pop(pid, None)
        if container is not None:
            _killpg(pid, signal.SIGKILL)  # what the main process left behind
            self._end_descendants(container, now)
            code, sig = spawn.exit_code(status)
            reason = "Completed" if code == 0 else "Error"
            self.ended(container, code, sig, reason, None, now)

    def step(self, now: float) -> None:
        """Decide what to start, restart, kill or finish; write the status if it changed."""
        self._step(now)
        if not self.dirty or (self.retry_at is not None and now < self.retry_at):
            return
        if self.phase in FINAL or (self.write_at is not None and now >= self.write_at):
            self.write()
        elif self.write_at is None:
            self.write_at = now + COALESCE

    def _step(self, now: float) -> None:
        if self.phase in FINAL:
            return
        if self.stop is None:
            stop = self._stop_wanted(now)
            if stop is not None:
                done = self.completion() if self.mains_started else None
                if done is not None:
                    self.finish(done)
                    return
                self.begin_stop(*stop, now)
        if self.stop is not None:
            if self.regrace:
                self.regrace = False
                self.kill_at = min(self.kill_at, now + self.grace())
            if not self.killed and now >= self.kill_at:
                self.killed = True
                for c in self.running():
                    _killpg(c.pid, signal.SIGKILL)
            if not self.running():
                self.finish(FAILED, *self.stop)
            return
        self.advance(now)

    def _stop_wanted(self, now: float) -> tuple[str, str, float] | None:
        if self.term_requested:
            return TERMINATED, "the pod was terminated", self.grace()
        if self.deadline is not None and now >= self.t0 + self.deadline:
            message = "Pod was active on the node longer than the specified deadline"
            return DEADLINE_EXCEEDED, message, 0.0
        return None

    def advance(self, now: float) -> None:
        while self.next_init < len(self.inits):
            c = self.inits[self.next_init]
            if c.state == RUN:
                return
            if c.state == DONE:
                if c.terminated and c.terminated["exitCode"] == 0:
                    self.next_init += 1
                    if self.next_init < len(self.inits):
                        self.inits[self.next_init].due = now
                    continue
                self.finish(FAILED)
                return
            if c.due is None or c.due > now:
                return
            self.start(c, now)
        if not self.mains_started:
            self.mains_started = True
            self.phase = RUNNING
            self.dirty = True
        for c in self.mains:
            if c.state == WAITING and c.due is not None and c.due <= now:
                self.start(c, now)
        done = self.completion()
        if done is not None:
            self.finish(done)

    def completion(self) -> str | None:
        if any(c.state != DONE for c in self.mains):
            return None
        ok = all(c.terminated and c.terminated["exitCode"] == 0 for c in self.mains)
        return SUCCEEDED if ok else FAILED

    def wake_at(self) -> float | None:
        """When `step` has something to do by itself (monotonic time), if ever."""
        if self.finished:
            return None
        times = [c.due for c in (*self.inits, *self.mains) if c.state == WAITING and c.due]
        if self.stop is None and self.deadline is not None:
            times.append(self.t0 + self.deadline)
        if self.stop is not None and not self.killed:
            times.append(self.kill_at)
        if self.write_at is not None:
            times.append(self.write_at)
        if self.retry_at is not None:
            times.append(self.retry_at)
        return min(times) if times else None

    # -- containers ----------------------------------------------------------------------

    def start(self, c: Container, now: float) -> None:
        if c.runs:
            c.restart_count += 1
        c.runs += 1
        c.due = None
        c.started_mono = now
        c.started_at = podfs.utc_now()
        c.marked = 0
        log_fd = spawn.open_log(self.dir, c.name, c.restart_count)
        tracker = self.descendants
        c.tracked = tracker.new() if tracker is not None else None
        message_file = os.path.join(self.dir, podfs.termination_name(c.name))
        try:
            with tracker.inside(c.tracked) if tracker and c.tracked else contextlib.nullcontext():
                result = spawn.spawn(
                    c.argv, c.env, c.cwd, log_fd, self.dir, c.isolation, message_file
                )
        finally:
            os.close(log_fd)
        self.dirty = True
        if isinstance(result, spawn.StartFailure):
            self._end_descendants(c, now)
            self.ended(c, result.exit_code, None, result.reason, result.message, now)
            return
        if tracker is not None and c.tracked is not None:
            tracker.started(c.tracked, result)
        c.state, c.pid, c.pid_start = RUN, result, None  # read when recorded (`record`)
        self.by_pid[result] = c
        self.registry[result] = self
        if self.spare is None:  # while the container starts, ready the next status write
            self.spare = statusfile.make_spare(self.dir)

    def ended(
        self, c: Container, code: int, sig: int | None, reason: str, message: str | None, now: float
    ) -> None:
        log = os.path.join(self.dir, podfs.log_name(c.name, c.restart_count))
        if c.marked:  # (a run no look saw output of has no time index: its log's mtime serves)
            c.marked = logtimes.look(log, c.marked)
        if logrotate.trim_if_needed(log, self.log_limits):  # (a flood's since the last look)
            logtimes.trimmed(log, c.marked)
        if not message:  # (a run that could not start has the reason as its message)
            fallback = log if c.fallback_to_logs and code != 0 else None
            path = os.path.join(self.dir, podfs.termination_name(c.name))
            message = podfs.termination_message(path, fallback)
        record: dict[str, Any] = {"exitCode": code, "reason": reason}
        if sig is not None:
            record["signal"] = sig
        if message:
            record["message"] = message
        record["startedAt"] = c.started_at
        record["finishedAt"] = podfs.utc_now()
        c.state, c.pid, c.terminated = DONE, 0, record
        self.dirty = True
        if self.stop is None and self._restarts(c, code):
            c.last, c.state, c.waiting_reason = record, WAITING, "CrashLoopBackOff"
            if now - c.started_mono >= BACKOFF_RESET:
                c.failures = 0
            initial, cap = self.backoff
            c.due = now + min(initial * 2**c.failures, cap)
            c.failures += 1

    def _end_descendants(self, c: Container, now: float) -> None:
        """The run of `c` ended: so does every process it started (`descendants`)."""
        if self.descendants is not None and c.tracked is not None:
            self.descendants.end(c.tracked, now)
            c.tracked = None

    def _retry(self, exc: OSError) -> None:
        """The disk is full: the status stays to write, again every `RETRY` s (the pod is
        not forgotten with its end unrecorded: the control plane would wait for it)."""
        if self.retry_at is None:
            _say(f"{oserrors.describe(exc, self.dir)}; the status is written once there is room")
        self.dirty = True
        self.retry_at = time.monotonic() + RETRY
        self.seq -= 1

    def _restarts(self, c: Container, code: int) -> bool:
        if c.init:
            return code != 0 and self.policy != "Never"
        return self.policy == "Always" or (self.policy == "OnFailure" and code != 0)

    def rotate_logs(self) -> None:
        """The look at the running containers' logs: a mark in the time index of each that
        grew (`logtimes`), then the rotation of those over the limit (`logrotate`), which
        starts their index again."""
        for c in self.running():
            log = os.path.join(self.dir, podfs.log_name(c.name, c.restart_count))
            c.marked = logtimes.look(log, c.marked)
            if logrotate.rotate_if_needed(log, self.log_limits):
                logtimes.restart(log)
                c.marked = 0

    def running(self) -> list[Container]:
        return [c for c in (*self.inits, *self.mains) if c.state == RUN]

    def grace(self) -> float:
        return statusfile.stop_grace(self.dir, self.grace_default)

    def begin_stop(self, reason: str, message: str, grace: float, now: float) -> None:
        self.stop = (reason, message)
        self.kill_at = now + grace
        self.killed = grace <= 0
        for c in self.running():
            _killpg(c.pid, signal.SIGKILL if self.killed else signal.SIGTERM)

    def finish(self, phase: str, reason: str | None = None, message: str | None = None) -> None:
        self.phase, self.reason, self.message = phase, reason, message
        self.dirty = True

    def abort(self, message: str) -> None:
        """After an unexpected error: kill what runs, end the pod Failed."""
        for c in self.running():
            _killpg(c.pid, signal.SIGKILL)
            self.registry.pop(c.pid, None)
            self._end_descendants(c, time.monotonic())
        if self.claimed:
            self.finish(FAILED, SUPERVISOR_ERROR, message)
            self.write()

    # -- status --------------------------------------------------------------------------

    def write(self, claim: bool = False) -> bool:
        self.seq += 1
        self.dirty = False
        self.write_at = None
        data: dict[str, Any] = {"phase": self.phase}
        if self.reason:
            data["reason"] = self.reason
        if self.message:
            data["message"] = self.message
        data["startTime"] = self.start_time
        if self.inits:
            data["initContainerStatuses"] = [c.wire() for c in self.inits]
        data["containerStatuses"] = [c.wire() for c in self.mains]
        processes = {c.name: c.record() for c in self.running()}
        record = statusfile.supervised(
            data, seq=self.seq, supervisor=self.owner, processes=processes, launch=self.launch
        )
        spare, self.spare = self.spare, None
        try:
            ok = statusfile.write(self.dir, record, fsync=self.fsync, claim=claim, spare=spare)
        except OSError as exc:
            if claim or not oserrors.is_full(exc):
                raise
            self._retry(exc)
            return False
        self.retry_at = None
        if ok and not claim:  # the claim: the next write follows within COALESCE
            podfs.notify(self.events, self.dir)
        return ok


def _say(message: str) -> None:
    print(f"{podfs.utc_now()} vcflow supervisor {os.getpid()}: {message}", file=sys.stderr)
    sys.stderr.flush()


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(OSError):  # ESRCH: the group is empty
        os.killpg(pgid, sig)
