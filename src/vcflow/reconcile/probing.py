"""The probe rounds of one flow (docs/flow-features.md §2): which dependency is probed when,
what each probe last said (for the Waiting message), and the rounds due for the shell to run.
`FlowIndex` tells it when a probed target changes and when a round's result comes back; it
answers whether the probe met the dependency — the index then counts the edge as met. Pure.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from vcflow.reconcile import probes, timers
from vcflow.reconcile.entries import Entry

Key = tuple[str, str]  # (entry, target)


class Probing:
    def __init__(self, clock_timers: timers.Timers) -> None:
        self.timers = clock_timers
        self.due: dict[Key, datetime] = {}  # the next round of each probed dependency
        self.notes: dict[Key, str] = {}  # what the last round said, or why none runs
        self.rounds: list[probes.Round] = []  # found due, for the shell

    def changed(self, entry: Entry, target: Entry, now: datetime, *, active: bool) -> bool:
        """The target's vcjob changed (`active`: the dependency may still be met by a
        probe); True when the probe meets it now, with no connection to make."""
        key = (entry.name, target.name)
        if not active or entry.probe is None:
            self.forget(key)
            return False
        verdict, _, note = probes.assess(entry.probe, target.view)
        if verdict == probes.Verdict.MET:
            self.forget(key)
            return True
        if verdict == probes.Verdict.WAIT:
            self.due.pop(key, None)
            self.notes[key] = note
        elif key not in self.due:
            self.due[key] = now
            self.timers.set(now, timers.PROBE, entry.name, target.name)
        return False

    def fire(self, entry: Entry, target: Entry) -> bool:
        """A round is due: queued for the shell if it has connections to make; True when
        the probe meets the dependency without any."""
        key = (entry.name, target.name)
        self.due.pop(key, None)
        assert entry.probe is not None
        verdict, checks, note = probes.assess(entry.probe, target.view)
        if verdict == probes.Verdict.RUN:
            self.rounds.append(probes.Round(entry.name, target.name, checks))
        elif verdict == probes.Verdict.WAIT:
            self.notes[key] = note
        return verdict == probes.Verdict.MET

    def failed(self, key: Key, note: str, now: datetime, *, active: bool) -> None:
        """A round did not succeed: said so, and tried again a period later."""
        self.notes[key] = note
        if active:
            self.due[key] = now + timedelta(seconds=probes.PERIOD)
            self.timers.set(self.due[key], timers.PROBE, *key)

    def forget(self, key: Key) -> None:
        self.due.pop(key, None)
        self.notes.pop(key, None)

    def valid(self, timer: timers.Timer) -> bool:
        return self.due.get((timer.name, timer.target)) == timer.due

    def take(self) -> list[probes.Round]:
        rounds, self.rounds = self.rounds, []
        return rounds
