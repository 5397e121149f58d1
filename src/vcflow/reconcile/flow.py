"""The JobFlow reconcile: which vcjobs to create, delete or terminate, and the status to write.

`FlowIndex` holds one flow's entries with counted readiness (graphlib style): a job's change
touches only that job's successors, so an event costs O(its edges), not O(flow). `plan()`
builds an index from scratch (first sight, resync, restart); `observe`/`forget` + `decide`
advance it one job at a time; both must give the same decisions and status (property test).

Each entry has a *state*: no job yet; its job `LIVE`; `BACKOFF` (a retry waits, or is due:
`renew`); or an outcome — `COMPLETED`, `FAILED` (for good), `SKIPPED`. The dependency of an
entry on a target is met or dead by the target's outcome and the entry's `outcome` (or met by
a probe); a dead dependency skips the entry, and a skip propagates (docs/flow-features.md).
Retries, deadlines and probe rounds are timers (`timers.Timers`), fired by `decide(now)`.

Pure: no I/O; time arrives as `now`. SEMANTICS rows 4–9, 12, 16, 18, 20 are decided here;
the status is rendered by `flowstatus`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from vcflow.api import clock, names
from vcflow.api.jobflow import JobFlow, JobFlowStatus, Probe
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import (
    FINISHED_JOB_PHASES,
    DependencyOutcome,
    FlowPhase,
    JobPhase,
    RetainPolicy,
    RetryStrategy,
)
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import flowstatus, probes, retry, timers
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import phase as phases
from vcflow.reconcile.entries import (
    BACKOFF as BACKOFF,
)
from vcflow.reconcile.entries import (
    CREATE_FAILED as CREATE_FAILED,
)
from vcflow.reconcile.entries import (
    DEAD as DEAD,
)
from vcflow.reconcile.entries import (
    DEADLINE_ANNOTATION as DEADLINE_ANNOTATION,
)
from vcflow.reconcile.entries import (
    DEADLINE_EXCEEDED as DEADLINE_EXCEEDED,
)
from vcflow.reconcile.entries import (
    DEPENDENCIES as DEPENDENCIES,
)
from vcflow.reconcile.entries import (
    JOB_DELETED as JOB_DELETED,
)
from vcflow.reconcile.entries import (
    MET as MET,
)
from vcflow.reconcile.entries import (
    NAME_CONFLICT as NAME_CONFLICT,
)
from vcflow.reconcile.entries import (
    OPEN as OPEN,
)
from vcflow.reconcile.entries import (
    OUTCOMES as OUTCOMES,
)
from vcflow.reconcile.entries import (
    RETRIES_EXHAUSTED as RETRIES_EXHAUSTED,
)
from vcflow.reconcile.entries import (
    RETRY_ANNOTATION as RETRY_ANNOTATION,
)
from vcflow.reconcile.entries import (
    RETRY_CANCELLED as RETRY_CANCELLED,
)
from vcflow.reconcile.entries import (
    SKIPPED as SKIPPED,
)
from vcflow.reconcile.entries import (
    STOP_ANNOTATION as STOP_ANNOTATION,
)
from vcflow.reconcile.entries import (
    TEMPLATE_NOT_FOUND as TEMPLATE_NOT_FOUND,
)
from vcflow.reconcile.entries import (  # re-exported: the reasons and annotations
    WAITING as WAITING,
)
from vcflow.reconcile.entries import (
    Entry as Entry,
)
from vcflow.reconcile.entries import (
    RetryRequest as RetryRequest,
)
from vcflow.reconcile.entries import (
    State as State,
)
from vcflow.reconcile.entries import (
    contribution as contribution,
)

_FINAL = (FlowPhase.SUCCEED, FlowPhase.FAILED)


@dataclass(frozen=True)
class Plan:
    create: tuple[VCJob, ...]
    delete: tuple[str, ...]
    phase: FlowPhase
    #: `decide` stopped at its `limit`: more entries are ready, for the next decision
    more: bool = False
    #: vcjobs past their entry's deadline: the controller terminates them
    terminate: tuple[str, ...] = ()
    #: vcjobs of failed attempts whose retry is due: deleted, then `forget`, before the
    #: next attempt is created (a later decision)
    replace: tuple[str, ...] = ()


class FlowIndex:
    """Counted readiness and outcomes of one flow; rebuildable from the store at any time."""

    def __init__(self, flow: JobFlow) -> None:
        self.flow = flow
        self.entries: dict[str, Entry] = {}
        self.by_job: dict[str, Entry] = {}
        self.candidates: set[str] = set()
        #: the candidates a limited `decide` left, in flow order: the next one need not sort
        #: them again while no candidate was added (a 10,000-wide flow, 50 at a time)
        self._left: list[str] = []
        self.template_waiters: dict[str, set[str]] = {}
        self.history: dict[str, dict[str, Any]] = {}
        self._ok = self._bad = self._started = self._live = 0
        self._doomed: set[str] = set()
        self._backing: set[str] = set()  # entries in BACKOFF
        self._terminate: list[str] = []
        self._rounds: list[probes.Round] = []
        self._probe_due: dict[tuple[str, str], datetime] = {}
        self.probe_notes: dict[tuple[str, str], str] = {}
        self.timers = timers.Timers(self._valid)
        self.phase = FlowPhase(flow.phase) if flow.phase else FlowPhase.PENDING
        self.last_retry = flow.status.last_retry if flow.status else None
        self.expired = False  # the flow's activeDeadlineSeconds passed
        self.deadline_at: datetime | None = None
        self._building = True  # until plan() has seen every job: no stop verdict yet
        self._build_entries()
        self._arm_flow_deadline(None)
        self._recompute()

    def _build_entries(self) -> None:
        for i, spec_entry in enumerate(self.flow.flows):
            targets = tuple(dict.fromkeys(spec_entry.targets))
            entry = Entry(
                name=spec_entry.name,
                job=names.job_name(self.flow.name, spec_entry.name),
                index=i,
                targets=targets,
                any_of=spec_entry.strategy == "any",
                outcome=spec_entry.outcome,
                policy=retry.of(self.flow, spec_entry),
                deadline=spec_entry.active_deadline_seconds or None,
            )
            if targets and entry.outcome == DependencyOutcome.COMPLETED:
                entry.probe = spec_entry.probe
            self.entries[entry.name] = entry
            self.by_job[entry.job] = entry
        for entry in self.entries.values():
            for target in entry.targets:
                found = self.entries.get(target)
                if found is None:
                    continue
                found.successors.append(entry.name)
                if entry.outcome != DependencyOutcome.COMPLETED:
                    found.handled = True
                if entry.probe is not None:
                    found.probed_by.append(entry.name)

    # -- restoring ------------------------------------------------------------------------

    def restore(self, status: JobFlowStatus | None) -> None:
        """Remember what a previous status says of each entry's job (row 16), its attempts
        and a retry that waits."""
        if status is None:
            return
        state = status.state
        if state is not None and state.reason == DEADLINE_EXCEEDED:
            self.expired = True
        for item in status.job_status_list or []:
            self.history[item.name] = item.to_dict()
        for job, cond in (status.conditions or {}).items():
            entry = self.by_job.get(job)
            if entry is None or cond.phase == WAITING:
                continue
            if cond.phase == SKIPPED:
                entry.verdict, entry.verdict_message = cond.reason or "", cond.message or ""
                self._move(entry, State.SKIPPED, None)
                continue
            entry.condition = cond.to_dict()
            entry.verdict, entry.verdict_message = cond.reason or "", cond.message or ""
            entry.gone = True  # until a job in the store says otherwise
            self._move(entry, _settled(cond.phase or ""), cond.phase or "")
        for entry in self.entries.values():
            known = self.history.get(entry.job)
            if known is None:
                continue
            self._set_attempt(entry, int(known.get("attempt") or 1))
            entry.first_attempt = int(known.get("firstAttempt") or 1)
            phase = entry.phase if entry.phase is not None else (known.get("state") or "")
            waiting = known.get("nextAttemptTime")
            if waiting:
                entry.gone = True
                entry.ended = str(known.get("state") or "")
                entry.next_at = _time(str(waiting))
                self._move(entry, State.BACKOFF, phase)
                if entry.next_at is not None:
                    self.timers.set(entry.next_at, timers.RETRY, entry.name)
            elif entry.phase is None:
                entry.gone = True
                self._move(entry, _settled(phase), phase)

    @property
    def stopping(self) -> bool:
        return self.expired or STOP_ANNOTATION in self.flow.metadata.annotations

    def _recompute(self) -> None:
        """The flow phase from the counts (row 7); a stopped flow is Terminating while it
        still has vcjobs, then Failed (or Succeed, if everything had completed)."""
        previous = self.phase
        base = FlowPhase.PENDING if previous == FlowPhase.TERMINATING else previous
        phase = phases.next_phase(base, self.counts())
        if self._building:
            return  # the stored phase stands until every job has been seen (decide)
        if self.stopping and previous not in _FINAL and phase != FlowPhase.SUCCEED:
            phase = FlowPhase.TERMINATING if self._live else FlowPhase.FAILED
        self.phase = phase

    def _settle(self) -> None:
        """The phase, then what follows from it until nothing does: entries whose dependency
        can never be met are skipped (their successors may be next), and in a flow that has
        failed or is stopping, the retries still waiting are not made."""
        while True:
            self._recompute()
            if self._building:
                return
            if self.phase == FlowPhase.FAILED or self.stopping:
                if not self._backing:
                    return
                for name in sorted(self._backing, key=lambda n: self.entries[n].index):
                    self._cancel_retry(self.entries[name])
                continue
            if not self._doomed:
                return
            doomed, self._doomed = self._doomed, set()
            for name in sorted(doomed, key=lambda n: self.entries[n].index):
                entry = self.entries[name]
                if entry.state == State.NONE and not entry.has_job and entry.doomed():
                    self._skip(entry)

    def _set_live(self, entry: Entry, *, observed: bool, created: bool) -> None:
        """Set the entry's job flags, keeping the count of jobs that exist (or may)."""
        before = entry.observed or entry.created
        entry.observed, entry.created = observed, created
        self._live += int(observed or created) - int(before)

    # -- events -----------------------------------------------------------------------------

    def observe(self, job: VCJob, now: datetime) -> None:
        """A vcjob of this flow was seen (created or changed) with this content."""
        entry = self.by_job.get(job.name)
        if entry is None:
            return
        if not jobbuild.is_owned_by(job, self.flow):
            if not entry.observed:
                entry.reason, entry.message = NAME_CONFLICT, _conflict_message(job)
            return
        attempt = retry.attempt_of(job.metadata.annotations)
        if attempt < entry.attempt:
            return  # an earlier attempt's vcjob (its replacement is under way)
        fresh = attempt > entry.attempt
        if fresh:  # created before the status said so (a controller that died): adopted
            self._set_attempt(entry, attempt)
            entry.first_attempt = min(entry.first_attempt, attempt)
            entry.renew, entry.next_at, entry.ended = False, None, ""
            entry.deadline_hit, entry.deadline_at = False, None
            entry.verdict = entry.verdict_message = ""
        status = job.status
        entry.condition = _condition_of(job)
        if not fresh and entry.state == State.BACKOFF:
            # the attempt that failed, still in the store until its retry is due
            self._set_live(entry, observed=True, created=False)
            entry.gone = False
            if DEADLINE_ANNOTATION in job.metadata.annotations:
                entry.ended = DEADLINE_EXCEEDED
            self._settle()
            return
        self._set_live(entry, observed=True, created=False)
        entry.gone = False
        entry.reason = entry.message = ""
        entry.deadline_hit |= DEADLINE_ANNOTATION in job.metadata.annotations
        entry.vc_retry = (status.retry_count if status else None) or 0
        entry.created_at = _time(job.metadata.creation_timestamp)
        if entry.probed_by:
            entry.view = probes.target_of(job)
        self._set_phase(entry, job.phase, now, job=job, fresh=fresh)
        self._arm_deadline(entry)
        if entry.probed_by:
            for name in entry.probed_by:
                self._reprobe(self.entries[name], entry, now)
        self._settle()

    def forget(
        self, job_name: str, last_phase: str, now: datetime, *, existed: bool = False
    ) -> None:
        """A vcjob of this flow was deleted; its last phase is its outcome (row 16).
        `existed`: the caller saw the job (a tombstone), even if this index did not."""
        entry = self.by_job.get(job_name)
        if entry is not None and entry.reason == NAME_CONFLICT and not existed:
            self.conflict_gone(job_name)  # the foreign vcjob holding the name went away
            return
        if entry is None or not (existed or entry.observed or entry.created or entry.gone):
            return
        self._set_live(entry, observed=False, created=False)
        entry.view = None
        if entry.state == State.BACKOFF:  # its failed attempt's vcjob: the retry still comes
            entry.gone = True
            entry.condition = {}  # (as a status restored without it has none)
            if entry.renew:
                self.candidates.add(entry.name)
            self._settle()
            return
        entry.gone = True
        if entry.state in (State.COMPLETED, State.FAILED) and entry.phase == last_phase:
            self._settle()  # it had ended: its outcome stands
            return
        if last_phase == JobPhase.COMPLETED:
            self._set_phase(entry, JobPhase.COMPLETED, now, final=True)
        else:
            entry.verdict = JOB_DELETED
            entry.verdict_message = f"vcjob {job_name} was deleted before it finished"
            self._set_phase(entry, JobPhase.FAILED, now, final=True)
        self._settle()

    def conflict_gone(self, job_name: str) -> bool:
        """The foreign vcjob that held this entry's name was deleted: the entry may now be
        created (row 12). True when that changed anything."""
        entry = self.by_job.get(job_name)
        if entry is None or entry.reason != NAME_CONFLICT or entry.observed or entry.created:
            return False
        entry.reason = entry.message = ""
        self.candidates.add(entry.name)
        return True

    def template_appeared(self, template: str) -> None:
        """Entries that waited for this JobTemplate become candidates again."""
        for name in self.template_waiters.pop(template, set()):
            self.candidates.add(name)

    def mark_created(self, job_name: str) -> None:
        entry = self.by_job[job_name]
        self._set_live(entry, observed=entry.observed, created=True)
        entry.reason = entry.message = ""
        if entry.renew:
            self._new_attempt(entry, entry.creating)

    def mark_create_failed(self, job_name: str, message: str) -> None:
        """The API refused the create (row 9): the entry waits with the reason, retried."""
        entry = self.by_job[job_name]
        entry.reason, entry.message = CREATE_FAILED, message
        self.candidates.add(entry.name)

    def mark_conflict(self, job: VCJob) -> None:
        entry = self.by_job[job.name]
        entry.reason, entry.message = NAME_CONFLICT, _conflict_message(job)

    def defer_create(self, job_name: str, message: str) -> None:
        """The next attempt's vcjob cannot be created yet (the last one's pods are still
        going): the entry stays a candidate."""
        entry = self.by_job[job_name]
        entry.message = message
        self.candidates.add(entry.name)

    def probe_result(
        self, entry_name: str, target: str, ok: bool, note: str, now: datetime
    ) -> bool:
        """The shell ran a probe round of `entry_name` on `target`: True when it met the
        dependency (the entry may now be created)."""
        entry, key = self.entries[entry_name], (entry_name, target)
        if ok:
            self.probe_notes.pop(key, None)
            return self._probe_met(entry, target)
        self.probe_notes[key] = note
        if self._probing(entry, self.entries[target]):
            self._probe_due[key] = now + timedelta(seconds=probes.PERIOD)
            self.timers.set(self._probe_due[key], timers.PROBE, entry_name, target)
        return False

    def take_probes(self) -> list[probes.Round]:
        """The probe rounds the last `decide` found due, for the shell to run."""
        rounds, self._rounds = self._rounds, []
        return rounds

    def next_wakeup(self) -> datetime | None:
        """When the earliest timer is due: a retry, a deadline, a probe round."""
        return self.timers.next()

    # -- decisions -------------------------------------------------------------------------

    def decide(
        self,
        templates: Mapping[str, JobTemplate],
        limit: int | None = None,
        *,
        now: datetime | None = None,
    ) -> Plan:
        """The vcjobs to create now and, after Succeed with `delete` or a stop, the ones to
        remove; the ones a due retry replaces; the ones past their deadline. Timers due at
        `now` fire first, and a `vcflow retry` request not carried out yet is.

        `limit` caps the creations, in flow order: the entries after it stay candidates,
        and `Plan.more` says the next decision has creations left to make."""
        creates: list[VCJob] = []
        replaced: list[str] = []
        rest: list[str] = []
        self._building = False
        if now is not None:
            self._fire(now)
            self._take_request(now)
        self._settle()
        if self.phase not in (FlowPhase.FAILED, FlowPhase.SUCCEED, FlowPhase.TERMINATING):
            if self._left and len(self._left) == len(self.candidates):
                order = self._left  # (candidates only grow between decisions)
            else:
                order = sorted(self.candidates, key=lambda n: self.entries[n].index)
            for at, name in enumerate(order):
                if limit is not None and len(creates) >= limit:
                    rest = order[at:]
                    break
                entry = self.entries[name]
                if entry.renew and entry.observed:
                    replaced.append(entry.job)  # the failed attempt goes first
                    continue
                if not entry.creatable():
                    continue
                template = templates.get(name)
                if template is None:
                    entry.reason = TEMPLATE_NOT_FOUND
                    entry.message = f'jobtemplate.flow.volcano.sh "{name}" not found'
                    self.template_waiters.setdefault(name, set()).add(name)
                    continue
                spec_entry = self.flow.flows[entry.index]
                entry.creating = entry.attempt + 1 if entry.renew else entry.attempt
                creates.append(
                    jobbuild.build_job(self.flow, spec_entry, template, attempt=entry.creating)
                )
            if rest:  # (what was looked at leaves the candidates: O(limit), not O(left))
                self.candidates.difference_update(order[: len(order) - len(rest)])
            else:
                self.candidates.clear()
            self._left = rest
        terminate, self._terminate = tuple(self._terminate), []
        deletes = self.to_delete()
        if deletes:  # (a stop or the retain policy removes them all anyway)
            replaced = []
        return Plan(
            tuple(creates), tuple(deletes), self.phase, bool(rest), terminate, tuple(replaced)
        )

    def to_delete(self) -> list[str]:
        """`jobRetainPolicy: delete` removes the vcjobs once the flow Succeed (row 16 keeps
        their outcome)."""
        stop = self.stopping and self.phase != FlowPhase.SUCCEED
        keep = self.phase != FlowPhase.SUCCEED or self.flow.retain_policy != RetainPolicy.DELETE
        if not self._live or (keep and not stop):
            return []
        return [e.job for e in self.entries.values() if e.observed or e.created]

    def counts(self) -> phases.Counts:
        return phases.Counts(len(self.entries), self._ok, self._bad, self._started)

    # -- status ----------------------------------------------------------------------------

    def status(self) -> JobFlowStatus:
        """The status to write: lists, conditions (with Waiting entries, row 18),
        jobStatusList (cumulative) and the phase. O(entries + edges)."""
        return JobFlowStatus.model_validate(self.status_data())

    def status_data(self) -> dict[str, Any]:
        """`status()` in wire form, built from plain dicts (`flowstatus.render`): what the
        controller compares with the last status written, and validates only to write it.

        The result shares the history items with the index; they are never changed in
        place (copy on write), so a rendered status stays as rendered."""
        return flowstatus.render(self)

    # -- timers ----------------------------------------------------------------------------

    def _valid(self, timer: timers.Timer) -> bool:
        kind = timer.kind
        if kind == timers.FLOW:
            return not self.expired and self.phase not in _FINAL and self.deadline_at == timer.due
        if kind == timers.PROBE:
            return self._probe_due.get((timer.name, timer.target)) == timer.due
        entry = self.entries.get(timer.name)
        if entry is None:
            return False
        if kind == timers.RETRY:
            return entry.state == State.BACKOFF and not entry.renew and entry.next_at == timer.due
        return (
            entry.deadline_at == timer.due
            and entry.state == State.LIVE
            and not entry.deadline_hit
            and entry.phase not in FINISHED_JOB_PHASES
            and (entry.observed or entry.created)
        )

    def _fire(self, now: datetime) -> None:
        for timer in self.timers.due(now):
            if timer.kind == timers.RETRY:
                entry = self.entries[timer.name]
                entry.renew = True
                self.candidates.add(entry.name)
            elif timer.kind == timers.DEADLINE:
                entry = self.entries[timer.name]
                entry.deadline_hit = True
                self._terminate.append(entry.job)
            elif timer.kind == timers.FLOW:
                self.expired = True
            else:
                key = (timer.name, timer.target)
                del self._probe_due[key]
                entry, target = self.entries[timer.name], self.entries[timer.target]
                verdict, checks, note = probes.assess(_probe(entry), target.view)
                if verdict == probes.Verdict.RUN:
                    self._rounds.append(probes.Round(entry.name, target.name, checks))
                elif verdict == probes.Verdict.MET:
                    self._probe_met(entry, target.name)
                else:
                    self.probe_notes[key] = note

    def _arm_deadline(self, entry: Entry) -> None:
        if entry.deadline is None or entry.created_at is None or entry.deadline_hit:
            return
        due = entry.created_at + timedelta(seconds=entry.deadline)
        if entry.deadline_at != due:
            entry.deadline_at = due
            self.timers.set(due, timers.DEADLINE, entry.name)

    def _arm_flow_deadline(self, since: datetime | None) -> None:
        seconds = self.flow.spec.active_deadline_seconds if self.flow.spec else None
        if not seconds:
            return
        start = _time(self.flow.metadata.creation_timestamp)
        done = RetryRequest.parse(self.last_retry) if self.last_retry else None
        if done is not None and (start is None or done.at > start):
            start = done.at  # (a retried flow's deadline counts from the retry)
        if since is not None:
            start = since
        if start is None:
            return
        self.deadline_at = start + timedelta(seconds=seconds)
        self.timers.set(self.deadline_at, timers.FLOW)

    # -- probes ----------------------------------------------------------------------------

    def _probing(self, entry: Entry, target: Entry) -> bool:
        """Is the dependency of `entry` on `target` still one a probe may meet?"""
        return (
            entry.probe is not None
            and not entry.has_job
            and entry.state == State.NONE
            and target.name not in entry.probe_met
            and target.state not in OUTCOMES
            and self.phase not in _FINAL
        )

    def _reprobe(self, entry: Entry, target: Entry, now: datetime) -> None:
        """The target changed: where the probe of it stands."""
        key = (entry.name, target.name)
        if not self._probing(entry, target):
            self._probe_due.pop(key, None)
            self.probe_notes.pop(key, None)
            return
        verdict, _, note = probes.assess(_probe(entry), target.view)
        if verdict == probes.Verdict.MET:
            self._probe_met(entry, target.name)
        elif verdict == probes.Verdict.WAIT:
            self._probe_due.pop(key, None)
            self.probe_notes[key] = note
        elif key not in self._probe_due:
            self._probe_due[key] = now
            self.timers.set(now, timers.PROBE, entry.name, target.name)

    def _probe_met(self, entry: Entry, target: str) -> bool:
        self._probe_due.pop((entry.name, target), None)
        if target in entry.probe_met:
            return False
        before = contribution(entry.outcome, self.entries[target].state)
        entry.probe_met.add(target)
        self._count_edge(entry, target, before, MET)
        self._settle()
        return entry.ready()

    # -- retries ---------------------------------------------------------------------------

    def _start_backoff(self, entry: Entry, now: datetime, ended: str) -> None:
        done = entry.attempt - entry.first_attempt + 1
        seed = f"{self.flow.metadata.uid}/{entry.name}/{entry.attempt}"
        entry.next_at = retry.due(now, retry.delay(entry.policy, done, seed=seed))
        entry.ended = ended
        entry.renew = False
        self.timers.set(entry.next_at, timers.RETRY, entry.name)

    def _new_attempt(self, entry: Entry, attempt: int) -> None:
        """The next attempt's vcjob was created: the entry is live again."""
        self._set_attempt(entry, attempt)
        entry.renew, entry.next_at, entry.ended = False, None, ""
        entry.deadline_hit, entry.deadline_at, entry.created_at = False, None, None
        entry.gone, entry.verdict, entry.verdict_message = False, "", ""
        entry.condition = {}
        self._move(entry, State.LIVE, "")
        item = dict(self.history.get(entry.job, {"name": entry.job}))
        item.pop("nextAttemptTime", None)
        item["state"] = ""
        item.pop("startTimestamp", None)
        item.pop("endTimestamp", None)
        item["restartCount"] = attempt - 1
        item["attempt"] = attempt
        if entry.first_attempt > 1:
            item["firstAttempt"] = entry.first_attempt
        self.history[entry.job] = item

    def _cancel_retry(self, entry: Entry) -> None:
        """The flow failed or stops: the waiting retry is not made; the last attempt's
        outcome stands."""
        entry.renew, entry.next_at = False, None
        outcome = State.COMPLETED if entry.ended == JobPhase.COMPLETED else State.FAILED
        if outcome == State.FAILED:
            why = "the flow failed" if self.phase == FlowPhase.FAILED else "the flow stops"
            entry.verdict = RETRY_CANCELLED
            entry.verdict_message = f"attempt {entry.attempt + 1} was not made: {why}"
        self._move(entry, outcome, entry.phase)
        self._drop_next_time(entry)

    def _drop_next_time(self, entry: Entry) -> None:
        item = self.history.get(entry.job)
        if item is not None and "nextAttemptTime" in item:
            item = dict(item)
            del item["nextAttemptTime"]
            self.history[entry.job] = item

    def _request(self) -> RetryRequest | None:
        raw = self.flow.metadata.annotations.get(RETRY_ANNOTATION)
        return RetryRequest.parse(raw) if raw else None

    def _take_request(self, now: datetime) -> None:
        """Carry out a `vcflow retry` request once: it is then `status.lastRetry` (which
        outlives the annotation: a later `apply` of the manifest drops it)."""
        request = self._request()
        done = RetryRequest.parse(self.last_retry) if self.last_retry else None
        if request is None or (done is not None and request.id == done.id):
            return
        self.last_retry = request.to_annotation()
        if self.phase != FlowPhase.FAILED:
            return  # (the CLI refuses; a request that meets a flow not Failed does nothing)
        self.phase = FlowPhase.PENDING
        self.expired = False
        self._arm_flow_deadline(request.at)
        for entry in self._to_reset(request):
            self._reset(entry, request.at)

    def _to_reset(self, request: RetryRequest) -> list[Entry]:
        """Entries that failed or were skipped; with `restartSuccessful`, the named
        Completed ones (all without names) and everything downstream of the named."""
        chosen = [e for e in self.entries.values() if e.state in (State.FAILED, State.SKIPPED)]
        if request.restart_successful:
            named = request.entries
            roots = [self.entries[n] for n in named or () if n in self.entries]
            if named is None:
                roots = [e for e in self.entries.values() if e.state == State.COMPLETED]
            seen = {e.name for e in chosen}
            todo = list(roots)
            while todo:
                entry = todo.pop()
                if entry.name in seen:
                    continue
                seen.add(entry.name)
                if entry.state in OUTCOMES:
                    chosen.append(entry)
                todo.extend(self.entries[s] for s in entry.successors)
        return sorted(chosen, key=lambda e: e.index)

    def _reset(self, entry: Entry, at: datetime) -> None:
        """Run the entry again: a new attempt (with a fresh retry budget) when it had a
        vcjob, else just not skipped any more."""
        for target in list(entry.probe_met):
            entry.probe_met.discard(target)
            after = contribution(entry.outcome, self.entries[target].state)
            self._count_edge(entry, target, MET, after)
        entry.verdict = entry.verdict_message = ""
        if entry.state == State.SKIPPED or entry.job not in self.history:
            self._move(entry, State.NONE, None)
            self.candidates.add(entry.name)
            return
        entry.first_attempt = entry.attempt + 1
        entry.next_at, entry.ended, entry.renew = at, "retried", True
        self._move(entry, State.BACKOFF, entry.phase)
        item = dict(self.history[entry.job])
        item["nextAttemptTime"] = clock.rfc3339(at)
        item["firstAttempt"] = entry.first_attempt
        self.history[entry.job] = item
        self.candidates.add(entry.name)

    # -- bookkeeping -----------------------------------------------------------------------

    def _set_phase(
        self,
        entry: Entry,
        new: str,
        now: datetime,
        *,
        job: VCJob | None = None,
        fresh: bool = False,
        final: bool = False,
    ) -> None:
        """The entry's job is in phase `new` now: its state follows (a failed or, with
        `Always`, completed attempt with retries left starts a backoff)."""
        if entry.phase != new or fresh or final:
            state = _settled(new)
            if state != State.LIVE and not final and self._may_retry(entry, state):
                ended = DEADLINE_EXCEEDED if entry.deadline_hit and state == State.FAILED else new
                self._start_backoff(entry, now, ended)
                state = State.BACKOFF
            elif state == State.FAILED and not final:
                self._explain_failure(entry)
            elif state != State.FAILED:
                entry.verdict = entry.verdict_message = ""
            self._move(entry, state, new)
        self._record_history(entry, new, now, job=job)

    def _may_retry(self, entry: Entry, state: State) -> bool:
        plan = entry.policy
        if entry.attempt >= entry.last_attempt or plan.retries == 0:
            return False
        # (a flow that failed or stops cancels the retry: `_settle`)
        return state != State.COMPLETED or plan.policy == RetryStrategy.ALWAYS

    def _explain_failure(self, entry: Entry) -> None:
        if entry.deadline_hit:
            entry.verdict = DEADLINE_EXCEEDED
            entry.verdict_message = (
                f"attempt {entry.attempt} ran past its activeDeadlineSeconds ({entry.deadline}s)"
            )
        elif entry.policy.retries and entry.attempt >= entry.last_attempt:
            runs = entry.attempt - entry.first_attempt + 1
            entry.verdict = RETRIES_EXHAUSTED
            entry.verdict_message = f"Failed after {runs} attempts"

    def _skip(self, entry: Entry) -> None:
        target, outcome = entry.doomed_by
        entry.verdict = f"Target{outcome}"
        want = {
            DependencyOutcome.COMPLETED: "has Completed",
            DependencyOutcome.FAILED: "has Failed",
            DependencyOutcome.FINISHED: "has ended",
        }[entry.outcome]
        which = "any of its targets" if entry.any_of else target
        entry.verdict_message = (
            f"{target} {outcome}: {entry.name} runs only when {which} {want} "
            f"(outcome: {entry.outcome})"
        )
        self._move(entry, State.SKIPPED, None)

    def _move(self, entry: Entry, state: State, phase: str | None) -> None:
        """Set the entry's state and job phase, keeping the counts and its successors'."""
        before = entry.state
        self._tally(entry, -1)
        entry.state, entry.phase = state, phase
        self._tally(entry, 1)
        if state == State.BACKOFF:
            self._backing.add(entry.name)
        else:
            self._backing.discard(entry.name)
        if before != state and (before in OUTCOMES or state in OUTCOMES):
            for name in entry.successors:
                succ = self.entries[name]
                if entry.name not in succ.probe_met:
                    old = contribution(succ.outcome, before)
                    self._count_edge(succ, entry.name, old, contribution(succ.outcome, state))

    def _count_edge(self, entry: Entry, target: str, old: int, new: int) -> None:
        if old == new:
            return
        entry.met += int(new == MET) - int(old == MET)
        entry.dead += int(new == DEAD) - int(old == DEAD)
        if new == DEAD:
            entry.doomed_by = (target, str(self.entries[target].state))
            if entry.doomed():
                self._doomed.add(entry.name)
        if new == MET and entry.ready():
            self.candidates.add(entry.name)

    def _set_attempt(self, entry: Entry, attempt: int) -> None:
        """(`_tally` reads the attempt: it is counted out and in again.)"""
        self._tally(entry, -1)
        entry.attempt = attempt
        self._tally(entry, 1)

    def _tally(self, entry: Entry, sign: int) -> None:
        state = entry.state
        if state in (State.COMPLETED, State.SKIPPED) or (state == State.FAILED and entry.handled):
            self._ok += sign
        elif state == State.FAILED:
            self._bad += sign
        started = state == State.BACKOFF or entry.attempt > 1
        if not started and entry.phase is not None and state != State.SKIPPED:
            started = phases.has_started(entry.phase)
        self._started += sign * int(started)

    def _record_history(
        self, entry: Entry, phase: str, now: datetime, *, job: VCJob | None
    ) -> None:
        """Volcano's jobStatusList rules (reference §3.7), with the controller's time, and
        vcflow's attempt bookkeeping."""
        stamp = clock.rfc3339(now)
        # Copy on write: rendered statuses share these dicts (`status_data`).
        item = dict(self.history.get(entry.job, {"name": entry.job}))
        item["state"] = phase  # ("" for a vcjob with no phase yet: it has an entry too)
        if job is not None:
            item["startTimestamp"] = job.metadata.creation_timestamp
            item["endTimestamp"] = _end_time(job)
            item["restartCount"] = entry.attempt - 1 + entry.vc_retry
        histories = list(item.get("runningHistories") or [])
        if phase and (not histories or histories[-1].get("state") != phase):
            if histories:
                histories[-1] = {**histories[-1], "endTimestamp": stamp}
            histories.append({"startTimestamp": stamp, "endTimestamp": None, "state": phase})
        item["runningHistories"] = histories or None
        item["attempt"] = entry.attempt if entry.attempt > 1 else None
        item["firstAttempt"] = entry.first_attempt if entry.first_attempt > 1 else None
        waiting = entry.state == State.BACKOFF and entry.next_at is not None
        item["nextAttemptTime"] = (
            clock.rfc3339(entry.next_at) if waiting and entry.next_at else None
        )
        if phase or job is not None or entry.job in self.history:
            self.history[entry.job] = {k: v for k, v in item.items() if v is not None}


def _settled(phase: str) -> State:
    """The state a job phase means by itself (before retries are considered)."""
    if phase == JobPhase.COMPLETED:
        return State.COMPLETED
    if phase in phases.FAILING:
        return State.FAILED
    return State.LIVE


def _probe(entry: Entry) -> Probe:
    assert entry.probe is not None
    return entry.probe


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return clock.parse_rfc3339(text)
    except ValueError:
        return None


def _condition_of(job: VCJob) -> dict[str, Any]:
    """Volcano's condition of a vcjob (its phase is added when rendered)."""
    status = job.status
    return {
        "createTime": job.metadata.creation_timestamp,
        "runningDuration": status.running_duration if status else None,
        "taskStatusCount": (
            {k: v.to_dict() for k, v in status.task_status_count.items()}
            if status and status.task_status_count
            else None
        ),
    }


def _end_time(job: VCJob) -> str | None:
    created = job.metadata.creation_timestamp
    duration = job.status.running_duration if job.status else None
    if not created or not duration:
        return None
    seconds = clock.parse_go_duration(duration)
    if seconds is None:
        return None
    return clock.rfc3339(clock.parse_rfc3339(created) + timedelta(seconds=seconds))


def _conflict_message(job: VCJob) -> str:
    ref = job.metadata.controller_ref()
    owner = f"{ref.kind} {ref.name}" if ref else "no controller"
    return f"vcjob {job.name} exists and is not this flow's (owned by {owner})"


def plan(
    flow: JobFlow,
    templates: Mapping[str, JobTemplate],
    jobs: Iterable[VCJob],
    *,
    now: datetime,
    tombstones: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> tuple[FlowIndex, Plan]:
    """The full reconcile: an index built from the flow's status, the vcjobs that exist
    (`jobs`: any in the namespace; foreign ones become NameConflict) and `tombstones`
    (job name → last phase of vcjobs deleted since the status was written); `limit` as in
    `FlowIndex.decide`."""
    index = FlowIndex(flow)
    index.restore(flow.status)
    seen: set[str] = set()
    for job in jobs:
        if job.name in index.by_job:
            seen.add(job.name)
            index.observe(job, now)
    for name, last in (tombstones or {}).items():
        if name not in seen:
            index.forget(name, last, now, existed=True)
    for entry in index.entries.values():
        if (
            entry.gone
            and entry.job not in seen
            and entry.state == State.LIVE
            and entry.verdict != JOB_DELETED
        ):
            index.forget(entry.job, entry.phase or "", now)
        if not entry.has_job:
            index.candidates.add(entry.name)
    return index, index.decide(templates, limit, now=now)
