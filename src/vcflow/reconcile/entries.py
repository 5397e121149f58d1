"""What a JobFlow's reconcile knows of one entry (`Entry`, its `State`), the reasons and
annotations of vcflow's flow features, and `vcflow retry`'s request — shared by the index
(`flow`) and the status it renders (`flowstatus`). Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from vcflow.api import clock
from vcflow.api.jobflow import Probe
from vcflow.api.phases import DependencyOutcome
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
#: flow ends Failed (SEMANTICS rows 7, 11).
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


@dataclass
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
    probe_met: set[str] = field(default_factory=set)
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


@dataclass(frozen=True)
class RetryRequest:
    """`vcflow retry`'s request (the `vcflow.io/retry` annotation, JSON)."""

    id: str
    at: datetime
    entries: tuple[str, ...] | None = None
    restart_successful: bool = False

    def to_annotation(self) -> str:
        data: dict[str, Any] = {"id": self.id, "at": clock.rfc3339(self.at)}
        if self.entries is not None:
            data["entries"] = list(self.entries)
        if self.restart_successful:
            data["restartSuccessful"] = True
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def parse(cls, text: str) -> RetryRequest | None:
        try:
            data = json.loads(text)
            at = clock.parse_rfc3339(str(data["at"]))
            entries = data.get("entries")
            return cls(
                str(data["id"]),
                at,
                None if entries is None else tuple(str(e) for e in entries),
                bool(data.get("restartSuccessful", False)),
            )
        except (ValueError, KeyError, TypeError):
            return None


def contribution(outcome: DependencyOutcome, target: State) -> int:
    """What a target in state `target` does to a dependency wanting `outcome` of it."""
    if target not in OUTCOMES:
        return OPEN
    if outcome == DependencyOutcome.FINISHED:
        return MET
    if outcome == DependencyOutcome.FAILED:
        return MET if target == State.FAILED else DEAD
    return DEAD if target == State.FAILED else MET
