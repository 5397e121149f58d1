"""The runtime's timers: the jobs with a delayed action (Volcano's delayed job actions,
a restart after a pod's backoff) or a TTL after they finished (`ttlSecondsAfterFinished`),
when the earliest is due, and which one fires next. The executor carries it out."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from vcflow.api import names
from vcflow.reconcile.vcjob import ttl
from vcflow.runtime.jobrecord import JobRecord

Key = names.ObjectKey


class JobTimers:
    def __init__(self) -> None:
        self.timed: set[Key] = set()  # jobs with a delayed action or a TTL

    def __contains__(self, key: Key) -> bool:
        return key in self.timed

    def __bool__(self) -> bool:
        return bool(self.timed)

    def update(self, key: Key, record: JobRecord) -> None:
        """Track `key` while its record has a timer."""
        if record.delayed or ttl.expires_at(record.job) is not None:
            self.timed.add(key)
        else:
            self.timed.discard(key)

    def discard(self, key: Key) -> None:
        self.timed.discard(key)

    def clear(self) -> None:
        self.timed.clear()

    def next_due(self, jobs: Mapping[Key, JobRecord]) -> datetime | None:
        """When the earliest timer is due, None without timers."""
        return min((d for key in self.timed for d in jobs[key].dues()), default=None)

    def due(self, jobs: Mapping[Key, JobRecord], now: datetime) -> tuple[Key, str | None] | None:
        """The timer to fire now, in job order: (job, its delayed action's name), or (job,
        None) for a finished job's TTL; None when none is due."""
        for key in sorted(self.timed):
            record = jobs[key]
            for name, delayed in sorted(record.delayed.items(), key=lambda i: i[1].due):
                if delayed.due <= now:
                    return key, name
            expiry = ttl.expires_at(record.job)
            if expiry is not None and expiry <= now:
                return key, None
        return None
