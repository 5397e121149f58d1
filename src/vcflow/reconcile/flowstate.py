"""What one flow's index knows (`FlowState`): its entries and their counted readiness, the
timers, the flow language's values, the `for` entries' items, the jobStatusList, and the
flow's phase with what decides it. `FlowIndex` (`flow`) owns one and advances it; its parts
— `expansion`, `transitions`, `building`, `restore`, `flowstatus` — take this state, not
the index, so none of them needs the index and the index needs them all. Pure.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from vcflow.api import arguments
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FlowPhase
from vcflow.api.platform import Platform
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import language, retryrequest, scheduling, timers
from vcflow.reconcile import phase as phases
from vcflow.reconcile.entries import STOP_ANNOTATION, Entry, State, build_entries
from vcflow.reconcile.fanout import FanOut
from vcflow.reconcile.probing import Probing
from vcflow.reconcile.readiness import Readiness, tally

#: the phases a flow ends in
FINAL = (FlowPhase.SUCCEED, FlowPhase.FAILED)


class FlowState:
    """One flow's entries, what is known of their vcjobs, and the flow's phase."""

    def __init__(self, flow: JobFlow, platform: Platform) -> None:
        self.flow = flow
        self.platform = platform  # where the pods run: what probes reach (probes.target_of)
        self.entries: dict[str, Entry] = {}
        self.by_job: dict[str, Entry] = {}
        self.ready = Readiness(self.entries)
        self.candidates = self.ready.candidates
        #: JobTemplate name → the entries waiting for it (TemplateNotFound)
        self.template_waiters: dict[str, set[str]] = {}
        #: (vcjob name, message) of the entries that began waiting on NameConflict since
        #: the shell last took them (`FlowIndex.take_conflicts`): each is told once
        self.conflicts: list[tuple[str, str]] = []
        self.history: dict[str, dict[str, Any]] = {}
        #: the entries whose vcjob exists (or may: created, not yet seen)
        self.live = 0
        self.timers = timers.Timers(self._valid)
        self.probing = Probing(self.timers)
        self.probe_notes = self.probing.notes
        self.phase = FlowPhase(flow.phase) if flow.phase else FlowPhase.PENDING
        self.last_retry = flow.status.last_retry if flow.status else None
        self.expired = False  # the flow's activeDeadlineSeconds passed
        self.deadline_at: datetime | None = None
        self.building = True  # until plan() has seen every job: no stop verdict yet
        #: the `VCFLOW_ARGS` of the flow's vcjobs (None: the flow gets none), found once
        self.args_env = jobbuild.args_env(flow)
        #: the flow language (docs/flow-features.md part II): the arguments' values, the
        #: entries' outputs, the exit handlers
        self.args = arguments.values_of(flow) if self.args_env is not None else {}
        self.outputs = language.Outputs()
        self.exits = language.ExitHandlers.of(flow)
        #: the `for` entries expanded into their items (section 19), and the completed
        #: ones whose outputs (their items') are still to be put together
        self.fans: dict[str, FanOut] = {}
        self.composing: set[str] = set()
        self.has_for = any(e.for_each is not None for e in flow.flows)
        #: the flow's scheduling policy, its entries' ranks, its admission hold
        self.scheduling = scheduling.FlowScheduling(flow)
        for entry in build_entries(flow):
            self.entries[entry.name] = entry
            self.by_job[entry.job] = entry

    @property
    def stopping(self) -> bool:
        return self.expired or STOP_ANNOTATION in self.flow.metadata.annotations

    def counts(self) -> phases.Counts:
        return self.ready.counts()

    def set_live(self, entry: Entry, *, observed: bool, created: bool) -> None:
        """Set the entry's job flags, keeping the count of jobs that exist (or may)."""
        before = entry.observed or entry.created
        entry.observed, entry.created = observed, created
        self.live += int(observed or created) - int(before)

    # -- the phase ---------------------------------------------------------------------------

    def recompute(self) -> None:
        """The flow phase from the counts (row 7); a stopped flow is Terminating while it
        still has vcjobs, then Failed (or Succeed, if everything had completed)."""
        previous = self.phase
        if self.exits.names:
            self._recompute_with_handlers(previous)
            return
        base = FlowPhase.PENDING if previous == FlowPhase.TERMINATING else previous
        phase = phases.next_phase(base, self.counts())
        if self.building:
            return  # the stored phase stands until every job has been seen (decide)
        if self.stopping and previous not in FINAL and phase != FlowPhase.SUCCEED:
            phase = FlowPhase.TERMINATING if self.live else FlowPhase.FAILED
        self.phase = phase

    def exit_entries(self) -> list[Entry]:
        """The exit handlers' entries, in flow order."""
        found = [self.entries[n] for n in self.exits.names if n in self.entries]
        return sorted(found, key=lambda e: e.index)

    def _recompute_with_handlers(self, previous: FlowPhase) -> None:
        """The phase of a flow with exit handlers (docs/flow-features.md section 14): the
        phase of its other entries (`exits.base`) until they have all ended; then Running
        while the handlers run, and the base phase — Failed if a handler failed — after."""
        if self.building or previous in FINAL:
            return
        handlers = self.exit_entries()
        parts = [tally(e) for e in handlers]
        counts = self.counts()
        others = phases.Counts(
            counts.entries - len(handlers),
            counts.completed - sum(p[0] for p in parts),
            counts.failed - sum(p[1] for p in parts),
            counts.started - sum(p[2] for p in parts),
            counts.live - sum(p[3] for p in parts),
        )
        exits = self.exits
        before = FlowPhase.PENDING if exits.base == FlowPhase.TERMINATING else exits.base
        base = phases.next_phase(before, others)
        if self.stopping and base not in FINAL:
            handler_jobs = sum(1 for e in handlers if e.observed or e.created)
            base = FlowPhase.TERMINATING if self.live > handler_jobs else FlowPhase.FAILED
        exits.base = base
        if base in FINAL and not others.live and not exits.released:
            exits.released = True
            for entry in handlers:
                if entry.state == State.NONE or entry.renew:
                    self.candidates.add(entry.name)
        if exits.released:
            self.phase = exits.phase(handlers)
        elif base in FINAL:
            self.phase = FlowPhase.RUNNING  # (the other entries' last jobs still run)
        else:
            self.phase = base

    @property
    def failed_or_stopping(self) -> bool:
        """No entry but an exit handler is created any more (its retries are not made)."""
        if self.exits.names:
            return self.exits.base in (FlowPhase.FAILED, FlowPhase.TERMINATING) or (
                self.stopping and self.exits.base != FlowPhase.SUCCEED
            )
        return self.phase == FlowPhase.FAILED or self.stopping

    # -- timers ------------------------------------------------------------------------------

    def _valid(self, timer: timers.Timer) -> bool:
        kind = timer.kind
        if kind == timers.FLOW:
            return not self.expired and self.phase not in FINAL and self.deadline_at == timer.due
        if kind == timers.PROBE:
            return self.probing.valid(timer)
        entry = self.entries.get(timer.name)
        if entry is None:
            return False
        if kind == timers.RETRY:
            return entry.retry_waits(timer.due)
        return entry.deadline_pending(timer.due)

    def arm_deadline(self, entry: Entry) -> None:
        if entry.deadline is None or entry.created_at is None or entry.deadline_hit:
            return
        due = entry.created_at + timedelta(seconds=entry.deadline)
        if entry.deadline_at != due:
            entry.deadline_at = due
            self.timers.set(due, timers.DEADLINE, entry.name)

    def arm_flow_deadline(self, since: datetime | None) -> None:
        self.deadline_at = retryrequest.flow_deadline(self.flow, self.last_retry, since)
        if self.deadline_at is not None:
            self.timers.set(self.deadline_at, timers.FLOW)
