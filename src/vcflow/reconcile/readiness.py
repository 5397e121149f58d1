"""Counted readiness of a flow's entries (graphlib style, with outcomes): what each entry's
state means for its successors' dependencies (met, open, dead), which entries are ready or
doomed, and the counts the flow's phase is decided from. `FlowIndex` moves every entry
through `move`, so an event costs O(the edges of the entry it changed). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vcflow.reconcile import phase as phases
from vcflow.reconcile.entries import CONTRIBUTION, DEAD, MET, OUTCOMES, Entry, State


class Readiness:
    def __init__(self, entries: Mapping[str, Entry]) -> None:
        self.entries = entries
        #: entries that may have become creatable since the last decision
        self.candidates: set[str] = set()
        #: entries whose dependency can no longer be met, not yet skipped
        self.doomed: set[str] = set()
        #: entries in BACKOFF (a retry waits or is due)
        self.backing: set[str] = set()
        self._ok = self._bad = self._started = self._live = 0
        #: told of every change of an item's state (a `for` entry's: `fanout`)
        self.on_item: Callable[[Entry, State, State], None] | None = None

    def counts(self) -> phases.Counts:
        """`completed`: Completed, Skipped or handled Failed entries; `failed`: unhandled
        failures; `started`: entries whose job left Pending (or waits to run again)."""
        return phases.Counts(len(self.entries), self._ok, self._bad, self._started, self._live)

    def move(self, entry: Entry, state: State, phase: str | None) -> None:
        """Set the entry's state and job phase, keeping the counts and its successors'."""
        before = entry.state
        self._tally(entry, -1)
        entry.state, entry.phase = state, phase
        self._tally(entry, 1)
        if state == State.BACKOFF:
            self.backing.add(entry.name)
        else:
            self.backing.discard(entry.name)
        if entry.item is not None and before != state and self.on_item is not None:
            self.on_item(entry, before, state)
        if before != state and (before in OUTCOMES or state in OUTCOMES):
            table = CONTRIBUTION
            for name in entry.successors:
                succ = self.entries[name]
                if not succ.probe_met or entry.name not in succ.probe_met:
                    outcome = succ.outcome
                    old, new = table[outcome, before], table[outcome, state]
                    if old != new:
                        self.count_edge(succ, entry.name, old, new)

    def count_edge(self, entry: Entry, target: str, old: int, new: int) -> None:
        """The dependency of `entry` on `target` went from `old` to `new` (MET, OPEN, DEAD)."""
        if old == new:
            return
        entry.met += int(new == MET) - int(old == MET)
        entry.dead += int(new == DEAD) - int(old == DEAD)
        if new == DEAD:
            entry.doomed_by = (target, str(self.entries[target].state))
            if entry.doomed():
                self.doomed.add(entry.name)
        if new == MET and entry.ready():
            self.candidates.add(entry.name)

    def set_attempt(self, entry: Entry, attempt: int) -> None:
        """(`_tally` reads the attempt: it is counted out and in again.)"""
        self._tally(entry, -1)
        entry.attempt = attempt
        self._tally(entry, 1)

    def _tally(self, entry: Entry, sign: int) -> None:
        ok, bad, started, live = tally(entry)
        self._ok += sign * ok
        self._bad += sign * bad
        self._started += sign * started
        self._live += sign * live


def tally(entry: Entry) -> tuple[int, int, int, int]:
    """What one entry adds to `Counts` (completed, failed, started, live): what the exit
    handlers' part of the counts is found from."""
    state = entry.state
    ok = int(state in (State.COMPLETED, State.SKIPPED) or (state == State.FAILED and entry.handled))
    bad = int(state == State.FAILED and not entry.handled)
    started = state == State.BACKOFF or entry.attempt > 1
    if not started and entry.phase is not None and state != State.SKIPPED:
        started = phases.has_started(entry.phase)
    return ok, bad, int(started), int(state in (State.LIVE, State.BACKOFF))
