"""The JobFlow reconcile: which vcjobs to create or delete, and the status to write.

`FlowIndex` holds one flow's entries with counted readiness (graphlib style): a job's change
touches only that job's successors, so an event costs O(its edges), not O(flow). `plan()`
builds an index from scratch (first sight, resync, restart); `observe`/`forget` + `decide`
advance it one job at a time; both must give the same decisions and status (property test).

Pure: no I/O; time arrives as `now`. SEMANTICS rows 5–9, 12, 16, 18 are decided here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from vcflow.api import clock, names
from vcflow.api.jobflow import JobFlow, JobFlowStatus
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import FlowPhase, JobPhase, RetainPolicy
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import phase as phases

WAITING = "Waiting"
DEPENDENCIES = "Dependencies"
TEMPLATE_NOT_FOUND = "TemplateNotFound"
NAME_CONFLICT = "NameConflict"
CREATE_FAILED = "CreateFailed"
JOB_DELETED = "JobDeleted"
#: Annotation `vcflow stop` sets: the flow's jobs are removed (phase Terminating), then the
#: flow ends Failed (SEMANTICS rows 7, 11).
STOP_ANNOTATION = "vcflow.io/stop"
_FINAL = (FlowPhase.SUCCEED, FlowPhase.FAILED)
#: The status lists in the model's field order (`JobFlowStatus`).
_STATUS_LISTS = (
    "pendingJobs",
    "runningJobs",
    "failedJobs",
    "completedJobs",
    "terminatedJobs",
    "unKnowJobs",
)


@dataclass
class Entry:
    """One flow entry and what is known of its vcjob."""

    name: str
    job: str
    index: int
    targets: tuple[str, ...]
    any_of: bool
    successors: list[str] = field(default_factory=list)
    met: int = 0
    phase: str | None = None
    observed: bool = False
    gone: bool = False
    created: bool = False
    reason: str = ""
    message: str = ""
    condition: dict[str, Any] = field(default_factory=dict)

    @property
    def has_job(self) -> bool:
        return self.observed or self.gone or self.created or self.reason == NAME_CONFLICT

    def ready(self) -> bool:
        if not self.targets:
            return True
        return self.met >= 1 if self.any_of else self.met >= len(self.targets)


@dataclass(frozen=True)
class Plan:
    create: tuple[VCJob, ...]
    delete: tuple[str, ...]
    phase: FlowPhase
    #: `decide` stopped at its `limit`: more entries are ready, for the next decision
    more: bool = False


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
        self._completed = self._failed = self._started = self._live = 0
        self.phase = FlowPhase(flow.phase) if flow.phase else FlowPhase.PENDING
        self._building = True  # until plan() has seen every job: no stop verdict yet
        self._build_entries()
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
            )
            self.entries[entry.name] = entry
            self.by_job[entry.job] = entry
        for entry in self.entries.values():
            for target in entry.targets:
                if target in self.entries:
                    self.entries[target].successors.append(entry.name)

    # -- restoring ------------------------------------------------------------------------

    def restore(self, status: JobFlowStatus | None) -> None:
        """Remember what a previous status says of each entry's job (row 16)."""
        if status is None:
            return
        for item in status.job_status_list or []:
            self.history[item.name] = item.to_dict()
        for job, cond in (status.conditions or {}).items():
            entry = self.by_job.get(job)
            if entry is None or cond.phase == WAITING:
                continue
            entry.condition = cond.to_dict()
            entry.phase = cond.phase or ""
            entry.reason = cond.reason or ""
            entry.gone = True  # until a job in the store says otherwise
        for entry in self.entries.values():
            if entry.phase is None and entry.job in self.history:
                entry.phase = self.history[entry.job].get("state") or ""
                entry.gone = True
            if entry.phase is not None:
                self._count(entry, None, entry.phase)
        self._recompute()

    @property
    def stopping(self) -> bool:
        return STOP_ANNOTATION in self.flow.metadata.annotations

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
        status = job.status
        entry.condition = {
            "createTime": job.metadata.creation_timestamp,
            "runningDuration": status.running_duration if status else None,
            "taskStatusCount": (
                {k: v.to_dict() for k, v in status.task_status_count.items()}
                if status and status.task_status_count
                else None
            ),
        }
        self._set_live(entry, observed=True, created=False)
        entry.gone = False
        entry.reason = entry.message = ""
        retry = status.retry_count if status else None
        self._set_phase(entry, job.phase, now, job=job, retry=retry)

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
        entry.gone = True
        if last_phase == JobPhase.COMPLETED:
            self._set_phase(entry, JobPhase.COMPLETED, now)
            return
        entry.reason = JOB_DELETED
        entry.message = f"vcjob {job_name} was deleted before it finished"
        self._set_phase(entry, JobPhase.FAILED, now)

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

    def mark_create_failed(self, job_name: str, message: str) -> None:
        """The API refused the create (row 9): the entry waits with the reason, retried."""
        entry = self.by_job[job_name]
        entry.reason, entry.message = CREATE_FAILED, message
        self.candidates.add(entry.name)

    def mark_conflict(self, job: VCJob) -> None:
        entry = self.by_job[job.name]
        entry.reason, entry.message = NAME_CONFLICT, _conflict_message(job)

    # -- decisions -------------------------------------------------------------------------

    def decide(self, templates: Mapping[str, JobTemplate], limit: int | None = None) -> Plan:
        """The vcjobs to create now and, after Succeed with `delete`, the ones to remove.

        `limit` caps the creations, in flow order: the entries after it stay candidates,
        and `Plan.more` says the next decision has creations left to make."""
        creates: list[VCJob] = []
        rest: list[str] = []
        self._building = False
        self._recompute()
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
                if entry.has_job or not entry.ready():
                    continue
                template = templates.get(name)
                if template is None:
                    entry.reason = TEMPLATE_NOT_FOUND
                    entry.message = f'jobtemplate.flow.volcano.sh "{name}" not found'
                    self.template_waiters.setdefault(name, set()).add(name)
                    continue
                spec_entry = self.flow.flows[entry.index]
                creates.append(jobbuild.build_job(self.flow, spec_entry, template))
            if rest:  # (what was looked at leaves the candidates: O(limit), not O(left))
                self.candidates.difference_update(order[: len(order) - len(rest)])
            else:
                self.candidates.clear()
            self._left = rest
        return Plan(tuple(creates), tuple(self.to_delete()), self.phase, more=bool(rest))

    def to_delete(self) -> list[str]:
        """`jobRetainPolicy: delete` removes the vcjobs once the flow Succeed (row 16 keeps
        their outcome)."""
        stop = self.stopping and self.phase != FlowPhase.SUCCEED
        keep = self.phase != FlowPhase.SUCCEED or self.flow.retain_policy != RetainPolicy.DELETE
        if not self._live or (keep and not stop):
            return []
        return [e.job for e in self.entries.values() if e.observed or e.created]

    def counts(self) -> phases.Counts:
        return phases.Counts(len(self.entries), self._completed, self._failed, self._started)

    # -- status ----------------------------------------------------------------------------

    def status(self) -> JobFlowStatus:
        """The status to write: lists, conditions (with Waiting entries, row 18),
        jobStatusList (cumulative) and the phase. O(entries + edges)."""
        return JobFlowStatus.model_validate(self.status_data())

    def status_data(self) -> dict[str, Any]:
        """`status()` in wire form, built from plain dicts (no model per entry): what the
        controller compares with the last status written, and validates only to write it.

        The result shares the history items with the index; they are never changed in
        place (`_record_history` replaces them), so a rendered status stays as rendered.
        """
        lists: dict[str, list[str]] = {}
        conditions: dict[str, dict[str, Any]] = {}
        for entry in self.entries.values():
            if entry.phase is not None and (entry.observed or entry.gone):
                lists.setdefault(phases.status_list(entry.phase), []).append(entry.job)
                cond = {"phase": str(entry.phase)}  # the model's field order, phase first
                cond.update((k, v) for k, v in entry.condition.items() if v is not None)
                cond["phase"] = str(entry.phase)
                if entry.reason == JOB_DELETED:
                    cond["reason"], cond["message"] = entry.reason, entry.message
                conditions[entry.job] = cond
            elif not entry.has_job or entry.reason == NAME_CONFLICT:
                conditions[entry.job] = self._waiting_condition(entry)
        data: dict[str, Any] = {k: lists[k] for k in _STATUS_LISTS if lists.get(k)}
        if self.history:
            data["jobStatusList"] = list(self.history.values())
        if conditions:
            data["conditions"] = conditions
        data["state"] = {"phase": str(self.phase)}
        return data

    def _waiting_condition(self, entry: Entry) -> dict[str, Any]:
        if entry.reason:
            return {"phase": WAITING, "reason": entry.reason, "message": entry.message}
        waiting_for = [
            t
            for t in entry.targets
            if t not in self.entries or self.entries[t].phase != JobPhase.COMPLETED
        ]
        word = "any of" if entry.any_of else "all of"
        return {
            "phase": WAITING,
            "reason": DEPENDENCIES,
            "message": f"waiting for {word}: {', '.join(waiting_for)}",
        }

    # -- bookkeeping -----------------------------------------------------------------------

    def _set_phase(
        self,
        entry: Entry,
        new: str,
        now: datetime,
        *,
        job: VCJob | None = None,
        retry: int | None = None,
    ) -> None:
        old = entry.phase
        if old != new:
            self._count(entry, old, new)
            entry.phase = new
            self._recompute()
        self._record_history(entry, new, now, job=job, retry=retry)

    def _count(self, entry: Entry, old: str | None, new: str) -> None:
        for phase, sign in ((old, -1), (new, 1)):
            if phase is None:
                continue
            if phase == JobPhase.COMPLETED:
                self._completed += sign
                for succ in entry.successors:
                    self.entries[succ].met += sign
                    if sign > 0 and self.entries[succ].ready():
                        self.candidates.add(succ)
            if phase in phases.FAILING:
                self._failed += sign
            if phases.has_started(phase):
                self._started += sign

    def _record_history(
        self, entry: Entry, phase: str, now: datetime, *, job: VCJob | None, retry: int | None
    ) -> None:
        """Volcano's jobStatusList rules (reference §3.7), with the controller's time."""
        stamp = clock.rfc3339(now)
        # Copy on write: rendered statuses share these dicts (`status_data`).
        item = dict(self.history.get(entry.job, {"name": entry.job}))
        item["state"] = phase  # ("" for a vcjob with no phase yet: it has an entry too)
        if job is not None:
            item["startTimestamp"] = job.metadata.creation_timestamp
            item["endTimestamp"] = _end_time(job)
            item["restartCount"] = retry or 0
        histories = list(item.get("runningHistories") or [])
        if phase and (not histories or histories[-1].get("state") != phase):
            if histories:
                histories[-1] = {**histories[-1], "endTimestamp": stamp}
            histories.append({"startTimestamp": stamp, "endTimestamp": None, "state": phase})
        item["runningHistories"] = histories or None
        if phase or job is not None or entry.job in self.history:
            self.history[entry.job] = {k: v for k, v in item.items() if v is not None}


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
            and entry.phase not in (JobPhase.COMPLETED, None)
            and entry.reason != JOB_DELETED
        ):
            index.forget(entry.job, entry.phase or "", now)
        if not entry.has_job:
            index.candidates.add(entry.name)
    return index, index.decide(templates, limit)
