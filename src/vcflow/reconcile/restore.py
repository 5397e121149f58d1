"""What a stored JobFlow status tells the `FlowState` of a new `FlowIndex` (a restarted
controller, a resync): each entry's outcome (row 16: remembered even when its vcjob is
gone), a Skipped entry, the attempt of its vcjob and a retry that waits
(`jobStatusList[].nextAttemptTime`, so the schedule is kept), and a flow that ended by its
deadline; a compact status is read through its `compactJobStatus` (`api.compactstatus`).
Pure; `FlowIndex.restore` calls it.
"""

from __future__ import annotations

from collections.abc import Mapping

from vcflow.api import compactstatus, foreach
from vcflow.api.jobflow import Condition, JobFlowStatus
from vcflow.reconcile import expansion, timers
from vcflow.reconcile.entries import (
    DEADLINE_EXCEEDED,
    SKIPPED,
    WAITING,
    State,
    parse_time,
    settled,
)
from vcflow.reconcile.fanout import FOR_EACH
from vcflow.reconcile.flowstate import FlowState
from vcflow.reconcile.language import GATE_FAILURES


def restore(state: FlowState, status: JobFlowStatus | None) -> None:
    if status is None:
        return
    if status.compact_job_status is not None:  # every record, from the compact form
        status = JobFlowStatus.model_validate(compactstatus.expand(status.to_dict()))
    stored = status.state
    if stored is not None and stored.reason == DEADLINE_EXCEEDED:
        state.expired = True
    for item in status.job_status_list or []:
        state.history[item.name] = item.to_dict()
    ready = state.ready
    conditions = status.conditions or {}
    if state.has_for:
        _expand_again(state, conditions)
    for job, cond in conditions.items():
        entry = state.by_job.get(job)
        if entry is None or cond.phase == WAITING or entry.name in state.fans:
            continue
        entry.verdict, entry.verdict_message = cond.reason or "", cond.message or ""
        if cond.phase == SKIPPED:
            ready.move(entry, State.SKIPPED, None)
            continue
        if cond.reason in GATE_FAILURES:  # (failed by its `when`: it never had a vcjob)
            ready.move(entry, State.FAILED, None)
            continue
        entry.condition = cond.to_dict()
        entry.gone = True  # until a job in the store says otherwise
        ready.move(entry, settled(cond.phase or ""), cond.phase or "")
    for entry in state.entries.values():
        known = state.history.get(entry.job)
        if known is None:
            continue
        ready.set_attempt(entry, int(known.get("attempt") or 1))
        entry.first_attempt = int(known.get("firstAttempt") or 1)
        phase = entry.phase if entry.phase is not None else (known.get("state") or "")
        waiting = known.get("nextAttemptTime")
        if waiting:
            entry.gone = True
            entry.ended = str(known.get("state") or "")
            entry.next_at = parse_time(str(waiting))
            ready.move(entry, State.BACKOFF, phase)
            if entry.next_at is not None:
                state.timers.set(entry.next_at, timers.RETRY, entry.name)
        elif entry.phase is None:
            entry.gone = True
            ready.move(entry, settled(phase), phase)
    if state.args_env is not None:
        _restore_outputs(state)


def _expand_again(state: FlowState, conditions: Mapping[str, Condition]) -> None:
    """The `for` entries the status says were expanded (their `ForEach` condition): expanded
    again the same way — the items come from the spec, the stored arguments or the targets'
    stored outputs — before their items' records are read."""
    for job, cond in conditions.items():
        group = state.by_job.get(job)
        if cond.reason != FOR_EACH or group is None or group.name in state.fans:
            continue
        outputs = {}
        for target in group.targets:
            kept = state.history.get(state.entries[target].job, {}).get("outputs")
            outputs[target] = kept if isinstance(kept, dict) else {}
        try:
            values = expansion.values_of(state, group, outputs)
        except foreach.ItemsError:
            continue
        fan = expansion.expand(state, group, values)
        if cond.phase == WAITING:  # (it held its items: `expansion.hold`)
            fan.held = set()
            state.ready.move(group, State.NONE, None)


def _restore_outputs(state: FlowState) -> None:
    """The outputs a completed entry handed on, as its `jobStatusList` item keeps them;
    one without (it had none, or they were not read yet) is read again."""
    for entry in state.entries.values():
        if entry.state != State.COMPLETED:
            continue
        kept = (state.history.get(entry.job) or {}).get("outputs")
        if isinstance(kept, dict):
            state.outputs.keep(entry.name, kept)
        else:
            state.outputs.completed(entry.name)
