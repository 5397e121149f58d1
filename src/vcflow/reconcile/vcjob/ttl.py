"""`ttlSecondsAfterFinished` (reference §11): when the garbage collector deletes a finished
job. Completed, Failed and Terminated jobs only — an Aborted job is kept forever (Volcano's
B11, reproduced). The clock starts at `status.state.lastTransitionTime`, which vcflow moves
only on phase changes (R3). Pure.
"""

from __future__ import annotations

from datetime import datetime

from vcflow.api.clock import later, parse_rfc3339
from vcflow.api.phases import FINISHED_JOB_PHASES
from vcflow.api.vcjob import VCJob


def expires_at(job: VCJob) -> datetime | None:
    """When the job is to be deleted (with its pods); None when never."""
    ttl = job.spec.ttl_seconds_after_finished if job.spec else None
    status = job.status
    if ttl is None or status is None or status.phase not in FINISHED_JOB_PHASES:
        return None
    since = status.state.last_transition_time if status.state else None
    if not since:
        return None
    return later(parse_rfc3339(since), ttl)  # clamped: a job stored before admission bounded it
