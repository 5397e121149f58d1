"""A `for` entry in a flow's index (docs/flow-features.md section 19): expanded into one
item `Entry` per item once its dependencies are met and its `when` holds; its state decided
from its items' (`settle`); its outputs, the list of its items', given to its dependents once
every item's were read (`compose`); expanded again the same way by a restarted controller,
from its condition or from the item vcjobs it finds (`adopt`). Pure; `FlowIndex` calls these
with its `FlowState`.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping
from typing import Any

from vcflow.api import foreach, names
from vcflow.reconcile import attempts
from vcflow.reconcile.entries import OUTCOMES, Entry, ItemOf, State
from vcflow.reconcile.fanout import FAN_OUT_FAILED, ITEM_FAILED, FanOut
from vcflow.reconcile.flowstate import FlowState


def is_group(state: FlowState, entry: Entry) -> bool:
    """Is `entry` a `for` entry (not one of its items)?"""
    return entry.item is None and state.flow.flows[entry.index].for_each is not None


def values_of(state: FlowState, group: Entry, outputs: Mapping[str, Any]) -> list[Any]:
    """The items of a `for` entry (ItemsError when they cannot be had)."""
    spec = state.flow.flows[group.index].for_each
    assert spec is not None
    return foreach.items_of(spec, state.args, outputs)


def expand(state: FlowState, group: Entry, values: list[Any]) -> FanOut:
    """Add the group's items to the index (NONE, no targets: the group's dependencies are
    met), waiting for `parallelism` in index order; the group is Live."""
    spec = state.flow.flows[group.index].for_each
    assert spec is not None
    items = [f"{group.name}-{i}" for i in range(len(values))]
    fan = FanOut(group.name, values, items, spec.parallelism)
    state.fans[group.name] = fan
    for i, name in enumerate(items):
        entry = Entry(
            name=name,
            job=names.job_name(state.flow.name, name),
            index=group.index,
            targets=(),
            any_of=False,
            policy=group.policy,
            deadline=group.deadline,
            handled=True,  # (its failure is its group's: the group's dependents decide)
            item=ItemOf(group.name, i),
        )
        state.entries[name] = entry
        state.by_job[entry.job] = entry
    fan.waiting = deque(items)
    state.ready.move(group, State.LIVE, None)
    state.candidates.update(fan.release())
    return fan


def item_moved(state: FlowState, item: Entry, before: State, after: State) -> None:
    """`Readiness.on_item`: keep the group's counts; an item that ended frees a place."""
    assert item.item is not None
    fan = state.fans[item.item.group]
    fan.moved(item.name, before, after)
    if after in OUTCOMES:
        state.candidates.update(fan.release())


def settle(state: FlowState) -> None:
    """Each group whose items changed: Failed once one failed for good (the items not made
    yet are then Skipped), Completed once all completed; Live again after a retry — but
    not while it holds its items (`hold`)."""
    for fan in state.fans.values():
        if not fan.dirty or fan.held is not None:
            continue  # (held: it waits for its dependencies, its state is its own)
        fan.dirty = False
        group = state.entries[fan.name]
        outcome = fan.outcome()
        if outcome == group.state:
            continue
        if outcome == State.FAILED:
            failed = next(n for n in fan.items if state.entries[n].state == State.FAILED)
            group.verdict = ITEM_FAILED
            group.verdict_message = f"item {failed} failed"
            _cancel(state, fan)
        else:
            group.verdict = group.verdict_message = ""
        state.ready.move(group, outcome, None)
        if outcome == State.COMPLETED:
            state.outputs.completed(group.name)
            state.composing.add(group.name)


def wait_in_order(state: FlowState, fan: FanOut, held_back: list[str]) -> None:
    """Items that came up but `parallelism` holds back (`held_back`, in index order): they
    wait with the others, all in index order (a retry's due items among the never made)."""

    def rank(name: str) -> tuple[int, int]:
        return state.entries[name].rank

    fan.waiting = deque(heapq.merge(held_back, fan.waiting, key=rank))


def hold(state: FlowState, reset: list[Entry]) -> None:
    """After a `--restart-successful` retry: each group it reset whose dependencies it reset
    too (unmet now) holds its items — their new attempts wait until it passed its
    dependencies and its `when` again (`rerun`), as any reset entry does."""
    for group in reset:
        fan = state.fans.get(group.name)
        if fan is not None:
            fan.held = None if group.ready() else set()


def rerun(state: FlowState, group: Entry, fan: FanOut) -> None:
    """The group, expanded before, passed its dependencies and its `when` again (a retry
    reset it): its state follows its items again; the items it held go, under `parallelism`
    in index order (the first expansion's items: they are not read again), and it is Live."""
    fan.dirty = True
    if fan.held is None:
        return
    held, fan.held = fan.held, None
    fan.waiting = deque(sorted({*fan.waiting, *held}, key=lambda n: state.entries[n].rank))
    state.ready.move(group, State.LIVE, None)
    state.candidates.update(fan.release())


def drop(state: FlowState, fan: FanOut) -> None:
    """A group holding its items got an outcome of its own (Skipped: its dependencies can
    no longer be met; or its `when`'s): their new attempts are not made — each item's last
    outcome stands, one never made is Skipped as the group is. It holds on (empty): its
    state stays its own."""
    if fan.held is None:
        return
    group = state.entries[fan.name]
    fan.held.clear()
    fan.waiting.clear()
    fan.released.clear()
    for name in fan.items:
        item = state.entries[name]
        state.candidates.discard(name)
        if item.state == State.BACKOFF:
            item.ended = item.phase or ""  # (the outcome that stands: cancel_retry)
            why = f"{group.name} {group.state}"
            attempts.cancel_retry(state.ready, state.history, item, why)
        elif item.state == State.NONE and not item.has_job:
            item.verdict, item.verdict_message = group.verdict, group.verdict_message
            state.ready.move(item, State.SKIPPED, None)


def _cancel(state: FlowState, fan: FanOut) -> None:
    """The items not made yet, when their group has failed: Skipped."""
    for name in [*fan.waiting, *sorted(fan.released)]:
        entry = state.entries[name]
        if entry.state == State.NONE and not entry.has_job:
            entry.verdict = FAN_OUT_FAILED
            entry.verdict_message = f"not made: {fan.name} had failed"
            state.candidates.discard(name)
            state.ready.move(entry, State.SKIPPED, None)
    fan.waiting.clear()
    fan.released.clear()


def compose(state: FlowState) -> None:
    """A completed group whose items' outputs have all been read: its outputs, the list of
    theirs in index order, and its held dependents may go on."""
    for name in list(state.composing):
        fan = state.fans.get(name)
        group = state.entries[name]
        if fan is None or group.state != State.COMPLETED:
            state.composing.discard(name)
            continue
        read = state.outputs.read
        if any(item in state.outputs.unread for item in fan.items):
            continue
        state.composing.discard(name)
        listed = [read.get(item, {}) for item in fan.items]
        state.candidates.update(state.outputs.give_list(name, listed))


def refill(state: FlowState, fan: FanOut) -> None:
    """After a restore: the items with no vcjob wait for `parallelism` again, in order; the
    ones with one count."""
    fan.counted = {
        n for n in fan.items if state.entries[n].has_job and state.entries[n].state not in OUTCOMES
    }
    fan.released.clear()
    fan.waiting = deque(
        n
        for n in fan.items
        if state.entries[n].state == State.NONE and not state.entries[n].has_job
    )
    state.candidates.difference_update(fan.waiting)
    state.candidates.update(fan.release())
    fan.done = sum(state.entries[n].state in (State.COMPLETED, State.SKIPPED) for n in fan.items)
    fan.failed = sum(state.entries[n].state == State.FAILED for n in fan.items)
    fan.dirty = True


def adopt(state: FlowState, job_name: str) -> bool:
    """An item vcjob of a `for` entry not expanded yet (a controller that died before the
    status said so): expand the entry the same way, so the vcjob is its item's. True when
    the job is now an entry's."""
    for group in state.entries.values():
        prefix = group.job + "-"
        if not job_name.startswith(prefix) or not job_name[len(prefix) :].isdigit():
            continue
        if group.name in state.fans or not is_group(state, group):
            continue
        try:
            values = values_of(state, group, state.outputs.of_targets(group))
        except foreach.ItemsError:
            return False
        expand(state, group, values)
        return job_name in state.by_job
    return False


def item_value(state: FlowState, entry: Entry) -> tuple[int, Any] | None:
    """(index, value) of an item entry; None for any other."""
    if entry.item is None:
        return None
    fan = state.fans[entry.item.group]
    return entry.item.index, fan.values[entry.item.index]
