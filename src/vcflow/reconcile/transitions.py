"""How an entry of a `FlowState` changes state, and what follows: its job's new phase
(`set_phase`: an outcome, or a retry's backoff), a probe that met a dependency, a `vcflow
retry` request carried out — each then `settle`s the flow (its phase; entries whose
dependency can never be met are skipped; a failed or stopping flow cancels the retries
still waiting). Pure; `FlowIndex` calls these.
"""

from __future__ import annotations

from datetime import datetime

from vcflow.api.phases import FlowPhase, RetryStrategy
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import attempts, expansion, history
from vcflow.reconcile.entries import (
    DEADLINE_EXCEEDED,
    MET,
    OUTCOMES,
    RETRY_ANNOTATION,
    Entry,
    State,
    contribution,
    failure_verdict,
    settled,
    skip_verdict,
)
from vcflow.reconcile.flowstate import FINAL, FlowState
from vcflow.reconcile.retryrequest import RetryRequest, reset, to_reset


def settle(state: FlowState) -> None:
    """The phase, then what follows from it until nothing does: entries whose dependency
    can never be met are skipped (their successors may be next), and in a flow that has
    failed or is stopping, the retries still waiting are not made."""
    entries, ready = state.entries, state.ready
    while True:
        if state.fans:
            expansion.settle(state)
        state.recompute()
        if state.building:
            return
        if state.failed_or_stopping:
            backing = [n for n in ready.backing if n not in state.exits.names]
            if not backing:
                return
            why = "the flow stops" if state.stopping else "the flow failed"
            for name in sorted(backing, key=lambda n: entries[n].rank):
                attempts.cancel_retry(ready, state.history, entries[name], why)
            continue
        if not ready.doomed:
            return
        doomed, ready.doomed = ready.doomed, set()
        for name in sorted(doomed, key=lambda n: entries[n].rank):
            entry = entries[name]
            if entry.state == State.NONE and not entry.has_job and entry.doomed():
                skip(state, entry)


def skip(state: FlowState, entry: Entry) -> None:
    entry.verdict, entry.verdict_message = skip_verdict(entry)
    state.ready.move(entry, State.SKIPPED, None)
    if entry.name in state.fans:
        expansion.drop(state, state.fans[entry.name])  # (a `for` entry holding its items)


def set_phase(
    state: FlowState,
    entry: Entry,
    new: str,
    now: datetime,
    *,
    job: VCJob | None = None,
    fresh: bool = False,
    final: bool = False,
) -> None:
    """The entry's job is in phase `new` now: its state follows (a failed or, with
    `Always`, completed attempt with retries left starts a backoff)."""
    if entry.phase != new or fresh or final:
        after = settled(new)
        if after != State.LIVE and not final and _may_retry(entry, after):
            ended = DEADLINE_EXCEEDED if entry.deadline_hit and after == State.FAILED else new
            attempts.start_backoff(state.timers, state.flow.metadata.uid, entry, now, ended)
            after = State.BACKOFF
        elif after == State.FAILED and not final:
            entry.verdict, entry.verdict_message = failure_verdict(entry)
        elif after != State.FAILED:
            entry.verdict = entry.verdict_message = ""
        state.ready.move(entry, after, new)
        if after == State.COMPLETED and state.args_env is not None:
            state.outputs.completed(entry.name)
        settle(state)
    history.record(state.history, entry, new, now, job=job)


def _may_retry(entry: Entry, state: State) -> bool:
    plan = entry.policy
    if entry.attempt >= entry.last_attempt or plan.retries == 0:
        return False
    # (a flow that failed or stops cancels the retry: `settle`)
    return state != State.COMPLETED or plan.policy == RetryStrategy.ALWAYS


# -- probes ------------------------------------------------------------------------------


def probing(state: FlowState, entry: Entry, target: Entry) -> bool:
    """Is the dependency of `entry` on `target` still one a probe may meet?"""
    return (
        entry.probe is not None
        and not entry.has_job
        and entry.state == State.NONE
        and target.name not in entry.probe_met
        and target.state not in OUTCOMES
        and state.phase not in FINAL
    )


def reprobe(state: FlowState, entry: Entry, target: Entry, now: datetime) -> None:
    """The target changed: where the probe of it stands."""
    active = probing(state, entry, target)
    if state.probing.changed(entry, target, now, active=active):
        probe_met(state, entry, target.name)


def probe_met(state: FlowState, entry: Entry, target: str) -> bool:
    """A probe met the dependency of `entry` on `target`: True when it may now be created."""
    if target in entry.probe_met:
        return False
    before = contribution(entry.outcome, state.entries[target].state)
    entry.probe_met = entry.probe_met | {target}
    state.ready.count_edge(entry, target, before, MET)
    settle(state)
    return entry.ready()


# -- retries -----------------------------------------------------------------------------


def take_request(state: FlowState) -> None:
    """Carry out a `vcflow retry` request once: it is then `status.lastRetry` (which
    outlives the annotation: a later `apply` of the manifest drops it)."""
    raw = state.flow.metadata.annotations.get(RETRY_ANNOTATION)
    request = RetryRequest.parse(raw) if raw else None
    done = RetryRequest.parse(state.last_retry) if state.last_retry else None
    if request is None or (done is not None and request.id == done.id):
        return
    state.last_retry = request.to_annotation()
    if state.phase != FlowPhase.FAILED:
        return  # (the CLI refuses; a request that meets a flow not Failed does nothing)
    state.phase = FlowPhase.PENDING
    state.exits.base, state.exits.released = FlowPhase.PENDING, False
    state.expired = False
    state.arm_flow_deadline(request.at)
    chosen = to_reset(state.entries, request)
    for entry in chosen:
        reset(state.ready, state.history, entry, request.at)
    if request.restart_successful and state.fans:
        expansion.hold(state, chosen)  # (a `for` entry reset with its dependencies)
