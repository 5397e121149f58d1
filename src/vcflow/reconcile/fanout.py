"""One `for` entry's items (docs/flow-features.md section 19): their entries, how many have
ended and failed, which may be created under `parallelism`, and what the entry as a whole
is. Kept out of `Entry` and `FlowIndex`; `FlowIndex` expands a `for` entry into its items
(each an `Entry` of its own vcjob, `<flow>-<entry>-<index>`) and tells this type of every
change of an item's state (`Readiness.on_item`). Pure.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from vcflow.reconcile.entries import Entry, State

#: why an item was not made: its entry had failed (an item failed for good)
FAN_OUT_FAILED = "FanOutFailed"
#: the reason of a `for` entry's condition (its counts in the message)
FOR_EACH = "ForEach"
#: why a `for` entry failed: one of its items did
ITEM_FAILED = "ItemFailed"


@dataclass
class FanOut:
    """The items of the `for` entry `name`, in index order."""

    name: str
    values: list[Any]
    items: list[str]
    parallelism: int | None = None
    done: int = 0  # items Completed or Skipped
    failed: int = 0  # items Failed for good
    #: items whose vcjob was built and that have not ended: what `parallelism` bounds
    counted: set[str] = field(default_factory=set)
    #: items let through `parallelism`, not built yet
    released: set[str] = field(default_factory=set)
    #: items still held back by `parallelism`, in index order
    waiting: deque[str] = field(default_factory=deque)
    #: its counts changed since the entry's state was last decided
    dirty: bool = True
    #: a retry (`--restart-successful`) reset the entry and what it depends on: the items
    #: that came up meanwhile, let through once the entry passed its dependencies (and its
    #: `when`) again; the entry's state is its own, not its items' (`expansion.settle`);
    #: None when not held
    held: set[str] | None = None

    def moved(self, item: str, before: State, after: State) -> None:
        """An item's state changed (`Readiness.on_item`)."""
        self.done += _done(after) - _done(before)
        self.failed += int(after == State.FAILED) - int(before == State.FAILED)
        if after in (State.COMPLETED, State.FAILED, State.SKIPPED):
            self.counted.discard(item)
        self.dirty = True

    def built(self, item: str) -> None:
        """The item's vcjob was built (a creation under way)."""
        self.released.discard(item)
        self.counted.add(item)

    def may_build(self, item: str) -> bool:
        """Does `parallelism` let this item's vcjob be built now?"""
        if self.parallelism is None or item in self.counted or item in self.released:
            return True
        return len(self.counted) + len(self.released) < self.parallelism

    def release(self) -> list[str]:
        """The waiting items `parallelism` now lets through, in index order."""
        out: list[str] = []
        while self.waiting and (
            self.parallelism is None or len(self.counted) + len(self.released) < self.parallelism
        ):
            name = self.waiting.popleft()
            self.released.add(name)
            out.append(name)
        return out

    def outcome(self) -> State:
        """What the entry is now: Failed once an item failed, Completed once all have
        ended so, else Live."""
        if self.failed:
            return State.FAILED
        if self.done == len(self.items):
            return State.COMPLETED
        return State.LIVE

    def counts(self, entries: dict[str, Entry]) -> str:
        """`8 items: 5 Completed, 3 Running` (O(items): for the status)."""
        by: dict[str, int] = {}
        for name in self.items:
            entry = entries[name]
            word = _word(entry)
            by[word] = by.get(word, 0) + 1
        order = ("Completed", "Running", "Pending", "Backoff", "Failed", "Skipped", "Waiting")
        parts = [f"{by[w]:,} {w}" for w in order if by.get(w)]
        return f"{len(self.items):,} items: " + ", ".join(parts)


def _done(state: State) -> int:
    return int(state in (State.COMPLETED, State.SKIPPED))


def _word(entry: Entry) -> str:
    state = entry.state
    if state in (State.COMPLETED, State.FAILED, State.SKIPPED):
        return str(state)
    if state == State.BACKOFF:
        return "Backoff"
    if state == State.LIVE:
        return "Running" if entry.phase not in (None, "", "Pending") else "Pending"
    return "Pending" if entry.has_job else "Waiting"  # (made, not seen yet; or not made)
