"""The values that cross the boundary of the pure vcjob runtime: what a shell hands to
`lifecycle.handle` (a `JobContext` and a `Request`) and what it gets back (a `Decision`).

Frozen dataclasses; the shell owns the copies it keeps (per job: the PodGroup state, the
scheduler's unschedulable verdict, the pending delayed actions). Pure data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from vcflow.api.phases import Action, Event
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob, VCJobStatus


class Group(StrEnum):
    """The job's PodGroup as far as it matters locally (reference §10.6, §13.2): absent,
    waiting for admission, or admitted. Pods are created only while `ADMITTED`."""

    NONE = ""
    PENDING = "Pending"
    ADMITTED = "Inqueue"


@dataclass(frozen=True)
class Request:
    """One observation to handle (reference §4.1). `action` is set for Commands and fired
    delayed actions (policies are not consulted then); `job_version` is the pod's
    `volcano.sh/job-version` (0 for requests without a pod); `at`, when the observed change
    happened, if known (a pod's end: its containers' `finishedAt`) — a shell that sees it
    late (a pod that ended while no runtime ran) handles the request as of then."""

    event: Event = Event.OUT_OF_SYNC
    action: Action | None = None
    task: str = ""
    pod: str = ""
    pod_uid: str = ""
    exit_code: int = 0
    job_version: int = 0
    job_uid: str = ""
    at: datetime | None = None


@dataclass(frozen=True)
class DelayedAction:
    """A policy action waiting for its `timeout` (§4.4), kept per job under the pod name."""

    action: Action
    event: Event
    due: datetime
    task: str = ""
    pod: str = ""
    pod_uid: str = ""


@dataclass(frozen=True)
class JobEvent:
    """A Kubernetes Event to record on the job (§4.6)."""

    reason: str
    message: str
    type: str = "Normal"


@dataclass(frozen=True)
class JobContext:
    """Everything `handle` reads about one job.

    `job` is the stored vcjob (defaults applied, status as last written); `pods` its pod
    objects by name, `Terminating` ones included; `group` its PodGroup state; `delayed` its
    pending delayed actions; `unschedulable` the scheduler's reason why the job can never be
    admitted on this machine (empty when it can), with a Warning event; `waiting` why it
    waits now besides that (a queue, a hold, resources in use; no event); `creating` how
    many pods of an earlier decision the shell has still to create — while it has, SyncJob
    creates none (counting the missing pods as Pending), as a Kubernetes controller waits
    for its expectations.
    `pods` may be any mapping; a `podset.PodSet` the shell keeps spares indexing it again
    at every request."""

    job: VCJob
    pods: Mapping[str, Pod] = field(default_factory=dict)
    group: Group = Group.NONE
    delayed: Mapping[str, DelayedAction] = field(default_factory=dict)
    unschedulable: str = ""
    creating: int = 0
    waiting: str = ""


@dataclass(frozen=True)
class Decision:
    """What handling one request decided; the shell applies it in this order:

    1. `delete`: pod names to mark `volcano.sh/controller-out-of-sync` and then delete;
    2. `create`: new pod objects (Pending, unplaced; the store assigns the uid);
    3. `status`: the job's whole status, written when it differs from the stored one;
    4. `group` and `delayed` replace the shell's copies (timers: each `DelayedAction.due`);
    5. `events` are recorded on the job.
    """

    status: VCJobStatus
    group: Group
    delayed: Mapping[str, DelayedAction]
    create: tuple[Pod, ...] = ()
    delete: tuple[str, ...] = ()
    events: tuple[JobEvent, ...] = ()
