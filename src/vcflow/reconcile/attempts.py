"""An entry's attempts (docs/flow-features.md §1): a failed one starts the backoff before
the next (its due time a timer), the next one's vcjob is created, or a waiting retry is not
made after all (the flow failed or stops). Pure; `FlowIndex` calls these with its parts.
"""

from __future__ import annotations

from datetime import datetime

from vcflow.api.phases import JobPhase
from vcflow.reconcile import history, retry, timers
from vcflow.reconcile.entries import RETRY_CANCELLED, Entry, State
from vcflow.reconcile.readiness import Readiness


def start_backoff(
    clock_timers: timers.Timers, flow_uid: str, entry: Entry, now: datetime, ended: str
) -> None:
    """The attempt ended (`ended`: its phase, or DeadlineExceeded) with retries left: the
    next one is due after the policy's delay (its jitter drawn from the flow, entry and
    attempt)."""
    done = entry.attempt - entry.first_attempt + 1
    seed = f"{flow_uid}/{entry.name}/{entry.attempt}"
    entry.next_at = retry.due(now, retry.delay(entry.policy, done, seed=seed))
    entry.ended = ended
    entry.renew = False
    clock_timers.set(entry.next_at, timers.RETRY, entry.name)


def new_attempt(ready: Readiness, items: history.Items, entry: Entry, attempt: int) -> None:
    """The vcjob of the entry's attempt `attempt` was created: the entry is live again."""
    ready.set_attempt(entry, attempt)
    entry.renew, entry.next_at, entry.ended = False, None, ""
    entry.deadline_hit, entry.deadline_at, entry.created_at = False, None, None
    entry.gone, entry.verdict, entry.verdict_message = False, "", ""
    entry.condition = {}
    ready.move(entry, State.LIVE, "")
    history.new_attempt(items, entry, attempt)


def cancel_retry(ready: Readiness, items: history.Items, entry: Entry, why: str) -> None:
    """The waiting retry is not made (`why`): the last attempt's outcome stands."""
    entry.renew, entry.next_at = False, None
    outcome = State.COMPLETED if entry.ended == JobPhase.COMPLETED else State.FAILED
    if outcome == State.FAILED:
        entry.verdict = RETRY_CANCELLED
        entry.verdict_message = f"attempt {entry.attempt + 1} was not made: {why}"
    ready.move(entry, outcome, entry.phase)
    history.no_retry_due(items, entry)
