"""What a local run has seen of the flows and vcjobs it runs: each job's phase and times, in
flow order, each flow's phase, and why an entry waits.

`Progress.observe` is the runtime's observer (every vcjob change, deletions included, so a
flow with `jobRetainPolicy: delete` still has its jobs at the end; a vcjob's attempt from its
`vcflow.io/attempt`); flow phases come from `FlowWatch`, waiting reasons — a retry's backoff,
a Skipped entry — from the flows' conditions. `on_change` hears each phase change (the CLI
prints them when it shows no live view). Times are wall-clock seconds; for what happened
before this run (a rerun), the stored timestamps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FINISHED_JOB_PHASES, FlowPhase, JobPhase
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import outlook
from vcflow.reconcile.fanout import FOR_EACH
from vcflow.store.base import Store

#: vcjob phases after which nothing more happens to a job by itself
JOB_ENDED = frozenset({*FINISHED_JOB_PHASES, JobPhase.ABORTED})
#: the phases of a suspended vcjob (`vcflow suspend vcjob`, AbortJob): it waits for a person
#: (`vcflow resume vcjob`), so a run goes on following it
SUSPENDED = frozenset({JobPhase.ABORTING, JobPhase.ABORTED})
FLOW_ENDED = frozenset({FlowPhase.SUCCEED, FlowPhase.FAILED})
#: `JobProgress.phase` of a flow entry whose vcjob does not exist (yet)
NOT_CREATED = ""
#: `FlowProgress.phase` of a flow deleted during the run
DELETED = "Deleted"

#: an end recorded this much earlier than it was seen happened while no one watched
STALE = 1.0
#: `phase_text` of an entry whose retry waits, and of one skipped (docs/flow-features.md)
BACKOFF = "Backoff"
SKIPPED = "Skipped"
ATTEMPT_ANNOTATION = "vcflow.io/attempt"

Change = Callable[[str, str, float], None]  # (what, new phase, seconds since the run began)


@dataclass
class JobProgress:
    """One vcjob of the run: a flow entry's (created or not yet) or one applied alone."""

    namespace: str
    job: str  # the vcjob's name
    entry: str  # the flow entry's name (the vcjob's name for a vcjob applied alone)
    flow: str = ""  # the flow's name ("" for a vcjob applied alone)
    phase: str = NOT_CREATED
    started: float | None = None
    finished: float | None = None
    deleted: bool = False
    reason: str = ""  # the job's latest condition reason (Unschedulable, ...)
    message: str = ""
    waiting: str = ""  # why an entry not created yet waits (from the flow's condition)
    failure: str = ""  # for a failed job: the container that failed it, in one line
    #: for a job this run terminated: the command and why (`--fail-fast: flow f failed`)
    ended_by: str = ""
    attempt: int = 1  # of its vcjob (a retried entry's vcjob is created again)
    backoff: str = ""  # a retry waits: the condition's message
    next_attempt: float | None = None  # when that retry is due
    skipped: str = ""  # why the entry was skipped (its condition's reason and message)
    verdict: str = ""  # why the flow says its outcome is what it is (DeadlineExceeded, ...)
    deadline: int | None = None  # the entry's activeDeadlineSeconds (each attempt)
    #: when the entry's first attempt started (`started` is the current attempt's)
    first_started: float | None = None
    #: when the current attempt first ran (went Running), and the entry's first attempt:
    #: a job's time runs from then, as its `runningDuration` (describe, the ETA) does
    ran: float | None = None
    first_ran: float | None = None
    #: its times come from stored timestamps, which are to the second (a rerun)
    coarse: bool = False
    #: the `for` entry whose item it is (docs/flow-features.md section 19), and its index
    item_of: str = ""
    item_index: int = -1

    @property
    def shown_phase(self) -> str:
        """The vcjob's phase, or `Backoff` / `Skipped` for what the flow says of the entry."""
        return SKIPPED if self.skipped else BACKOFF if self.backoff else self.phase

    @property
    def ended(self) -> bool:
        return self.phase in JOB_ENDED

    @property
    def suspended(self) -> bool:
        """Suspended (AbortJob): waits for a resume, shown with the command that does it."""
        return self.phase in SUSPENDED and not self.deleted

    @property
    def active(self) -> bool:
        """Created and not ended."""
        return self.phase != NOT_CREATED and not self.ended and not self.deleted

    @property
    def began(self) -> float | None:
        """When the current attempt's time starts: when it first ran; one that has not run
        yet (Pending: waiting for its pods, or for a run) from its creation."""
        ran = ran_before(self.ran, self.finished)
        return ran if ran is not None else self.started

    def elapsed(self, now: float) -> float | None:
        """The current attempt's time."""
        if self.began is None:
            return None
        return max(0.0, (self.finished if self.finished is not None else now) - self.began)

    def total(self, now: float) -> float | None:
        """The whole entry's time: from its first attempt's start to its last one's end."""
        first = ran_before(self.first_ran, self.finished)
        first = first if first is not None else self.first_started
        first = first if first is not None else self.began
        if first is None:
            return None
        return max(0.0, (self.finished if self.finished is not None else now) - first)


@dataclass
class FlowProgress:
    namespace: str
    name: str
    phase: str = ""
    started: float = 0.0
    finished: float | None = None
    ended_before: bool = False  # it had ended before this run began
    coarse: bool = False  # its times are stored timestamps', to the second (`stamped`)
    deleted: bool = False  # deleted during the run
    jobs: dict[str, JobProgress] = field(default_factory=dict)  # by vcjob name, flow order
    deadline: float | None = None  # when the flow's activeDeadlineSeconds passes
    reason: str = ""  # why it ended so (its status' state.reason and message)
    #: it uses retries, deadlines, outcomes or probes: what it says of its entries is read
    #: while the run goes (`LocalRun.refresh_waiting`), with or without a live view
    featured: bool = False
    #: its `for` entries: their vcjob name (which no vcjob has) → entry; an item's vcjob is
    #: `<that name>-<index>`, followed as it comes
    groups: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> names.ObjectKey:
        return names.object_key(self.namespace, self.name)

    @property
    def ended(self) -> bool:
        return self.deleted or self.phase in FLOW_ENDED

    def elapsed(self, now: float) -> float:
        return max(0.0, (self.finished if self.finished is not None else now) - self.started)

    def in_order(self) -> list[JobProgress]:
        """The rows in flow order, a `for` entry's items right after it by index (`jobs`
        holds them in the order they were first seen: after every entry)."""
        place = {row.entry: n for n, row in enumerate(self.jobs.values()) if not row.item_of}
        return sorted(
            self.jobs.values(), key=lambda r: (place.get(r.item_of or r.entry, 0), r.item_index)
        )


def _stamp(text: str | None, default: float | None) -> float | None:
    if not text:
        return default
    try:
        return clocks.parse_rfc3339(text).timestamp()
    except ValueError:
        return default


class Progress:
    def __init__(
        self,
        flows: Iterable[JobFlow],
        jobs: Iterable[VCJob] = (),
        *,
        on_change: Change | None = None,
        now: Callable[[], float] = time.time,
        stamped: bool = False,
    ) -> None:
        self.now = now
        self.begun = now()
        self.on_change = on_change
        self.resyncing = False  # jobs seen now existed before this run
        #: another process runs the flows (`vcflow run -f` against a server): what is seen
        #: comes late, by the API, so every time is the objects' own, to the second
        self.stamped = stamped
        self.frozen = False  # the run has ended: what the stop does to the jobs is not news
        #: each vcjob's object as last observed (None once it finished: a wide flow's ended
        #: vcjobs are not kept), its uid and its row (None: not followed)
        self._seen: dict[names.ObjectKey, tuple[VCJob | None, str, JobProgress | None]] = {}
        self.flows: dict[names.ObjectKey, FlowProgress] = {}
        for flow in flows:
            self._add_flow(flow)
        self.jobs: dict[names.ObjectKey, JobProgress] = {
            job.key: JobProgress(job.namespace, job.name, job.name) for job in jobs
        }

    def _add_flow(self, flow: JobFlow) -> None:
        created = _stamp(flow.metadata.creation_timestamp, None)
        if created is None or (created > self.begun - STALE and not self.stamped):
            created = self.begun  # just applied (its timestamp is to the second)
        row = FlowProgress(flow.namespace, flow.name, flow.phase or "", created)
        row.coarse = self.stamped
        if row.ended:  # a rerun of a flow that had ended: its time is its jobs' span
            row.ended_before = True
        spec = flow.spec
        seconds = spec.active_deadline_seconds if spec is not None else None
        stamp = _stamp(flow.metadata.creation_timestamp, None)
        if seconds and stamp is not None:
            row.deadline = stamp + seconds
        row.featured = bool(seconds or (spec is not None and spec.retry_policy))
        for entry in flow.flows:
            job = names.job_name(flow.name, entry.name)
            row.jobs[job] = JobProgress(flow.namespace, job, entry.name, flow.name)
            row.jobs[job].deadline = entry.active_deadline_seconds
            dep = entry.depends_on
            if entry.for_each is not None:
                row.groups[job] = entry.name
            row.featured |= bool(
                entry.for_each is not None
                or entry.when is not None
                or entry.switch is not None
                or entry.retry_policy
                or entry.active_deadline_seconds
                or entry.probe
                or (dep is not None and dep.outcome)
            )
        # what the flow recorded of its jobs (those deleted since are seen no more)
        for item in outlook.records(flow).get("jobStatusList") or []:
            known = row.jobs.get(item.get("name"))
            if known is not None and item.get("state"):
                known.phase = item["state"]
                known.started = _stamp(item.get("startTimestamp"), None)
                known.finished = _stamp(item.get("endTimestamp"), None) if known.ended else None
                known.coarse = True
        self.flows[row.key] = row

    # -- observing ------------------------------------------------------------------------

    def freeze(self, why: str) -> None:
        """The run ended before its flows did (the timeout): keep every phase and time as
        they are now, and say `why` of each flow and job not ended, so the report shows what
        had run rather than the Pending the terminated pods leave behind."""
        now = self.now()
        self.frozen = True
        self.now = lambda: now
        for flow in self.flows.values():
            if not flow.ended:
                flow.reason = why
        for job in self.every_job():
            if job.active:
                job.verdict = why

    def observe(self, job: VCJob, deleted: bool) -> JobProgress | None:
        """The runtime's observer: `job` changed (or, `deleted`, went away); its row, None
        for a vcjob this run does not follow."""
        if self.frozen:
            return None
        key = job.key
        seen = self._seen.get(key)
        if seen is not None and seen[0] is job and not deleted:
            return seen[2]  # the same object again: nothing changed (the runtime calls
            # its observer at every change to the job's record, its timers included)
        same = seen is not None and seen[1] == job.metadata.uid
        row = seen[2] if seen is not None and same else self._row(job)  # (same vcjob, same row)
        kept = None if job.phase in FINISHED_JOB_PHASES else job
        self._seen[key] = (kept, job.metadata.uid, row)
        if row is None:
            return None
        now = self.now()
        if deleted:
            row.deleted = True
            del self._seen[key]
            return row
        attempt = _attempt(job)
        fresh = attempt != row.attempt
        if fresh:  # the vcjob of the entry's next attempt (a retry)
            row.attempt, row.backoff, row.next_attempt = attempt, "", None
            row.ended_by = ""
            row.phase = NOT_CREATED
        if row.deleted or row.started is None or row.phase == NOT_CREATED:
            row.deleted = False
            created = _stamp(job.metadata.creation_timestamp, now)
            # (a job seen as it is created is timed here: its timestamp is to the second)
            stored = (self.resyncing or self.stamped) and created is not None
            row.started = created if stored and created is not None else now
            row.coarse = stored
            row.ran = None
            if row.first_started is None or attempt == 1:
                row.first_started = row.started
                row.first_ran = None
        state = job.status.state if job.status else None
        phase = job.phase or JobPhase.PENDING
        row.reason, row.message = _condition_reason(job) or (
            (state.reason or "", state.message or "") if state is not None else ("", "")
        )
        if phase in SUSPENDED and not row.reason:
            where = "" if job.namespace == names.DEFAULT_NAMESPACE else f" -n {job.namespace}"
            row.reason = "Suspended"
            row.message = f"vcflow resume vcjob {job.name}{where} resumes it"
        if row.ran is None and phase not in (JobPhase.PENDING, *SUSPENDED):
            self._ran(row, job, now)
        if phase == row.phase:
            return row
        row.phase = phase
        row.failure = ""
        if phase in JOB_ENDED:
            # when the job ended, as the runtime recorded it: a job whose pods ended while
            # no runtime ran ended then, not when this run saw it (the record is to the
            # second: a fresh end is timed here, to the millisecond)
            when = _stamp(state.last_transition_time if state else None, now)
            stale = when is not None and (self.stamped or when < now - STALE)
            row.finished = when if stale and when is not None else now
            row.coarse |= row.finished != now
        else:
            row.finished = None
        said = f"{phase} (attempt {row.attempt})" if row.attempt > 1 else phase
        self._said(f"{row.flow}/{row.entry}" if row.flow else f"vcjob {row.job}", said, now)
        return row

    def _ran(self, row: JobProgress, job: VCJob, now: float) -> None:
        """The job runs (or has run): its time starts when it went Running — seen now, or
        as its condition records it (to the second) when it ran before this run saw it."""
        running = job.phase == JobPhase.RUNNING
        stamp = _stamp(_running_since(job), None)
        if running and not (self.resyncing or self.stamped):
            row.ran, row.coarse = now, False  # (timed here, to the millisecond)
        elif stamp is None:
            row.ran = None  # (no Running recorded: from its creation)
        else:
            fine = not row.coarse and row.started is not None
            row.ran = max(stamp, row.started) if fine and row.started is not None else stamp
            row.coarse |= row.ran == stamp
        if row.first_ran is None:
            row.first_ran = row.ran

    def follows(self, job: VCJob) -> bool:
        """Is `job` one of this run's: applied alone, or a vcjob of one of its flows (its
        controller owner, by name: the flow the manifests name, whichever object it is)?
        `vcflow run` runs only those (`runtime.executor.Executor(follows=...)`)."""
        return self._row(job) is not None

    def _row(self, job: VCJob) -> JobProgress | None:
        alone = self.jobs.get(job.key)
        if alone is not None:
            return alone
        ref = job.metadata.controller_ref()
        if ref is None or ref.kind != "JobFlow":
            return None
        flow = self.flows.get(names.object_key(job.namespace, ref.name))
        if flow is None:
            return None
        return flow.jobs.get(job.name) or _item_row(flow, job.name)

    def update_flows(self, phases: Mapping[names.ObjectKey, str]) -> None:
        """Take in each flow's phase (by key; `FlowWatch.current`)."""
        if self.frozen:
            return
        now = self.now()
        for key, seen in phases.items():
            row = self.flows.get(key)
            if row is None:
                continue
            phase = seen or FlowPhase.PENDING
            if phase == row.phase:
                continue
            row.phase = phase
            if phase in FLOW_ENDED:
                row.finished = now
            row.ended_before = False
            self._said(f"jobflow {row.name}", phase, now)

    def flow_deleted(self, key: names.ObjectKey) -> None:
        """The flow was deleted during the run (its jobs go with it)."""
        row = self.flows.get(key)
        if row is None or row.deleted or self.frozen:
            return
        row.deleted = True
        row.phase = DELETED
        now = self.now()
        row.finished = now
        self._said(f"jobflow {row.name}", DELETED, now)

    def update_waiting(self, flow: JobFlow) -> None:
        """Take in what the flow says of its entries: why they wait (its `Waiting`
        conditions, row 18), a retry that waits (`Backoff`), a `Skipped` entry, the attempt."""
        row = self.flows.get(flow.key)
        if row is None or self.frozen:
            return
        status = outlook.records(flow)
        conditions: dict[str, Any] = status.get("conditions") or {}
        items = {i.get("name"): i for i in status.get("jobStatusList") or []}
        state = status.get("state") or {}
        if state.get("reason"):
            reason, message = state["reason"], state.get("message")
            row.reason = f"{reason}: {message}" if message else reason
        now = self.now()
        for job in row.jobs.values():
            cond, item = conditions.get(job.job), items.get(job.job)
            if item is not None and (item.get("attempt") or 1) > job.attempt:
                job.attempt = item.get("attempt") or 1
            before = job.shown_phase
            job.waiting = job.backoff = job.skipped = job.verdict = ""
            job.next_attempt = None
            if cond is None:
                continue
            reason, message = cond.get("reason") or "", cond.get("message") or ""
            cond_phase = cond.get("phase") or ""
            if reason == FOR_EACH:  # a `for` entry: its items' counts (no vcjob of its own)
                job.phase, job.verdict = cond_phase, message
            elif cond_phase == SKIPPED:
                job.skipped = f"{reason}: {message}" if message else reason
            elif cond_phase == "Waiting" and reason == BACKOFF:
                job.backoff = message
                due = item.get("nextAttemptTime") if item is not None else None
                job.next_attempt = _stamp(due, None)
            elif cond_phase == "Waiting":
                job.waiting = f"{reason}: {message}" if reason and message else reason or message
            elif reason:
                job.verdict = f"{reason}: {message}" if message else reason
                if cond_phase == "Failed" and not job.phase:
                    job.phase = "Failed"  # (no vcjob: its `when` failed it, section 13)
            if job.shown_phase != before and job.shown_phase in (BACKOFF, SKIPPED, "Failed"):
                why = job.backoff or message
                self._said(f"{row.name}/{job.entry}", f"{job.shown_phase}: {why}", now)

    def read_waiting(self, store: Store, rows: Iterable[FlowProgress]) -> None:
        """`update_waiting` from the flow of each of `rows` as `store` holds it now; one
        deleted meanwhile is passed over (`flow_deleted` hears of it)."""
        for row in rows:
            try:
                flow = store.get(JobFlow, row.namespace, row.name)
            except NotFound:
                continue
            self.update_waiting(flow)

    def _said(self, what: str, phase: str, now: float) -> None:
        if self.on_change is not None:
            self.on_change(what, phase, now - self.begun)

    # -- questions --------------------------------------------------------------------------

    def all_ended(self) -> bool:
        """Every flow ended and every vcjob applied alone ended (or is gone); a suspended
        one has not: it waits for a resume (a suspended flow job keeps its flow Running)."""
        flows = all(f.ended for f in self.flows.values())
        return flows and all((j.ended and not j.suspended) or j.deleted for j in self.jobs.values())

    def suspended(self) -> list[JobProgress]:
        """The suspended jobs of flows that have not ended, and those applied alone: what
        waits for a person to resume it."""
        flows = [j for f in self.flows.values() if not f.ended for j in f.jobs.values()]
        return [j for j in [*flows, *self.jobs.values()] if j.suspended]

    def active_jobs(self, flow: FlowProgress) -> list[JobProgress]:
        return [j for j in flow.jobs.values() if j.active]

    def every_job(self) -> list[JobProgress]:
        """Every job, flow by flow in flow order, then the vcjobs applied alone."""
        return [j for f in self.flows.values() for j in f.jobs.values()] + list(self.jobs.values())

    def flow_span(self, flow: FlowProgress) -> float:
        """How long the flow ran: from when its first job went Running (as a job's own time
        runs; a flow made before the run does not count its wait: the stored views have no
        flow time but its age) until its last job ended (a failed flow's other jobs may run
        on; a rerun's flow had ended before: its age would be wrong). A flow none of whose
        jobs has run yet, from its creation."""
        now = self.now()
        found = (ran_before(j.first_ran, j.finished) for j in flow.jobs.values())
        ran = [r for r in found if r is not None]
        start = max(flow.started, min(ran)) if ran else flow.started
        ends = [j.finished for j in flow.jobs.values() if j.finished is not None]
        if any(j.active for j in flow.jobs.values()) or not flow.ended:
            end = now
        else:  # it ended with its last job (which may have ended while no one watched)
            end = max(ends, default=start if flow.ended_before else flow.finished or now)
        return max(0.0, end - start)


def ran_before(ran: float | None, end: float | None) -> float | None:
    """A job's Running time, unless it is after the job's end: a Running the store records
    only after the process ended (the run that saw it start was killed, a rerun caught up)
    says nothing of when it ran, so its time counts from its creation."""
    return None if ran is not None and end is not None and ran > end else ran


def _attempt(job: VCJob) -> int:
    text = job.metadata.annotations.get(ATTEMPT_ANNOTATION, "")
    return int(text) if text.isdigit() and int(text) > 1 else 1


def _running_since(job: VCJob) -> str | None:
    """When the job first went Running, as its conditions record it (None if never)."""
    for condition in (job.status.conditions if job.status else None) or []:
        if condition.status == JobPhase.RUNNING:
            return condition.last_transition_time
    return None


def _condition_reason(job: VCJob) -> tuple[str, str] | None:
    """The reason and message on the job's current phase condition (`Unschedulable`...)."""
    conditions = (job.status.conditions if job.status else None) or []
    if not conditions:
        return None
    last = conditions[-1]
    extra = last.model_extra or {}
    reason = extra.get("reason")
    if not reason:
        return None
    return str(reason), str(extra.get("message") or "")


def _item_row(flow: FlowProgress, job: str) -> JobProgress | None:
    """The row of an item's vcjob (`<flow>-<entry>-<index>` of a `for` entry), made when
    it is first seen; None for any other vcjob."""
    for group, entry in flow.groups.items():
        rest = job[len(group) + 1 :] if job.startswith(group + "-") else ""
        if rest.isdigit():
            row = JobProgress(flow.namespace, job, f"{entry}-{rest}", flow.name)
            row.item_of, row.item_index = entry, int(rest)
            flow.jobs[job] = row
            return row
    return None
