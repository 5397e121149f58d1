"""What a JobFlow's reconcile knows of one entry (`Entry`, its `State`), what a dependency
makes of a target's state (`contribution`), the reasons and annotations of vcflow's flow
features and their wording — shared by the index (`flow`), its counting (`readiness`) and
the status it renders (`flowstatus`). Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from vcflow.api import clock, names
from vcflow.api.jobflow import JobFlow, Probe
from vcflow.api.phases import FINISHED_JOB_PHASES, DependencyOutcome, JobPhase
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import phase as phases
from vcflow.reconcile import probes, retry

WAITING = "Waiting"
DEPENDENCIES = "Dependencies"
TEMPLATE_NOT_FOUND = "TemplateNotFound"
NAME_CONFLICT = "NameConflict"
CREATE_FAILED = "CreateFailed"
JOB_DELETED = "JobDeleted"
BACKOFF = "Backoff"
SKIPPED = "Skipped"
DEADLINE_EXCEEDED = "DeadlineExceeded"
RETRIES_EXHAUSTED = "RetriesExhausted"
RETRY_CANCELLED = "RetryCancelled"
#: Annotation `vcflow stop` sets: the flow's jobs are removed (phase Terminating), then the
#: flow ends Failed (compatibility rows 7, 11).
STOP_ANNOTATION = "vcflow.io/stop"
#: Annotation `vcflow retry` sets: a JSON request (`RetryRequest`) the controller carries out
#: once (it is then `status.lastRetry`).
RETRY_ANNOTATION = "vcflow.io/retry"
#: Annotation the controller puts on a vcjob it terminates for its entry's deadline.
DEADLINE_ANNOTATION = "vcflow.io/deadline-exceeded"
MET, OPEN, DEAD = 1, 0, -1


class State(StrEnum):
    NONE = ""
    LIVE = "Live"
    BACKOFF = "Backoff"
    COMPLETED = "Completed"
    FAILED = "Failed"
    SKIPPED = "Skipped"


#: the states a dependency is decided by (an entry's outcome)
OUTCOMES = (State.COMPLETED, State.FAILED, State.SKIPPED)


@dataclass(frozen=True)
class ItemOf:
    """On an item's `Entry`: the `for` entry it belongs to (`fanout`), and its index there."""

    group: str
    index: int


@dataclass(slots=True)
class Entry:
    """One flow entry and what is known of its vcjob."""

    name: str
    job: str
    index: int
    targets: tuple[str, ...]
    any_of: bool
    outcome: DependencyOutcome = DependencyOutcome.COMPLETED
    probe: Probe | None = None
    policy: retry.Plan = retry.NONE
    deadline: int | None = None  # activeDeadlineSeconds of each attempt
    successors: list[str] = field(default_factory=list)
    handled: bool = False  # an entry depends on its failure (outcome Failed or Finished)
    probed_by: list[str] = field(default_factory=list)
    met: int = 0
    dead: int = 0
    doomed_by: tuple[str, str] = ("", "")  # (target, its outcome) that made it unmeetable
    probe_met: frozenset[str] = frozenset()  # (replaced, never changed: most have none)
    state: State = State.NONE
    phase: str | None = None
    observed: bool = False
    gone: bool = False
    created: bool = False
    reason: str = ""  # why it waits (TemplateNotFound, NameConflict, CreateFailed)
    message: str = ""
    verdict: str = ""  # why its outcome is what it is (JobDeleted, DeadlineExceeded, ...)
    verdict_message: str = ""
    condition: dict[str, Any] = field(default_factory=dict)
    attempt: int = 1
    first_attempt: int = 1
    creating: int = 1  # the attempt of the vcjob `decide` built
    next_at: datetime | None = None
    renew: bool = False  # the next attempt is due: the old vcjob goes, a new one comes
    ended: str = ""  # how the attempt that started the backoff ended
    vc_retry: int = 0
    created_at: datetime | None = None
    deadline_at: datetime | None = None
    deadline_hit: bool = False
    view: probes.Target | None = None
    uid: str = ""  # of the vcjob last observed (its last phase is `phase`)
    item: ItemOf | None = None  # an item of a `for` entry (`fanout`)

    @property
    def rank(self) -> tuple[int, int]:
        """Its place in flow order: its entry's, then (an item) its index."""
        return (self.index, self.item.index if self.item is not None else -1)

    @property
    def has_job(self) -> bool:
        return self.observed or self.gone or self.created or self.reason == NAME_CONFLICT

    def ready(self) -> bool:
        if not self.targets:
            return True
        return self.met >= 1 if self.any_of else self.met >= len(self.targets)

    def doomed(self) -> bool:
        if not self.targets:
            return False
        return self.dead >= len(self.targets) if self.any_of else self.dead >= 1

    def creatable(self) -> bool:
        if self.reason == NAME_CONFLICT or self.observed or self.created:
            return False
        if self.renew:
            return self.ready()
        return not self.gone and self.state == State.NONE and self.ready()

    @property
    def last_attempt(self) -> int:
        return self.first_attempt + self.policy.retries

    def retry_waits(self, due: datetime) -> bool:
        """Is a retry due at `due` still waiting (a timer's validity)?"""
        return self.state == State.BACKOFF and not self.renew and self.next_at == due

    def deadline_pending(self, due: datetime) -> bool:
        """Does the current attempt still run towards its deadline at `due`?"""
        return (
            self.deadline_at == due
            and self.state == State.LIVE
            and not self.deadline_hit
            and self.phase not in FINISHED_JOB_PHASES
            and (self.observed or self.created)
        )


def contribution(outcome: DependencyOutcome, target: State) -> int:
    """What a target in state `target` does to a dependency wanting `outcome` of it."""
    return CONTRIBUTION[outcome, target]


def _contribution(outcome: DependencyOutcome, target: State) -> int:
    if target not in OUTCOMES:
        return OPEN
    if outcome == DependencyOutcome.FINISHED:
        return MET
    if outcome == DependencyOutcome.FAILED:
        return MET if target == State.FAILED else DEAD
    return DEAD if target == State.FAILED else MET


#: `contribution` as a table: looked up for every edge of every change (no call)
CONTRIBUTION = {(o, t): _contribution(o, t) for o in DependencyOutcome for t in State}


def settled(phase: str) -> State:
    """The state a job phase means by itself (before retries are considered)."""
    if phase == JobPhase.COMPLETED:
        return State.COMPLETED
    if phase in phases.FAILING:
        return State.FAILED
    return State.LIVE


def failure_verdict(entry: Entry) -> tuple[str, str]:
    """(reason, message) of an entry whose job failed for good ("" when plain)."""
    if entry.deadline_hit:
        return DEADLINE_EXCEEDED, (
            f"attempt {entry.attempt} ran past its activeDeadlineSeconds ({entry.deadline}s)"
        )
    if entry.policy.retries and entry.attempt >= entry.last_attempt:
        runs = entry.attempt - entry.first_attempt + 1
        return RETRIES_EXHAUSTED, f"Failed after {runs} attempts"
    return "", ""


def skip_verdict(entry: Entry) -> tuple[str, str]:
    """(reason, message) of an entry whose dependency can never be met."""
    target, outcome = entry.doomed_by
    want = {
        DependencyOutcome.COMPLETED: "has Completed",
        DependencyOutcome.FAILED: "has Failed",
        DependencyOutcome.FINISHED: "has ended",
    }[entry.outcome]
    which = "any of its targets" if entry.any_of else target
    return f"Target{outcome}", (
        f"{target} {outcome}: {entry.name} runs only when {which} {want} (outcome: {entry.outcome})"
    )


#: on a cluster, why vc-scheduler cannot place a waiting vcjob: its PodGroup's latest
#: condition, `Unschedulable`, as `reason: message` (put there by `operator.podgroups`)
UNSCHEDULABLE_ANNOTATION = "vcflow.io/unschedulable"
UNSCHEDULABLE = "Unschedulable"


def condition_of(job: VCJob) -> dict[str, Any]:
    """Volcano's condition of a vcjob (its phase is added when rendered); a Pending one
    with the operator's `vcflow.io/unschedulable` note says why it waits, as a vcjob of
    the local runtime does (reason `Unschedulable`)."""
    status = job.status
    found = {
        "createTime": shared_text(job.metadata.creation_timestamp),
        "runningDuration": status.running_duration if status else None,
        "taskStatusCount": (
            _shared({k: v.to_dict() for k, v in status.task_status_count.items()})
            if status and status.task_status_count
            else None
        ),
    }
    note = job.metadata.annotations.get(UNSCHEDULABLE_ANNOTATION)
    if note and job.phase in ("", JobPhase.PENDING):
        found["reason"], found["message"] = UNSCHEDULABLE, note
    return found


#: one object per distinct value of what many entries hold alike: a wide flow's jobs mostly
#: end with the same task counts (`{"t": {"phase": {"Succeeded": 1}}}`) and share their
#: timestamps (to the second); never changed once made (a condition is replaced, not
#: edited); each table cleared past `_SHARED_MAX` values
_COUNTS: dict[str, dict[str, Any]] = {}
_TEXTS: dict[str, str] = {}
_SHARED_MAX = 4096
V = TypeVar("V")


def _one_of(table: dict[str, V], key: str, value: V) -> V:
    found = table.get(key)
    if found is None:
        if len(table) >= _SHARED_MAX:
            table.clear()
        table[key] = found = value
    return found


def shared_text(text: str | None) -> str | None:
    """`text`, or an equal string kept before."""
    return None if text is None else _one_of(_TEXTS, text, text)


def _shared(counts: dict[str, Any]) -> dict[str, Any]:
    return _one_of(_COUNTS, json.dumps(counts, sort_keys=True), counts)


def conflict_message(job: VCJob) -> str:
    ref = job.metadata.controller_ref()
    owner = f"{ref.kind} {ref.name}" if ref else "no controller"
    return f"vcjob {job.name} exists and is not this flow's (owned by {owner})"


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return clock.parse_rfc3339(text)
    except ValueError:
        return None


def build_entries(flow: JobFlow) -> list[Entry]:
    """The flow's entries, in flow order, with their successors, the probes they make and
    whether an entry depends on their failure (`handled`)."""
    entries: dict[str, Entry] = {}
    for i, spec_entry in enumerate(flow.flows):
        targets = tuple(dict.fromkeys(spec_entry.targets))
        entry = Entry(
            name=spec_entry.name,
            job=names.job_name(flow.name, spec_entry.name),
            index=i,
            targets=targets,
            any_of=spec_entry.strategy == "any",
            outcome=spec_entry.outcome,
            policy=retry.of(flow, spec_entry),
            deadline=spec_entry.active_deadline_seconds or None,
        )
        if targets and entry.outcome == DependencyOutcome.COMPLETED:
            entry.probe = spec_entry.probe
        entries[entry.name] = entry
    for entry in entries.values():
        for target in entry.targets:
            found = entries.get(target)
            if found is None:
                continue
            found.successors.append(entry.name)
            if entry.outcome != DependencyOutcome.COMPLETED:
                found.handled = True
            if entry.probe is not None:
                found.probed_by.append(entry.name)
    return list(entries.values())
