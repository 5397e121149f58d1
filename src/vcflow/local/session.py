"""One local run of applied JobFlows (and vcjobs applied alone): the controllers and the
local runtime on one store, in this process, until every flow is Succeed or Failed and no
pod process of theirs is left running.

- **Only its flows.** The runtime runs the vcjobs of the run's flows and those applied
  alone (`Progress.follows`): other flows of the state directory (one `vcflow resubmit`
  created, one applied earlier) are left as they are — their pods neither started nor
  adopted — for a run that names them. Pods deleted meanwhile are the exception: their
  processes are stopped and the run waits for them, naming them.

- **Nothing is left unsupervised.** A flow that failed while other jobs of it still run is
  not the end of the run: it waits for them and records their outcome (nothing new starts:
  a Failed flow creates no vcjob), as Argo's fail-fast does; with `fail_fast` it terminates
  them instead (TerminateJob, as `vcflow terminate vcjob`). Pods deleted by the run (a
  stopped or deleted flow) are waited for until their processes ended.
- **A stop** (Ctrl-C, SIGTERM: `stop()`) terminates the running pods: jobs of flows that are
  still running lose their pods as on an eviction — the vcjobs show Pending again and a
  later run runs them — while jobs of flows that had ended are terminated for good. The
  timeout does the same. Either way the job statuses say what happened before the run
  returns: no vcjob stays Running without a pod.
- **A suspended vcjob** (`vcflow suspend vcjob`) waits for a person: the run goes on
  following it — it is not stalled, however long nothing moves — says once what resumes
  it, and goes on when `vcflow resume vcjob` (another shell) resumes it.

The caller holds the state directory's controller lock (`statedir`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vcflow.api import names as apinames
from vcflow.api.command import command_for
from vcflow.api.errors import AlreadyExists, NotFound
from vcflow.api.phases import Action, FlowPhase
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.local.flowwatch import FlowWatch
from vcflow.local.progress import NOT_CREATED, FlowProgress, JobProgress, Progress
from vcflow.local.result import FAILED_PHASES, RunResult, build, failure_of
from vcflow.podserver.logrotate import KUBELET, Limits
from vcflow.reconcile.vcjob.resources import UNLIMITED, Capacity
from vcflow.runtime.executor import Executor
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.run import CREATE_BATCH, STOP_GRACE, Ending, Loop
from vcflow.runtime.status import PodHandle
from vcflow.store.base import Store

Note = Callable[[str], None]
#: seconds a run may sit with nothing running, nothing due, before it is stalled
STALL_AFTER = 2.0
#: the same while the controllers retry creates no retry will make succeed (`_stalled`)
STALL_RETRYING_AFTER = 5.0
DEPENDENCIES = "Dependencies"
#: why an entry waits when only a change from outside the run would let it start
FUTILE = frozenset({"CreateFailed", "TemplateNotFound", "NameConflict"})
#: seconds the pods get to end on SIGTERM when the timeout passes
TIMEOUT_GRACE = 2.0
#: seconds between two reads of what a flow using retries, deadlines, outcomes or probes says
#: of its entries (without a live view too: its lines say when a retry waits)
FEATURES_REFRESH = 1.0


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Options:
    capacity: Capacity = UNLIMITED
    gpus: tuple[str, ...] = ()  # the GPU device indices the pods are given (`resources.Machine`)
    timeout: float | None = None
    fail_fast: bool = False
    stop_grace: float = STOP_GRACE
    poll: float = 0.1
    log_limits: Limits = KUBELET  # container log rotation (`--container-log-max-size`, ...)


class LocalRun:
    def __init__(
        self,
        store: Store,
        state_dir: Path,
        progress: Progress,
        options: Options | None = None,
        *,
        note: Note | None = None,
    ) -> None:
        self.store, self.state_dir, self.progress = store, state_dir, progress
        self.options = options or Options()
        self.note = note or (lambda _text: None)
        self.watch = FlowWatch(store, progress.flows)
        self._failed_handled: set[str] = set()
        self._waiting_said = False
        self.runner: PodRunner | None = None
        self.executor: Executor[PodHandle] | None = None
        self.controllers: Manager | None = None
        self._idle_since: float | None = None
        #: the suspended jobs the run said it waits for (with when each was suspended)
        self._suspended_said: set[tuple[str, float | None]] = set()
        self._futile_read = 0.0
        self._features_read = 0.0

    def run(
        self, *, stop: Callable[[], bool] = _never, on_tick: Callable[[], None] | None = None
    ) -> RunResult:
        runner = PodRunner(self.state_dir, log_limits=self.options.log_limits)
        executor = Executor(
            self.store,
            runner,
            capacity=self.options.capacity,
            gpus=self.options.gpus,
            observer=self._observe,
            follows=self.progress.follows,
        )
        self.runner, self.executor = runner, executor
        terminated = 0
        try:
            self.progress.resyncing = True
            executor.start()
            self.progress.resyncing = False
            controllers = Manager(
                self.store,
                options=ControllerOptions(
                    create_batch=CREATE_BATCH, capacity=self.options.capacity
                ),
            )
            self.controllers = controllers
            loop = Loop(self.store, controllers, executor, poll=self.options.poll, on_tick=on_tick)
            outcome = loop.run(
                self._done,
                timeout=self.options.timeout,
                stop=self._stopping(stop),
                stop_grace=self.options.stop_grace,
            )
            ending, terminated = outcome.ending, outcome.terminated
            if ending is Ending.TIMEOUT:
                self.progress.freeze("the timeout passed: its running pods were terminated")
                terminated = self._stop_jobs(TIMEOUT_GRACE, "the timeout passed")
            if ending is not Ending.DONE:
                executor.settle(schedule=False)  # what the stop did to the jobs, recorded
            controllers.settle()  # every flow status written before leaving
            self._refresh_flows()
            self.refresh_waiting(every=True)
            if on_tick is not None:
                on_tick()
        finally:
            runner.stop_server()  # the pods have ended; a later run starts a new one
            runner.close()
        return build(self.progress, self.store, runner.state_dir, ending, terminated)

    def _observe(self, job: VCJob, deleted: bool) -> None:
        """The runtime's observer: the progress, and for a job that just failed, the
        container that failed it (for the live view: read once, when it fails)."""
        row = self.progress.observe(job, deleted)
        if row is not None and row.phase in FAILED_PHASES and not row.failure and self.runner:
            found = failure_of(self.store, self.runner.state_dir, row.namespace, row.job, tail=0)
            row.failure = str(found) if found is not None else ""

    def refresh_waiting(
        self,
        *,
        every: bool = False,
        featured: bool = False,
        only: set[apinames.ObjectKey] | None = None,
    ) -> None:
        """Read why each unfinished flow's entries wait — `every` flow's, at the end; with
        `featured`, only those using the flow features; with `only`, those of these keys
        (O(entries) per flow: for a live view, once in a while)."""

        def wanted(row: FlowProgress) -> bool:
            if row.deleted or (featured and not row.featured):
                return False
            if only is not None and row.key not in only:
                return False
            return every or not row.ended or any(j.active for j in row.jobs.values())

        self.progress.read_waiting(self.store, filter(wanted, self.progress.flows.values()))

    # -- when the run is over -------------------------------------------------------------

    def _refresh_flows(self) -> None:
        if self.watch.refresh():
            self.progress.update_flows(self.watch.current())
        for key in self.watch.gone():
            self.progress.flow_deleted(key)

    def _done(self) -> bool:
        self._refresh_flows()
        now = time.monotonic()
        if now - self._features_read >= FEATURES_REFRESH:
            self._features_read = now
            self.refresh_waiting(featured=True)
        elif self.watch.touched:  # (a flow's status is written at most every few 100 ms)
            self.refresh_waiting(featured=True, only=self.watch.touched)
        if self.options.fail_fast:
            self._fail_fast()
        assert self.executor is not None
        if not self.progress.all_ended():
            return self._stalled()
        if self.executor.busy():
            self._say_waiting()
            return False
        return True

    def _stalled(self) -> bool:
        """Nothing runs, no timer is set and no controller has work due, for `STALL_AFTER`
        seconds, while a flow has not ended: nothing will move any more (a job that creates
        no pods, one that can never fit, an entry whose template is missing). The run ends
        and says why rather than waiting forever."""
        assert self.executor is not None and self.controllers is not None
        quiet = not self.executor.busy() and self.executor.next_wakeup() is None
        retrying = quiet and self.controllers.next_due() is not None
        if retrying and not self._only_futile_retries():
            quiet = False
        now = time.monotonic()
        if not quiet:
            self._idle_since = None
            return False
        if self._waiting_for_resume():
            self._idle_since = None
            return False
        if self._idle_since is None:
            self._idle_since = now
            return False
        if now - self._idle_since < (STALL_RETRYING_AFTER if retrying else STALL_AFTER):
            return False
        self.refresh_waiting(every=True)
        self.note("nothing is running and nothing can start: " + self._why_stuck())
        return True

    def _waiting_for_resume(self) -> bool:
        """Does a suspended job wait for a person (`vcflow resume vcjob`)? Said once per
        suspension (a job suspended again is said again), when nothing else moves (O(jobs):
        only then)."""
        suspended = self.progress.suspended()
        seen = {(j.job, j.finished) for j in suspended}
        new = [j for j in suspended if (j.job, j.finished) not in self._suspended_said]
        self._suspended_said = seen
        if new:
            shown = ", ".join(f"{j.flow}/{j.entry}" if j.flow else j.job for j in new[:5])
            more = " ..." if len(new) > 5 else ""
            how = new[0].message or "vcflow resume vcjob NAME resumes it"
            self.note(f"waiting for {shown}{more} to be resumed (suspended): {how}")
        return bool(suspended)

    def _only_futile_retries(self) -> bool:
        """What the controllers have due are retries that nothing here will make succeed:
        no job runs and every entry not created waits for a create the API refused, a
        template, a name (or for such an entry: `Dependencies`), none for a timer of its
        own. Read from the flows at most once a second."""
        if any(j.active for j in self.progress.every_job()):
            return False
        now = time.monotonic()
        if now - self._futile_read >= 1.0:
            self._futile_read = now
            self.refresh_waiting(every=True)
        waiting = [j for j in self.progress.every_job() if j.phase == NOT_CREATED]
        reasons = {j.waiting.partition(":")[0] for j in waiting}
        return bool(reasons & FUTILE) and reasons <= FUTILE | {DEPENDENCIES}

    def _why_stuck(self) -> str:
        reasons = []
        for job in self.progress.every_job():
            if job.ended or job.deleted:
                continue
            if job.skipped or job.backoff:
                continue
            if job.phase == NOT_CREATED:
                if job.waiting and not job.waiting.startswith(DEPENDENCIES):
                    reasons.append(f"{job.job} waits ({job.waiting})")
            elif job.reason:
                reasons.append(f"{job.job} is {job.phase} ({job.reason}: {job.message})")
            else:
                reasons.append(f"{job.job} is {job.phase} with no pod left to run")
        shown = "; ".join(reasons[:5]) + ("; ..." if len(reasons) > 5 else "")
        return shown or "the flows wait for jobs that will not run"

    def _say_waiting(self) -> None:
        if self._waiting_said:
            return
        self._waiting_said = True
        running = [j for j in self.progress.every_job() if j.active]
        if running:
            listed = ", ".join(j.job for j in running[:5]) + (" ..." if len(running) > 5 else "")
            how = (
                "being terminated (--fail-fast)"
                if self.options.fail_fast
                else "--fail-fast terminates them; Ctrl-C stops them"
            )
            self.note(f"waiting for {len(running)} running job(s) to end: {listed} ({how})")
        else:
            assert self.executor is not None
            alive, deleted = self.executor.busy_pods()
            parts = [f"{len(deleted)} deleted pod(s): {_listed(deleted)}"] if deleted else []
            if alive:
                parts.append(f"{len(alive)} pod(s) of ended jobs: {_listed(alive)}")
            self.note(f"waiting for the processes of {' and '.join(parts)} to end")

    def _fail_fast(self) -> None:
        for flow in self.progress.flows.values():
            if flow.phase != FlowPhase.FAILED or flow.key in self._failed_handled:
                continue
            self._failed_handled.add(flow.key)
            doomed = self.progress.active_jobs(flow)
            if doomed:
                self.note(f"flow {flow.name} failed: terminating {_jobs(doomed)} (--fail-fast)")
                self._terminate(doomed, f"--fail-fast: flow {flow.name} failed")

    def _terminate(self, jobs: list[JobProgress], why: str) -> None:
        """Send each job a TerminateJob; `why` is what the run's table says of it (the job's
        status keeps no reason: Volcano's never does, volcano-vcjob section 7)."""
        for row in jobs:
            try:
                job = self.store.get(VCJob, row.namespace, row.job)
            except NotFound:
                continue
            try:
                self.store.create(command_for(job, Action.TERMINATE_JOB))
                row.ended_by = f"{Action.TERMINATE_JOB} command ({why})"
            except AlreadyExists:
                continue

    # -- stopping -------------------------------------------------------------------------

    def _stopping(self, stop: Callable[[], bool]) -> Callable[[], bool]:
        """`stop`, and on its first True the jobs of ended flows are terminated for good
        (the others lose their pods as on an eviction: `Loop`)."""
        said = [False]

        def check() -> bool:
            if not stop():
                return False
            if not said[0]:
                said[0] = True
                ended = [
                    j for f in self.progress.flows.values() if f.ended for j in f.jobs.values()
                ]
                doomed = [j for j in ended if j.active]
                self._terminate(doomed, "the run was stopped")
                self.note(
                    f"stopping: terminating the running pods ({self.options.stop_grace:g}s "
                    "to end on SIGTERM, then SIGKILL)"
                )
            return True

        return check

    def _jobs_of_ended_flows(self) -> list[JobProgress]:
        """The jobs still running of flows that have ended: a stop ends them for good."""
        flows = self.progress.flows.values()
        return [j for f in flows if f.ended for j in f.jobs.values() if j.active]

    def _stop_jobs(self, grace: float, why: str) -> int:
        assert self.executor is not None
        self._terminate(self._jobs_of_ended_flows(), f"the run was stopped: {why}")
        self.note(f"{why}: terminating the running pods ({grace:g}s to end on SIGTERM)")
        return self.executor.terminate_all(grace, grace + 5.0, evict=True)


def _listed(keys: list[apinames.ObjectKey]) -> str:
    return ", ".join(keys[:5]) + (" ..." if len(keys) > 5 else "")


def _jobs(rows: list[JobProgress]) -> str:
    names = ", ".join(r.job for r in rows[:5]) + (" ..." if len(rows) > 5 else "")
    return f"{len(rows)} running job(s): {names}"
