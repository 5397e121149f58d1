"""A flow's `jobStatusList`: one item per entry's vcjob, kept across its attempts (Volcano's
rules, reference §3.7, with the controller's time) with vcflow's attempt bookkeeping —
`attempt`, `firstAttempt`, `nextAttemptTime` (docs/flow-features.md §1). Items are replaced,
never changed in place: a rendered status shares them. Pure; `FlowIndex` calls these.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from vcflow.api import clock
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.entries import Entry, State
from vcflow.reconcile.entries import shared_text as _shared

Items = dict[str, dict[str, Any]]


def record(items: Items, entry: Entry, phase: str, now: datetime, *, job: VCJob | None) -> None:
    """The entry's job is in `phase` now (`job`: as seen, when it was)."""
    stamp = _shared(clock.rfc3339(now))
    item = dict(items.get(entry.job, {"name": entry.job}))
    item["state"] = phase  # ("" for a vcjob with no phase yet: it has an entry too)
    if job is not None:
        item["startTimestamp"] = _shared(job.metadata.creation_timestamp)
        item["endTimestamp"] = _shared(end_time(job))
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
    item["nextAttemptTime"] = clock.rfc3339(entry.next_at) if waiting and entry.next_at else None
    if phase or job is not None or entry.job in items:
        items[entry.job] = {k: v for k, v in item.items() if v is not None}


def new_attempt(items: Items, entry: Entry, attempt: int) -> None:
    """The vcjob of the entry's attempt `attempt` was created: no phase yet, no retry due."""
    item = dict(items.get(entry.job, {"name": entry.job}))
    for key in ("nextAttemptTime", "startTimestamp", "endTimestamp", "outputs"):
        item.pop(key, None)
    item["state"] = ""
    item["restartCount"] = attempt - 1
    item["attempt"] = attempt
    if entry.first_attempt > 1:
        item["firstAttempt"] = entry.first_attempt
    items[entry.job] = item


def retry_due(items: Items, entry: Entry, at: datetime) -> None:
    """`vcflow retry` reset the entry: its next attempt is due `at`, with a fresh budget."""
    item = dict(items[entry.job])
    item["nextAttemptTime"] = clock.rfc3339(at)
    item["firstAttempt"] = entry.first_attempt
    items[entry.job] = item


def no_retry_due(items: Items, entry: Entry) -> None:
    item = items.get(entry.job)
    if item is not None and "nextAttemptTime" in item:
        items[entry.job] = {k: v for k, v in item.items() if k != "nextAttemptTime"}


def end_time(job: VCJob) -> str | None:
    created = job.metadata.creation_timestamp
    duration = job.status.running_duration if job.status else None
    if not created or not duration:
        return None
    seconds = clock.parse_go_duration(duration)
    if seconds is None:
        return None
    return clock.rfc3339(clock.parse_rfc3339(created) + timedelta(seconds=seconds))
