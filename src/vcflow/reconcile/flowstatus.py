"""The JobFlow status a `FlowIndex` renders from its `FlowState`, in wire form: the status
lists, `conditions` (Volcano's per-vcjob ones, plus vcflow's `Waiting` — with `Backoff` for
a retry that waits — and `Skipped` entries, rows 18 and 20), the cumulative `jobStatusList`,
the phase (with `DeadlineExceeded`, or `Held` by `admission: Hold`) and the last `vcflow
retry` carried out. Called by `FlowIndex.status`. Pure; O(entries + edges).
"""

from __future__ import annotations

from typing import Any

from vcflow.api import clock
from vcflow.api.compactstatus import STATUS_LISTS
from vcflow.api.phases import DependencyOutcome, FlowPhase
from vcflow.reconcile import phase as phases
from vcflow.reconcile import scheduling
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
from vcflow.reconcile.flowstate import FlowState
from vcflow.reconcile.language import EXIT_HANDLERS

#: why an item of a `for` entry waits: its `parallelism` has no place for it
PARALLELISM = "Parallelism"
_EXIT_HANDLER = "an exit handler (spec.onExit): it runs once every other entry has ended"
#: the phases the rest of a flow with exit handlers ends in
_ENDED = (FlowPhase.SUCCEED, FlowPhase.FAILED)


def render(state: FlowState) -> dict[str, Any]:
    lists: dict[str, list[str]] = {}
    conditions: dict[str, dict[str, Any]] = {}
    for entry in state.entries.values():
        fan = state.fans.get(entry.name)
        if fan is not None:  # a `for` entry: no vcjob of its own, its items' counts
            conditions[entry.job] = _fan(state, entry, fan)
        elif entry.state == State.SKIPPED:
            conditions[entry.job] = {
                "phase": SKIPPED,
                "reason": entry.verdict,
                "message": entry.verdict_message,
            }
        elif entry.state == State.BACKOFF:
            conditions[entry.job] = _backoff(state, entry)
        elif entry.state == State.FAILED and entry.phase is None:  # (its `when` failed it)
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
            conditions[entry.job] = _waiting(state, entry)
    data: dict[str, Any] = {k: lists[k] for k in STATUS_LISTS if lists.get(k)}
    if state.history:
        data["jobStatusList"] = list(state.history.values())
    if conditions:
        data["conditions"] = conditions
    data["state"] = _flow_state(state)
    if state.last_retry:
        data["lastRetry"] = state.last_retry
    return data


def _flow_state(state: FlowState) -> dict[str, Any]:
    found: dict[str, Any] = {"phase": str(state.phase)}
    ends = (FlowPhase.TERMINATING, FlowPhase.FAILED)
    if state.expired and state.phase in ends and state.deadline_at is not None:
        seconds = state.flow.spec.active_deadline_seconds if state.flow.spec else None
        found["reason"] = DEADLINE_EXCEEDED
        found["message"] = (
            f"activeDeadlineSeconds ({seconds}s) passed at {clock.rfc3339(state.deadline_at)}"
        )
    elif state.expired and state.phase in ends:
        found["reason"] = DEADLINE_EXCEEDED
    elif state.scheduling.held and state.phase == FlowPhase.PENDING:
        found["reason"], found["message"] = scheduling.HELD, state.scheduling.held
    elif state.phase == FlowPhase.RUNNING and state.exits.base in _ENDED:
        found["reason"] = EXIT_HANDLERS  # (the other entries have ended, or their last jobs)
        found["message"] = state.exits.message(state.exit_entries())
    return found


def _waiting(state: FlowState, entry: Entry) -> dict[str, Any]:
    if entry.reason:
        return {"phase": WAITING, "reason": entry.reason, "message": entry.message}
    if entry.name in state.exits.names:
        return {"phase": WAITING, "reason": DEPENDENCIES, "message": _EXIT_HANDLER}
    if state.scheduling.held and entry.ready():  # (`admission: Hold`: the flow waits)
        return {"phase": WAITING, "reason": scheduling.HELD, "message": state.scheduling.held}
    if entry.item is not None:
        fan = state.fans[entry.item.group]
        if fan.held is not None:
            return _held(state, fan)
        message = (
            f"waiting for a place: parallelism {fan.parallelism} "
            f"({len(fan.counted)} of {fan.name}'s items unfinished)"
        )
        return {"phase": WAITING, "reason": PARALLELISM, "message": message}
    entries, table, outcome = state.entries, CONTRIBUTION, entry.outcome
    targets = entry.targets
    if entry.probe_met:  # (met for good by their probe)
        targets = tuple(t for t in targets if t not in entry.probe_met)
    states = [entries[t].state if t in entries else None for t in targets]
    # the targets not met yet; a dead one (a Failed flow skips nothing: it waits) with its
    # state, a probed one with what its probe said
    pending = [
        target if got is None or got not in OUTCOMES else f"{target} ({got})"
        for target, got in zip(targets, states, strict=True)
        if got is None or table[outcome, got] != MET
    ]
    if entry.probe is not None:
        notes = state.probe_notes
        pending = [
            f"{t} (probe: {notes[entry.name, t]})" if (entry.name, t) in notes else t
            for t in pending
        ]
    word = "any of" if entry.any_of else "all of"
    message = f"waiting for {word}: {', '.join(pending)}"
    if entry.outcome != DependencyOutcome.COMPLETED:
        message += f" (outcome: {entry.outcome})"
    return {"phase": WAITING, "reason": DEPENDENCIES, "message": message}


def _fan(state: FlowState, entry: Entry, fan: FanOut) -> dict[str, Any]:
    """A `for` entry's condition: Running, Completed or Failed, reason `ForEach` (what a
    restarted controller expands it again by), its items' counts in the message. One that
    holds its items (a retry reset its dependencies: `expansion.hold`) is Waiting for them
    (still `ForEach`: a restarted controller holds them again), or has its own outcome."""
    message = fan.counts(state.entries)
    if fan.held is not None:
        if entry.state in OUTCOMES:
            return {
                "phase": str(entry.state),
                "reason": entry.verdict,
                "message": entry.verdict_message,
            }
        waiting = _waiting(state, entry)["message"]
        return {"phase": WAITING, "reason": FOR_EACH, "message": f"{waiting}; {message}"}
    phase = {State.COMPLETED: "Completed", State.FAILED: "Failed"}.get(entry.state, "Running")
    if entry.verdict:
        message = f"{entry.verdict_message}; {message}"
    return {"phase": phase, "reason": FOR_EACH, "message": message}


def _held(state: FlowState, fan: FanOut) -> dict[str, Any]:
    """An item its `for` entry holds: it waits for that entry's dependencies."""
    waiting = _waiting(state, state.entries[fan.name])["message"]
    return {"phase": WAITING, "reason": DEPENDENCIES, "message": f"{fan.name} is {waiting}"}


def _backoff(state: FlowState, entry: Entry) -> dict[str, Any]:
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
            return _waiting(state, entry)
        if entry.item is not None and state.fans[entry.item.group].held is not None:
            return _held(state, state.fans[entry.item.group])
        message = f"{which} is due ({why})"
        if entry.message:
            message += f": {entry.message}"
    else:
        when = clock.rfc3339(entry.next_at) if entry.next_at else "?"
        message = f"{which} at {when} ({why})"
    return {"phase": WAITING, "reason": BACKOFF, "message": message}
