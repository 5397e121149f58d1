"""The JobFlow status a `FlowIndex` renders, in wire form: the status lists, `conditions`
(Volcano's per-vcjob ones, plus vcflow's `Waiting` — with `Backoff` for a retry that waits —
and `Skipped` entries, rows 18 and 20), the cumulative `jobStatusList`, the phase (with
`DeadlineExceeded`) and the last `vcflow retry` carried out. Called by `FlowIndex.status`.
Pure; O(entries + edges).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vcflow.api import clock
from vcflow.api.phases import DependencyOutcome, FlowPhase
from vcflow.reconcile import phase as phases
from vcflow.reconcile.entries import (
    BACKOFF,
    CONTRIBUTION,
    DEADLINE_EXCEEDED,
    DEPENDENCIES,
    MET,
    NAME_CONFLICT,
    OUTCOMES,
    SKIPPED,
    WAITING,
    Entry,
    State,
)
from vcflow.reconcile.fanout import FOR_EACH, FanOut
from vcflow.reconcile.language import EXIT_HANDLERS

if TYPE_CHECKING:
    from vcflow.reconcile.flow import FlowIndex

#: why an item of a `for` entry waits: its `parallelism` has no place for it
PARALLELISM = "Parallelism"
_EXIT_HANDLER = "an exit handler (spec.onExit): it runs once every other entry has ended"
#: the phases the rest of a flow with exit handlers ends in
_ENDED = (FlowPhase.SUCCEED, FlowPhase.FAILED)
#: The status lists in the model's field order (`JobFlowStatus`).
STATUS_LISTS = (
    "pendingJobs",
    "runningJobs",
    "failedJobs",
    "completedJobs",
    "terminatedJobs",
    "unKnowJobs",
)


def render(index: FlowIndex) -> dict[str, Any]:
    lists: dict[str, list[str]] = {}
    conditions: dict[str, dict[str, Any]] = {}
    for entry in index.entries.values():
        state = entry.state
        fan = index.fans.get(entry.name)
        if fan is not None:  # a `for` entry: no vcjob of its own, its items' counts
            conditions[entry.job] = _fan(index, entry, fan)
        elif state == State.SKIPPED:
            conditions[entry.job] = {
                "phase": SKIPPED,
                "reason": entry.verdict,
                "message": entry.verdict_message,
            }
        elif state == State.BACKOFF:
            conditions[entry.job] = _backoff(index, entry)
        elif state == State.FAILED and entry.phase is None:  # (its `when` failed it)
            lists.setdefault("failedJobs", []).append(entry.job)
            conditions[entry.job] = {
                "phase": str(State.FAILED),
                "reason": entry.verdict,
                "message": entry.verdict_message,
            }
        elif entry.phase is not None and (entry.observed or entry.gone):
            lists.setdefault(phases.status_list(entry.phase), []).append(entry.job)
            cond = {"phase": str(entry.phase)}  # the model's field order, phase first
            cond.update((k, v) for k, v in entry.condition.items() if v is not None)
            cond["phase"] = str(entry.phase)
            if entry.verdict:
                cond["reason"], cond["message"] = entry.verdict, entry.verdict_message
            conditions[entry.job] = cond
        elif not entry.has_job or entry.reason == NAME_CONFLICT:
            conditions[entry.job] = _waiting(index, entry)
    data: dict[str, Any] = {k: lists[k] for k in STATUS_LISTS if lists.get(k)}
    if index.history:
        data["jobStatusList"] = list(index.history.values())
    if conditions:
        data["conditions"] = conditions
    data["state"] = _state(index)
    if index.last_retry:
        data["lastRetry"] = index.last_retry
    return data


def _state(index: FlowIndex) -> dict[str, Any]:
    state: dict[str, Any] = {"phase": str(index.phase)}
    ends = (FlowPhase.TERMINATING, FlowPhase.FAILED)
    if index.expired and index.phase in ends and index.deadline_at is not None:
        seconds = index.flow.spec.active_deadline_seconds if index.flow.spec else None
        state["reason"] = DEADLINE_EXCEEDED
        state["message"] = (
            f"activeDeadlineSeconds ({seconds}s) passed at {clock.rfc3339(index.deadline_at)}"
        )
    elif index.expired and index.phase in ends:
        state["reason"] = DEADLINE_EXCEEDED
    elif index.phase == FlowPhase.RUNNING and index.exits.base in _ENDED:
        state["reason"] = EXIT_HANDLERS  # (the other entries have ended, or their last jobs)
        state["message"] = index.exits.message(index.exit_entries())
    return state


def _waiting(index: FlowIndex, entry: Entry) -> dict[str, Any]:
    if entry.reason:
        return {"phase": WAITING, "reason": entry.reason, "message": entry.message}
    if entry.name in index.exits.names:
        return {"phase": WAITING, "reason": DEPENDENCIES, "message": _EXIT_HANDLER}
    if entry.item is not None:
        fan = index.fans[entry.item.group]
        if fan.held is not None:
            return _held(index, fan)
        message = (
            f"waiting for a place: parallelism {fan.parallelism} "
            f"({len(fan.counted)} of {fan.name}'s items unfinished)"
        )
        return {"phase": WAITING, "reason": PARALLELISM, "message": message}
    entries, table, outcome = index.entries, CONTRIBUTION, entry.outcome
    targets = entry.targets
    if entry.probe_met:  # (met for good by their probe)
        targets = tuple(t for t in targets if t not in entry.probe_met)
    states = [entries[t].state if t in entries else None for t in targets]
    # the targets not met yet; a dead one (a Failed flow skips nothing: it waits) with its
    # state, a probed one with what its probe said
    pending = [
        target if state is None or state not in OUTCOMES else f"{target} ({state})"
        for target, state in zip(targets, states, strict=True)
        if state is None or table[outcome, state] != MET
    ]
    if entry.probe is not None:
        notes = index.probe_notes
        pending = [
            f"{t} (probe: {notes[entry.name, t]})" if (entry.name, t) in notes else t
            for t in pending
        ]
    word = "any of" if entry.any_of else "all of"
    message = f"waiting for {word}: {', '.join(pending)}"
    if entry.outcome != DependencyOutcome.COMPLETED:
        message += f" (outcome: {entry.outcome})"
    return {"phase": WAITING, "reason": DEPENDENCIES, "message": message}


def _fan(index: FlowIndex, entry: Entry, fan: FanOut) -> dict[str, Any]:
    """A `for` entry's condition: Running, Completed or Failed, reason `ForEach` (what a
    restarted controller expands it again by), its items' counts in the message. One that
    holds its items (a retry reset its dependencies: `expansion.hold`) is Waiting for them
    (still `ForEach`: a restarted controller holds them again), or has its own outcome."""
    message = fan.counts(index.entries)
    if fan.held is not None:
        if entry.state in OUTCOMES:
            return {
                "phase": str(entry.state),
                "reason": entry.verdict,
                "message": entry.verdict_message,
            }
        waiting = _waiting(index, entry)["message"]
        return {"phase": WAITING, "reason": FOR_EACH, "message": f"{waiting}; {message}"}
    phase = {State.COMPLETED: "Completed", State.FAILED: "Failed"}.get(entry.state, "Running")
    if entry.verdict:
        message = f"{entry.verdict_message}; {message}"
    return {"phase": phase, "reason": FOR_EACH, "message": message}


def _held(index: FlowIndex, fan: FanOut) -> dict[str, Any]:
    """An item its `for` entry holds: it waits for that entry's dependencies."""
    waiting = _waiting(index, index.entries[fan.name])["message"]
    return {"phase": WAITING, "reason": DEPENDENCIES, "message": f"{fan.name} is {waiting}"}


def _backoff(index: FlowIndex, entry: Entry) -> dict[str, Any]:
    """A retry that waits: the attempt, when it runs and why; once due, what it waits for."""
    after = entry.attempt + 1
    if entry.first_attempt == 1:
        which = f"attempt {after} of {entry.last_attempt}"
    else:
        which = f"attempt {after} (retries up to attempt {entry.last_attempt})"
    why = "vcflow retry" if entry.ended == "retried" else f"attempt {entry.attempt} {entry.ended}"
    if entry.renew:
        if entry.reason:
            return {"phase": WAITING, "reason": entry.reason, "message": entry.message}
        if not entry.ready():
            return _waiting(index, entry)
        if entry.item is not None and index.fans[entry.item.group].held is not None:
            return _held(index, index.fans[entry.item.group])
        message = f"{which} is due ({why})"
        if entry.message:
            message += f": {entry.message}"
    else:
        when = clock.rfc3339(entry.next_at) if entry.next_at else "?"
        message = f"{which} at {when} ({why})"
    return {"phase": WAITING, "reason": BACKOFF, "message": message}
