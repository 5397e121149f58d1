"""Volcano's enumerations with their exact wire strings (`Succeed`, not `Succeeded`).

Reference: volcano-jobflow.md §2.5 and §2.6; volcano-vcjob.md for pod-level values.
"""

from __future__ import annotations

from enum import StrEnum


class FlowPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEED = "Succeed"
    FAILED = "Failed"
    TERMINATING = "Terminating"


class JobPhase(StrEnum):
    PENDING = "Pending"
    ABORTING = "Aborting"
    ABORTED = "Aborted"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"
    FAILED = "Failed"


#: Phases after which a vcjob never changes again (GC/TTL "finished").
FINISHED_JOB_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED})


class PodPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


class RetainPolicy(StrEnum):
    RETAIN = "retain"
    DELETE = "delete"


class DependencyStrategy(StrEnum):
    """vcflow's `dependsOn.strategy` (compatibility row 5): wait for all targets or any one."""

    ALL = "all"
    ANY = "any"


class DependencyOutcome(StrEnum):
    """vcflow's `dependsOn.outcome` (docs/flow-features.md §3): what of each target the entry
    waits for — Slurm's afterok, afternotok, afterany."""

    COMPLETED = "Completed"
    FAILED = "Failed"
    FINISHED = "Finished"


class RetryStrategy(StrEnum):
    """`retryPolicy.policy` (Volcano's retry design doc): when a flow entry's job runs again."""

    ON_FAILURE = "OnFailure"
    ALWAYS = "Always"
    NEVER = "Never"


class BackoffType(StrEnum):
    """`retryPolicy.backoff.type`: the same delay every time, or doubling from `baseDelay`."""

    EXPONENTIAL = "Exponential"
    CONSTANT = "Constant"


class Action(StrEnum):
    ABORT_JOB = "AbortJob"
    RESTART_JOB = "RestartJob"
    RESTART_TASK = "RestartTask"
    RESTART_POD = "RestartPod"
    RESTART_PARTITION = "RestartPartition"
    TERMINATE_JOB = "TerminateJob"
    COMPLETE_JOB = "CompleteJob"
    RESUME_JOB = "ResumeJob"
    SYNC_JOB = "SyncJob"
    ENQUEUE_JOB = "EnqueueJob"
    SYNC_QUEUE = "SyncQueue"
    OPEN_QUEUE = "OpenQueue"
    CLOSE_QUEUE = "CloseQueue"


class Event(StrEnum):
    ANY = "*"
    POD_PENDING = "PodPending"
    POD_RUNNING = "PodRunning"
    POD_FAILED = "PodFailed"
    POD_EVICTED = "PodEvicted"
    UNKNOWN = "Unknown"
    TASK_COMPLETED = "TaskCompleted"
    OUT_OF_SYNC = "OutOfSync"
    COMMAND_ISSUED = "CommandIssued"
    JOB_UPDATED = "JobUpdated"
    TASK_FAILED = "TaskFailed"


#: Events and actions a user may write in a policy (vcjob webhook, reference §2.6).
USER_EVENTS = (
    Event.ANY,
    Event.POD_FAILED,
    Event.POD_EVICTED,
    Event.POD_PENDING,
    Event.UNKNOWN,
    Event.TASK_COMPLETED,
    Event.TASK_FAILED,
    Event.JOB_UPDATED,
)
USER_ACTIONS = (
    Action.ABORT_JOB,
    Action.RESTART_JOB,
    Action.RESTART_TASK,
    Action.RESTART_POD,
    Action.RESTART_PARTITION,
    Action.TERMINATE_JOB,
    Action.COMPLETE_JOB,
    Action.RESUME_JOB,
)
