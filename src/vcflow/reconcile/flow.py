"""The JobFlow reconcile: which vcjobs to create, delete or terminate, and the status to write.

`FlowIndex` holds one flow's entries with counted readiness (graphlib style): a job's change
touches only that job's successors, so an event costs O(its edges), not O(flow). `plan()`
builds an index from scratch (first sight, resync, restart); `observe`/`forget` + `decide`
advance it one job at a time; both must give the same decisions and status (property test).

Each entry has a *state*: no job yet; its job `LIVE`; `BACKOFF` (a retry waits, or is due:
`renew`); or an outcome — `COMPLETED`, `FAILED` (for good), `SKIPPED`. The dependency of an
entry on a target is met or dead by the target's outcome and the entry's `outcome` (or met by
a probe); a dead dependency skips the entry, and a skip propagates (docs/flow-features.md).
Retries, deadlines and probe rounds are timers (`timers.Timers`), fired by `decide(now)`.

Pure: no I/O; time arrives as `now`. compatibility rows 4–9, 12, 16, 18, 20 are decided here,
with its parts: `entries` (an entry, its state, the wording of outcomes), `readiness` (the
counting), `history` (jobStatusList), `attempts` and `retryrequest` (retries, `vcflow
retry`), `probing` (probe rounds), `restore` (a stored status read back), `flowstatus` (the
status rendered), `statusfit` (its form: Volcano's layout or the compact one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from vcflow.api import arguments, foreach
from vcflow.api.jobflow import JobFlow, JobFlowStatus, Probe
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import (
    FlowPhase,
    JobPhase,
    RetainPolicy,
    RetryStrategy,
)
from vcflow.api.platform import Platform
from vcflow.api.substitution import SubstitutionError
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import (
    attempts,
    expansion,
    flowstatus,
    history,
    language,
    probes,
    retry,
    retryrequest,
    timers,
)
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import outputs as reading
from vcflow.reconcile import phase as phases
from vcflow.reconcile import restore as restoring
from vcflow.reconcile import statusfit as fitting
from vcflow.reconcile.entries import (
    BACKOFF,
    CREATE_FAILED,
    DEADLINE_ANNOTATION,
    DEADLINE_EXCEEDED,
    DEPENDENCIES,
    JOB_DELETED,
    MET,
    NAME_CONFLICT,
    OUTCOMES,
    RETRIES_EXHAUSTED,
    RETRY_ANNOTATION,
    RETRY_CANCELLED,
    SKIPPED,
    STOP_ANNOTATION,
    TEMPLATE_NOT_FOUND,
    WAITING,
    Entry,
    State,
    build_entries,
    condition_of,
    conflict_message,
    contribution,
    failure_verdict,
    parse_time,
    settled,
    skip_verdict,
)
from vcflow.reconcile.fanout import FanOut
from vcflow.reconcile.probing import Probing
from vcflow.reconcile.readiness import Readiness, tally
from vcflow.reconcile.retryrequest import RetryRequest, reset, to_reset

#: what other tiers read from here (`reconcile.flow.X`): the index, and the reasons and
#: annotations of `entries`
__all__ = [
    "BACKOFF",
    "CREATE_FAILED",
    "DEADLINE_ANNOTATION",
    "DEADLINE_EXCEEDED",
    "DEPENDENCIES",
    "JOB_DELETED",
    "NAME_CONFLICT",
    "RETRIES_EXHAUSTED",
    "RETRY_ANNOTATION",
    "RETRY_CANCELLED",
    "SKIPPED",
    "STOP_ANNOTATION",
    "TEMPLATE_NOT_FOUND",
    "WAITING",
    "FlowIndex",
    "Plan",
    "RetryRequest",
    "State",
    "plan",
]

_FINAL = (FlowPhase.SUCCEED, FlowPhase.FAILED)


@dataclass(frozen=True)
class Plan:
    create: tuple[VCJob, ...]
    delete: tuple[str, ...]
    phase: FlowPhase
    #: `decide` stopped at its `limit`: more entries are ready, for the next decision
    more: bool = False
    #: vcjobs past their entry's deadline: the controller terminates them
    terminate: tuple[str, ...] = ()
    #: vcjobs of failed attempts whose retry is due: deleted, then `forget`, before the
    #: next attempt is created (a later decision)
    replace: tuple[str, ...] = ()


class FlowIndex:
    """Counted readiness and outcomes of one flow; rebuildable from the store at any time."""

    def __init__(self, flow: JobFlow, *, platform: Platform = Platform.LOCAL) -> None:
        self.flow = flow
        self.platform = platform  # where the pods run: what probes reach (probes.target_of)
        self.entries: dict[str, Entry] = {}
        self.by_job: dict[str, Entry] = {}
        self.ready = Readiness(self.entries)
        self.candidates = self.ready.candidates
        #: the candidates a limited `decide` left, in flow order: the next one need not sort
        #: them again while no candidate was added (a 10,000-wide flow, 50 at a time)
        self._left: list[str] = []
        #: JobTemplate name → the entries waiting for it (TemplateNotFound)
        self.template_waiters: dict[str, set[str]] = {}
        self.history: dict[str, dict[str, Any]] = {}
        self._live = 0
        self._terminate: list[str] = []
        self.timers = timers.Timers(self._valid)
        self.probing = Probing(self.timers)
        self.probe_notes = self.probing.notes
        self.phase = FlowPhase(flow.phase) if flow.phase else FlowPhase.PENDING
        self.last_retry = flow.status.last_retry if flow.status else None
        self.expired = False  # the flow's activeDeadlineSeconds passed
        self.deadline_at: datetime | None = None
        self._building = True  # until plan() has seen every job: no stop verdict yet
        self._rest = fitting.RestSize()
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
        self.ready.on_item = self._item_moved
        for entry in build_entries(flow):
            self.entries[entry.name] = entry
            self.by_job[entry.job] = entry
        self._arm_flow_deadline(None)
        self._recompute()

    def restore(self, status: JobFlowStatus | None) -> None:
        """Remember what a previous status says of each entry's job (row 16), its attempts
        and a retry that waits (`restore.restore`)."""
        restoring.restore(self, status)

    @property
    def stopping(self) -> bool:
        return self.expired or STOP_ANNOTATION in self.flow.metadata.annotations

    def _recompute(self) -> None:
        """The flow phase from the counts (row 7); a stopped flow is Terminating while it
        still has vcjobs, then Failed (or Succeed, if everything had completed)."""
        previous = self.phase
        if self.exits.names:
            self._recompute_with_handlers(previous)
            return
        base = FlowPhase.PENDING if previous == FlowPhase.TERMINATING else previous
        phase = phases.next_phase(base, self.counts())
        if self._building:
            return  # the stored phase stands until every job has been seen (decide)
        if self.stopping and previous not in _FINAL and phase != FlowPhase.SUCCEED:
            phase = FlowPhase.TERMINATING if self._live else FlowPhase.FAILED
        self.phase = phase

    def exit_entries(self) -> list[Entry]:
        """The exit handlers' entries, in flow order."""
        found = [self.entries[n] for n in self.exits.names if n in self.entries]
        return sorted(found, key=lambda e: e.index)

    def _recompute_with_handlers(self, previous: FlowPhase) -> None:
        """The phase of a flow with exit handlers (docs/flow-features.md section 14): the
        phase of its other entries (`exits.base`) until they have all ended; then Running
        while the handlers run, and the base phase — Failed if a handler failed — after."""
        if self._building or previous in _FINAL:
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
        if self.stopping and base not in _FINAL:
            handler_jobs = sum(1 for e in handlers if e.observed or e.created)
            base = FlowPhase.TERMINATING if self._live > handler_jobs else FlowPhase.FAILED
        exits.base = base
        if base in _FINAL and not others.live and not exits.released:
            exits.released = True
            for entry in handlers:
                if entry.state == State.NONE or entry.renew:
                    self.candidates.add(entry.name)
        if exits.released:
            self.phase = exits.phase(handlers)
        elif base in _FINAL:
            self.phase = FlowPhase.RUNNING  # (the other entries' last jobs still run)
        else:
            self.phase = base

    @property
    def _failed_or_stopping(self) -> bool:
        """No entry but an exit handler is created any more (its retries are not made)."""
        if self.exits.names:
            return self.exits.base in (FlowPhase.FAILED, FlowPhase.TERMINATING) or (
                self.stopping and self.exits.base != FlowPhase.SUCCEED
            )
        return self.phase == FlowPhase.FAILED or self.stopping

    def _settle(self) -> None:
        """The phase, then what follows from it until nothing does: entries whose dependency
        can never be met are skipped (their successors may be next), and in a flow that has
        failed or is stopping, the retries still waiting are not made."""
        while True:
            if self.fans:
                expansion.settle(self)
            self._recompute()
            if self._building:
                return
            if self._failed_or_stopping:
                backing = [n for n in self.ready.backing if n not in self.exits.names]
                if not backing:
                    return
                why = "the flow stops" if self.stopping else "the flow failed"
                for name in sorted(backing, key=lambda n: self.entries[n].rank):
                    attempts.cancel_retry(self.ready, self.history, self.entries[name], why)
                continue
            if not self.ready.doomed:
                return
            doomed, self.ready.doomed = self.ready.doomed, set()
            for name in sorted(doomed, key=lambda n: self.entries[n].rank):
                entry = self.entries[name]
                if entry.state == State.NONE and not entry.has_job and entry.doomed():
                    self._skip(entry)

    def _set_live(self, entry: Entry, *, observed: bool, created: bool) -> None:
        """Set the entry's job flags, keeping the count of jobs that exist (or may)."""
        before = entry.observed or entry.created
        entry.observed, entry.created = observed, created
        self._live += int(observed or created) - int(before)

    # -- events -----------------------------------------------------------------------------

    def observe(self, job: VCJob, now: datetime) -> None:
        """A vcjob of this flow was seen (created or changed) with this content."""
        entry = self.by_job.get(job.name)
        if entry is None and self.has_for and jobbuild.is_owned_by(job, self.flow):
            if expansion.adopt(self, job.name):  # (an item made before the status said so)
                entry = self.by_job[job.name]
        if entry is None:
            return
        if not jobbuild.is_owned_by(job, self.flow):
            if not entry.observed:
                entry.reason, entry.message = NAME_CONFLICT, conflict_message(job)
            return
        attempt = retry.attempt_of(job.metadata.annotations)
        if attempt < entry.attempt:
            return  # an earlier attempt's vcjob (its replacement is under way)
        fresh = attempt > entry.attempt
        if fresh:  # created before the status said so (a controller that died): adopted
            self.ready.set_attempt(entry, attempt)
            entry.first_attempt = min(entry.first_attempt, attempt)
            entry.renew, entry.next_at, entry.ended = False, None, ""
            entry.deadline_hit, entry.deadline_at = False, None
            entry.verdict = entry.verdict_message = ""
        status = job.status
        entry.uid = job.metadata.uid or ""
        entry.condition = condition_of(job)
        if not fresh and entry.state == State.BACKOFF:
            # the attempt that failed, still in the store until its retry is due
            self._set_live(entry, observed=True, created=False)
            entry.gone = False
            if DEADLINE_ANNOTATION in job.metadata.annotations:
                entry.ended = DEADLINE_EXCEEDED
            self._settle()
            return
        self._set_live(entry, observed=True, created=False)
        entry.gone = False
        entry.reason = entry.message = ""
        entry.deadline_hit |= DEADLINE_ANNOTATION in job.metadata.annotations
        entry.vc_retry = (status.retry_count if status else None) or 0
        if entry.deadline is not None:
            entry.created_at = parse_time(job.metadata.creation_timestamp)
            self._arm_deadline(entry)
        phase = job.phase
        if phase == JobPhase.COMPLETED and entry.verdict in language.OUTPUT_REASONS:
            phase = JobPhase.FAILED  # (its outputs failed it: docs/flow-features.md section 12)
        self._set_phase(entry, phase, now, job=job, fresh=fresh)  # (settles on a change)
        if entry.probed_by:
            entry.view = probes.target_of(job, platform=self.platform)
            for name in entry.probed_by:
                self._reprobe(self.entries[name], entry, now)

    def forget(
        self, job_name: str, last_phase: str, now: datetime, *, existed: bool = False
    ) -> None:
        """A vcjob of this flow was deleted; its last phase is its outcome (row 16).
        `existed`: the caller saw the job (a tombstone), even if this index did not."""
        entry = self.by_job.get(job_name)
        if entry is not None and entry.reason == NAME_CONFLICT and not existed:
            self.conflict_gone(job_name)  # the foreign vcjob holding the name went away
            return
        if entry is None or not (existed or entry.observed or entry.created or entry.gone):
            return
        self._set_live(entry, observed=False, created=False)
        entry.view = None
        if entry.state == State.BACKOFF:  # its failed attempt's vcjob: the retry still comes
            entry.gone = True
            entry.condition = {}  # (as a status restored without it has none)
            if entry.renew:
                self.candidates.add(entry.name)
            self._settle()
            return
        entry.gone = True
        if entry.state in (State.COMPLETED, State.FAILED) and entry.phase == last_phase:
            self._settle()  # it had ended: its outcome stands
            return
        if last_phase == JobPhase.COMPLETED:
            self._set_phase(entry, JobPhase.COMPLETED, now, final=True)
        else:
            entry.verdict = JOB_DELETED
            entry.verdict_message = f"vcjob {job_name} was deleted before it finished"
            self._set_phase(entry, JobPhase.FAILED, now, final=True)
        self._settle()

    def seen_phase(self, job_name: str, uid: str) -> str:
        """The phase this index last saw of the vcjob `job_name` with that uid (any, if
        `uid` is ""); "" when it saw none, or another object of that name. What a vcjob
        deleted by its flow ended as when the DELETE answered no object (kube-apiserver's
        Status for a custom resource)."""
        entry = self.by_job.get(job_name)
        if entry is None or not entry.observed or (uid and entry.uid != uid):
            return ""
        return entry.phase or ""

    def conflict_gone(self, job_name: str) -> bool:
        """The foreign vcjob that held this entry's name was deleted: the entry may now be
        created (row 12). True when that changed anything."""
        entry = self.by_job.get(job_name)
        if entry is None or entry.reason != NAME_CONFLICT or entry.observed or entry.created:
            return False
        entry.reason = entry.message = ""
        self.candidates.add(entry.name)
        return True

    def template_appeared(self, template: str) -> None:
        """Entries that waited for this JobTemplate become candidates again."""
        for name in self.template_waiters.pop(template, set()):
            self.candidates.add(name)

    def mark_created(self, job_name: str) -> None:
        entry = self.by_job[job_name]
        self.outputs.forget(entry.name)
        self._set_live(entry, observed=entry.observed, created=True)
        entry.reason = entry.message = ""
        if entry.renew:
            attempts.new_attempt(self.ready, self.history, entry, entry.creating)

    def mark_create_failed(self, job_name: str, message: str) -> None:
        """The API refused the create (row 9): the entry waits with the reason, retried."""
        entry = self.by_job[job_name]
        entry.reason, entry.message = CREATE_FAILED, message
        self.candidates.add(entry.name)

    def mark_conflict(self, job: VCJob) -> None:
        entry = self.by_job[job.name]
        entry.reason, entry.message = NAME_CONFLICT, conflict_message(job)

    def defer_create(self, job_name: str, message: str) -> None:
        """The next attempt's vcjob cannot be created yet (the last one's pods are still
        going): the entry stays a candidate."""
        entry = self.by_job[job_name]
        entry.message = message
        self.candidates.add(entry.name)

    def probe_result(
        self, entry_name: str, target: str, ok: bool, note: str, now: datetime
    ) -> bool:
        """The shell ran a probe round of `entry_name` on `target`: True when it met the
        dependency (the entry may now be created)."""
        entry, key = self.entries[entry_name], (entry_name, target)
        if ok:
            self.probing.forget(key)
            return self._probe_met(entry, target)
        active = self._probing(entry, self.entries[target])
        self.probing.failed(key, note, now, active=active)
        return False

    def take_probes(self) -> list[probes.Round]:
        """The probe rounds the last `decide` found due, for the shell to run."""
        return self.probing.take()

    def next_wakeup(self) -> datetime | None:
        """When the earliest timer is due: a retry, a deadline, a probe round."""
        return self.timers.next()

    # -- decisions -------------------------------------------------------------------------

    def decide(
        self,
        templates: Mapping[str, JobTemplate],
        limit: int | None = None,
        *,
        now: datetime | None = None,
    ) -> Plan:
        """The vcjobs to create now and, after Succeed with `delete` or a stop, the ones to
        remove; the ones a due retry replaces; the ones past their deadline. Timers due at
        `now` fire first, and a `vcflow retry` request not carried out yet is.

        `limit` caps the creations, in flow order: the entries after it stay candidates,
        and `Plan.more` says the next decision has creations left to make."""
        creates: list[VCJob] = []
        replaced: list[str] = []
        rest: list[str] = []
        self._building = False
        if now is not None:
            self._fire(now)
            self._take_request(now)
        if self.composing:
            expansion.compose(self)
        self._settle()
        while self.phase not in (FlowPhase.FAILED, FlowPhase.SUCCEED, FlowPhase.TERMINATING):
            if self._left and len(self._left) == len(self.candidates):
                order = self._left  # (candidates only grow between decisions)
            else:
                order = sorted(self.candidates, key=lambda n: self.entries[n].rank)
            gated = False
            looked = len(order)
            blocked: dict[str, list[str]] = {}  # items `parallelism` holds back, by entry
            for at, name in enumerate(order):
                if limit is not None and len(creates) >= limit:
                    rest = order[at:]
                    break
                entry = self.entries[name]
                if self.exits.names and not self._may_start(entry):
                    continue
                if entry.renew and entry.observed:
                    replaced.append(entry.job)  # the failed attempt goes first
                    continue
                if not entry.creatable():
                    continue
                fan = self.fans[entry.item.group] if entry.item is not None else None
                if fan is not None and fan.held is not None:
                    fan.held.add(name)  # (its entry waits for its dependencies: `rerun`)
                    fan.released.discard(name)
                    continue
                if fan is not None and not fan.may_build(name):
                    blocked.setdefault(fan.name, []).append(name)  # (waits for a place)
                    continue
                job = self._build(entry, templates)
                if job is not None:
                    creates.append(job)
                    if fan is not None:
                        fan.built(name)
                elif entry.state != State.NONE:  # its `when`/`switch` decided it
                    gated = True
                    if entry.state == State.FAILED:
                        self._settle()  # (the flow may have failed: nothing more is made)
                        if self._failed_or_stopping:
                            looked = at + 1
                            break
            for group, held_back in blocked.items():  # (in index order among the waiting)
                expansion.wait_in_order(self, self.fans[group], held_back)
            if rest:  # (what was looked at leaves the candidates: O(limit), not O(left))
                self.candidates.difference_update(order[: len(order) - len(rest)])
            else:
                self.candidates.difference_update(order[:looked])
            self._left = rest
            if not gated:
                break
            self._settle()  # a `when` skipped or failed an entry: its successors are next
            if rest or not self.candidates:
                break
        terminate, self._terminate = tuple(self._terminate), []
        deletes = self.to_delete()
        if deletes:  # (a stop or the retain policy removes them all anyway)
            replaced = []
        return Plan(
            tuple(creates), tuple(deletes), self.phase, bool(rest), terminate, tuple(replaced)
        )

    def _may_start(self, entry: Entry) -> bool:
        """In a flow with exit handlers: a handler once the other entries have ended, any
        other entry until the flow fails or stops."""
        if entry.name in self.exits.names:
            return self.exits.released
        return not self._failed_or_stopping

    def _build(self, entry: Entry, templates: Mapping[str, JobTemplate]) -> VCJob | None:
        """The entry's vcjob, or None: it waits (a template, a target's outputs), or its
        `when`/`switch` decided an outcome without one (the entry's state says)."""
        spec_entry = self.flow.flows[entry.index]
        wanted = spec_entry.template_name
        env: dict[str, str] = {}
        case: int | None = None
        item = expansion.item_value(self, entry)
        basis = self.entries[entry.item.group] if entry.item is not None else entry
        if self.args_env is not None:
            if self.outputs.waiting_for(entry) is not None:
                return None  # (its outputs are read before the next decision)
            gate = language.gate(entry, spec_entry, self.entries, self.args, self.outputs, item)
            if gate.state == State.NONE and item is None and spec_entry.for_each is not None:
                gate = self._expand(entry)
            if gate.state != State.NONE:
                entry.verdict, entry.verdict_message = gate.reason, gate.message
                self.ready.move(entry, gate.state, None)
                if entry.name in self.fans:
                    expansion.drop(self, self.fans[entry.name])  # (its held items)
                return None
            if entry.name in self.fans:
                return None  # (expanded: its items are the candidates now)
            wanted, case = gate.template, gate.case
            if case is not None:
                record = self.history.get(entry.job, {"name": entry.job})
                self.history[entry.job] = {**record, "template": wanted, "switchCase": case}
            env[arguments.ENV_ARGS] = self.args_env
            env[reading.ENV_INPUTS] = language.inputs_env(basis, self.outputs)
            if entry.name in self.exits.names:
                env[language.ENV_FLOW_PHASE] = language.flow_phase_env(self.exits)
        template = templates.get(wanted)
        if template is None:
            entry.reason = TEMPLATE_NOT_FOUND
            entry.message = f'jobtemplate.flow.volcano.sh "{wanted}" not found'
            self.template_waiters.setdefault(wanted, set()).add(entry.name)
            return None
        creating = entry.attempt + 1 if entry.renew else entry.attempt
        language_used = self.args_env is not None
        try:
            job = jobbuild.build_job(
                self.flow,
                spec_entry,
                template,
                attempt=creating,
                env=env if language_used else None,
                case=case,
                values=(self.args, self.outputs.of_targets(basis)) if language_used else None,
                item=item,
            )
        except SubstitutionError as exc:
            entry.verdict, entry.verdict_message = language.SUBSTITUTION_FAILED, str(exc)
            self.ready.move(entry, State.FAILED, None)
            return None
        entry.creating = creating
        return job

    def _expand(self, group: Entry) -> language.Gate:
        """A `for` entry whose dependencies are met and whose `when` held: its items, or
        why it has none (NoItems: Skipped) or cannot have them (ItemsInvalid: Failed).
        Once only: an entry expanded already (a retry reset it) keeps its items."""
        if group.name in self.fans:
            expansion.rerun(self, group, self.fans[group.name])  # (its held items go)
            return language.Gate()
        try:
            values = expansion.values_of(self, group, self.outputs.of_targets(group))
        except foreach.ItemsError as exc:
            return language.Gate(state=State.FAILED, reason=foreach.ITEMS_INVALID, message=str(exc))
        if not values:
            return language.Gate(
                state=State.SKIPPED, reason=foreach.NO_ITEMS, message="for: no items"
            )
        expansion.expand(self, group, values)
        return language.Gate()

    def _item_moved(self, item: Entry, before: State, after: State) -> None:
        expansion.item_moved(self, item, before, after)

    def to_delete(self) -> list[str]:
        """`jobRetainPolicy: delete` removes the vcjobs once the flow Succeed (row 16 keeps
        their outcome); a stop removes them all — but the exit handlers', which run after."""
        stop = self.stopping and self.phase != FlowPhase.SUCCEED
        keep = self.phase != FlowPhase.SUCCEED or self.flow.retain_policy != RetainPolicy.DELETE
        if not self._live or (keep and not stop):
            return []
        spare = self.exits.names if stop else frozenset()
        return [
            e.job
            for e in self.entries.values()
            if (e.observed or e.created) and e.name not in spare
        ]

    # -- outputs ---------------------------------------------------------------------------

    def outputs_to_read(self) -> list[str]:
        """The vcjobs whose outputs the controller reads (from their pods) before the next
        decision: the entries that completed since."""
        return [self.entries[n].job for n in sorted(self.outputs.unread) if n not in self.fans]

    def give_outputs(
        self, job_name: str, found: dict[str, Any] | reading.Failure, now: datetime
    ) -> None:
        """The outputs read from the pods of the entry's completed vcjob, or why they fail
        it (section 12): kept in its `jobStatusList` item, or the entry fails."""
        entry = self.by_job[job_name]
        if entry.name not in self.outputs.unread:
            return
        if not isinstance(found, reading.Failure):
            found = self.outputs.too_large(found) or found
        held = self.outputs.give(entry.name, None if isinstance(found, reading.Failure) else found)
        self.candidates.update(held)
        if isinstance(found, reading.Failure):
            self._set_phase(entry, JobPhase.FAILED, now)
            if entry.state == State.FAILED:
                entry.verdict, entry.verdict_message = found.reason, found.message
            return
        item = self.history.get(entry.job)
        if found and item is not None:
            self.history[entry.job] = {**item, "outputs": found}

    def counts(self) -> phases.Counts:
        return self.ready.counts()

    # -- status ----------------------------------------------------------------------------

    def status(self) -> JobFlowStatus:
        """The status to write: lists, conditions (with Waiting entries, row 18),
        jobStatusList (cumulative) and the phase. O(entries + edges)."""
        return JobFlowStatus.model_validate(self.status_data())

    def status_data(self) -> dict[str, Any]:
        """`status()` in wire form, built from plain dicts (`flowstatus.render`): what the
        controller compares with the last status written, and validates only to write it.

        The result shares the history items with the index; they are never changed in
        place (copy on write), so a rendered status stays as rendered. In the compact form
        when it outgrows Volcano's layout (`statusfit`)."""
        return fitting.fit(flowstatus.render(self), rest=self._rest.of(self.flow))

    # -- timers ----------------------------------------------------------------------------

    def _valid(self, timer: timers.Timer) -> bool:
        kind = timer.kind
        if kind == timers.FLOW:
            return not self.expired and self.phase not in _FINAL and self.deadline_at == timer.due
        if kind == timers.PROBE:
            return self.probing.valid(timer)
        entry = self.entries.get(timer.name)
        if entry is None:
            return False
        if kind == timers.RETRY:
            return entry.retry_waits(timer.due)
        return entry.deadline_pending(timer.due)

    def _fire(self, now: datetime) -> None:
        for timer in self.timers.due(now):
            if timer.kind == timers.RETRY:
                entry = self.entries[timer.name]
                entry.renew = True
                self.candidates.add(entry.name)
            elif timer.kind == timers.DEADLINE:
                entry = self.entries[timer.name]
                entry.deadline_hit = True
                self._terminate.append(entry.job)
            elif timer.kind == timers.FLOW:
                self.expired = True
            elif self.probing.fire(self.entries[timer.name], self.entries[timer.target]):
                self._probe_met(self.entries[timer.name], timer.target)

    def _arm_deadline(self, entry: Entry) -> None:
        if entry.deadline is None or entry.created_at is None or entry.deadline_hit:
            return
        due = entry.created_at + timedelta(seconds=entry.deadline)
        if entry.deadline_at != due:
            entry.deadline_at = due
            self.timers.set(due, timers.DEADLINE, entry.name)

    def _arm_flow_deadline(self, since: datetime | None) -> None:
        self.deadline_at = retryrequest.flow_deadline(self.flow, self.last_retry, since)
        if self.deadline_at is not None:
            self.timers.set(self.deadline_at, timers.FLOW)

    # -- probes ----------------------------------------------------------------------------

    def _probing(self, entry: Entry, target: Entry) -> bool:
        """Is the dependency of `entry` on `target` still one a probe may meet?"""
        return (
            entry.probe is not None
            and not entry.has_job
            and entry.state == State.NONE
            and target.name not in entry.probe_met
            and target.state not in OUTCOMES
            and self.phase not in _FINAL
        )

    def _reprobe(self, entry: Entry, target: Entry, now: datetime) -> None:
        """The target changed: where the probe of it stands."""
        active = self._probing(entry, target)
        if self.probing.changed(entry, target, now, active=active):
            self._probe_met(entry, target.name)

    def _probe_met(self, entry: Entry, target: str) -> bool:
        if target in entry.probe_met:
            return False
        before = contribution(entry.outcome, self.entries[target].state)
        entry.probe_met = entry.probe_met | {target}
        self.ready.count_edge(entry, target, before, MET)
        self._settle()
        return entry.ready()

    # -- retries ---------------------------------------------------------------------------

    def _request(self) -> RetryRequest | None:
        raw = self.flow.metadata.annotations.get(RETRY_ANNOTATION)
        return RetryRequest.parse(raw) if raw else None

    def _take_request(self, now: datetime) -> None:
        """Carry out a `vcflow retry` request once: it is then `status.lastRetry` (which
        outlives the annotation: a later `apply` of the manifest drops it)."""
        request = self._request()
        done = RetryRequest.parse(self.last_retry) if self.last_retry else None
        if request is None or (done is not None and request.id == done.id):
            return
        self.last_retry = request.to_annotation()
        if self.phase != FlowPhase.FAILED:
            return  # (the CLI refuses; a request that meets a flow not Failed does nothing)
        self.phase = FlowPhase.PENDING
        self.exits.base, self.exits.released = FlowPhase.PENDING, False
        self.expired = False
        self._arm_flow_deadline(request.at)
        chosen = to_reset(self.entries, request)
        for entry in chosen:
            reset(self.ready, self.history, entry, request.at)
        if request.restart_successful and self.fans:
            expansion.hold(self, chosen)  # (a `for` entry reset with its dependencies)

    # -- bookkeeping -----------------------------------------------------------------------

    def _set_phase(
        self,
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
            state = settled(new)
            if state != State.LIVE and not final and self._may_retry(entry, state):
                ended = DEADLINE_EXCEEDED if entry.deadline_hit and state == State.FAILED else new
                attempts.start_backoff(self.timers, self.flow.metadata.uid, entry, now, ended)
                state = State.BACKOFF
            elif state == State.FAILED and not final:
                entry.verdict, entry.verdict_message = failure_verdict(entry)
            elif state != State.FAILED:
                entry.verdict = entry.verdict_message = ""
            self.ready.move(entry, state, new)
            if state == State.COMPLETED and self.args_env is not None:
                self.outputs.completed(entry.name)
            self._settle()
        history.record(self.history, entry, new, now, job=job)

    def _may_retry(self, entry: Entry, state: State) -> bool:
        plan = entry.policy
        if entry.attempt >= entry.last_attempt or plan.retries == 0:
            return False
        # (a flow that failed or stops cancels the retry: `_settle`)
        return state != State.COMPLETED or plan.policy == RetryStrategy.ALWAYS

    def _skip(self, entry: Entry) -> None:
        entry.verdict, entry.verdict_message = skip_verdict(entry)
        self.ready.move(entry, State.SKIPPED, None)
        if entry.name in self.fans:
            expansion.drop(self, self.fans[entry.name])  # (a `for` entry holding its items)


def _probe(entry: Entry) -> Probe:
    assert entry.probe is not None
    return entry.probe


def plan(
    flow: JobFlow,
    templates: Mapping[str, JobTemplate],
    jobs: Iterable[VCJob],
    *,
    now: datetime,
    tombstones: Mapping[str, str] | None = None,
    limit: int | None = None,
    platform: Platform = Platform.LOCAL,
) -> tuple[FlowIndex, Plan]:
    """The full reconcile: an index built from the flow's status, the vcjobs that exist
    (`jobs`: any in the namespace; foreign ones become NameConflict) and `tombstones`
    (job name → last phase of vcjobs deleted since the status was written); `limit` as in
    `FlowIndex.decide`; `platform` as in `probes.target_of`."""
    index = FlowIndex(flow, platform=platform)
    index.restore(flow.status)
    seen: set[str] = set()
    for job in jobs:
        if job.name in index.by_job or index.has_for:
            index.observe(job, now)  # (an item's vcjob expands its `for` entry: adopted)
            if job.name in index.by_job:
                seen.add(job.name)
    for name, last in (tombstones or {}).items():
        if name not in seen:
            index.forget(name, last, now, existed=True)
    for entry in index.entries.values():
        if (
            entry.gone
            and entry.job not in seen
            and entry.state == State.LIVE
            and entry.verdict != JOB_DELETED
        ):
            index.forget(entry.job, entry.phase or "", now)
        if not entry.has_job:
            index.candidates.add(entry.name)
    for fan in index.fans.values():
        expansion.refill(index, fan)  # (the items with no vcjob wait for `parallelism`)
    return index, index.decide(templates, limit, now=now)
