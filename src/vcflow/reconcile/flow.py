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
with its parts: `flowstate` (what the index knows: it owns one `FlowState`, and the parts
take that, not the index), `entries` (an entry, its state, the wording of outcomes),
`readiness` (the counting), `transitions` (an entry's new state and what follows),
`building` (an entry's vcjob), `expansion` (`for` entries), `history` (jobStatusList),
`attempts` and `retryrequest` (retries, `vcflow retry`), `probing` (probe rounds),
`restore` (a stored status read back), `flowstatus` (the status rendered), `statusfit` (its
form: Volcano's layout or the compact one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vcflow.api.jobflow import JobFlow, JobFlowStatus
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import (
    FlowPhase,
    JobPhase,
    RetainPolicy,
)
from vcflow.api.platform import Platform
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import (
    attempts,
    building,
    expansion,
    flowstatus,
    language,
    probes,
    retry,
    timers,
    transitions,
)
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import outputs as reading
from vcflow.reconcile import restore as restoring
from vcflow.reconcile import statusfit as fitting
from vcflow.reconcile.entries import (
    BACKOFF,
    CREATE_FAILED,
    DEADLINE_ANNOTATION,
    DEADLINE_EXCEEDED,
    DEPENDENCIES,
    JOB_DELETED,
    NAME_CONFLICT,
    RETRIES_EXHAUSTED,
    RETRY_ANNOTATION,
    RETRY_CANCELLED,
    SKIPPED,
    STOP_ANNOTATION,
    TEMPLATE_NOT_FOUND,
    WAITING,
    Entry,
    State,
    condition_of,
    conflict_message,
    parse_time,
)
from vcflow.reconcile.flowstate import FlowState
from vcflow.reconcile.retryrequest import RetryRequest

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
        #: what is known of the flow: its entries, their jobs, the phase (`flowstate`)
        self.state = FlowState(flow, platform)
        #: the candidates a limited `decide` left, in flow order: the next one need not sort
        #: them again while no candidate was added (a 10,000-wide flow, 50 at a time)
        self._left: list[str] = []
        self._terminate: list[str] = []
        self._rest = fitting.RestSize()
        self.state.ready.on_item = self._item_moved
        self.state.arm_flow_deadline(None)
        self.state.recompute()

    # -- what the controller reads (and the flow it replaces) --------------------------------

    @property
    def flow(self) -> JobFlow:
        return self.state.flow

    @flow.setter
    def flow(self, flow: JobFlow) -> None:
        self.state.flow = flow

    @property
    def phase(self) -> FlowPhase:
        return self.state.phase

    @property
    def stopping(self) -> bool:
        return self.state.stopping

    @property
    def last_retry(self) -> str | None:
        return self.state.last_retry

    @last_retry.setter
    def last_retry(self, value: str | None) -> None:
        self.state.last_retry = value

    @property
    def entries(self) -> dict[str, Entry]:
        return self.state.entries

    @property
    def by_job(self) -> dict[str, Entry]:
        return self.state.by_job

    @property
    def candidates(self) -> set[str]:
        return self.state.candidates

    @property
    def template_waiters(self) -> dict[str, set[str]]:
        return self.state.template_waiters

    def restore(self, status: JobFlowStatus | None) -> None:
        """Remember what a previous status says of each entry's job (row 16), its attempts
        and a retry that waits (`restore.restore`)."""
        restoring.restore(self.state, status)

    # -- events -----------------------------------------------------------------------------

    def observe(self, job: VCJob, now: datetime) -> None:
        """A vcjob of this flow was seen (created or changed) with this content."""
        state = self.state
        entry = state.by_job.get(job.name)
        if entry is None and state.has_for and jobbuild.is_owned_by(job, state.flow):
            if expansion.adopt(state, job.name):  # (an item made before the status said so)
                entry = state.by_job[job.name]
        if entry is None:
            return
        if not jobbuild.is_owned_by(job, state.flow):
            if not entry.observed:
                self._conflict(entry, job)
            return
        attempt = retry.attempt_of(job.metadata.annotations)
        if attempt < entry.attempt:
            return  # an earlier attempt's vcjob (its replacement is under way)
        fresh = attempt > entry.attempt
        if fresh:  # created before the status said so (a controller that died): adopted
            state.ready.set_attempt(entry, attempt)
            entry.first_attempt = min(entry.first_attempt, attempt)
            entry.renew, entry.next_at, entry.ended = False, None, ""
            entry.deadline_hit, entry.deadline_at = False, None
            entry.verdict = entry.verdict_message = ""
        status = job.status
        entry.uid = job.metadata.uid or ""
        entry.condition = condition_of(job)
        if not fresh and entry.state == State.BACKOFF:
            # the attempt that failed, still in the store until its retry is due
            state.set_live(entry, observed=True, created=False)
            entry.gone = False
            if DEADLINE_ANNOTATION in job.metadata.annotations:
                entry.ended = DEADLINE_EXCEEDED
            transitions.settle(state)
            return
        state.set_live(entry, observed=True, created=False)
        entry.gone = False
        entry.reason = entry.message = ""
        entry.deadline_hit |= DEADLINE_ANNOTATION in job.metadata.annotations
        entry.vc_retry = (status.retry_count if status else None) or 0
        if entry.deadline is not None:
            entry.created_at = parse_time(job.metadata.creation_timestamp)
            state.arm_deadline(entry)
        phase = job.phase
        if phase == JobPhase.COMPLETED and entry.verdict in language.OUTPUT_REASONS:
            phase = JobPhase.FAILED  # (its outputs failed it: docs/flow-features.md section 12)
        # (settles on a change)
        transitions.set_phase(state, entry, phase, now, job=job, fresh=fresh)
        if entry.probed_by:
            entry.view = probes.target_of(job, platform=state.platform)
            for name in entry.probed_by:
                transitions.reprobe(state, state.entries[name], entry, now)

    def forget(
        self, job_name: str, last_phase: str, now: datetime, *, existed: bool = False
    ) -> None:
        """A vcjob of this flow was deleted; its last phase is its outcome (row 16).
        `existed`: the caller saw the job (a tombstone), even if this index did not."""
        state = self.state
        entry = state.by_job.get(job_name)
        if entry is not None and entry.reason == NAME_CONFLICT and not existed:
            self.conflict_gone(job_name)  # the foreign vcjob holding the name went away
            return
        if entry is None or not (existed or entry.observed or entry.created or entry.gone):
            return
        state.set_live(entry, observed=False, created=False)
        entry.view = None
        if entry.state == State.BACKOFF:  # its failed attempt's vcjob: the retry still comes
            entry.gone = True
            entry.condition = {}  # (as a status restored without it has none)
            if entry.renew:
                state.candidates.add(entry.name)
            transitions.settle(state)
            return
        entry.gone = True
        if entry.state in (State.COMPLETED, State.FAILED) and entry.phase == last_phase:
            transitions.settle(state)  # it had ended: its outcome stands
            return
        if last_phase == JobPhase.COMPLETED:
            transitions.set_phase(state, entry, JobPhase.COMPLETED, now, final=True)
        else:
            entry.verdict = JOB_DELETED
            entry.verdict_message = f"vcjob {job_name} was deleted before it finished"
            transitions.set_phase(state, entry, JobPhase.FAILED, now, final=True)
        transitions.settle(state)

    def seen_phase(self, job_name: str, uid: str) -> str:
        """The phase this index last saw of the vcjob `job_name` with that uid (any, if
        `uid` is ""); "" when it saw none, or another object of that name. What a vcjob
        deleted by its flow ended as when the DELETE answered no object (kube-apiserver's
        Status for a custom resource)."""
        entry = self.state.by_job.get(job_name)
        if entry is None or not entry.observed or (uid and entry.uid != uid):
            return ""
        return entry.phase or ""

    def conflict_gone(self, job_name: str) -> bool:
        """The foreign vcjob that held this entry's name was deleted: the entry may now be
        created (row 12). True when that changed anything."""
        entry = self.state.by_job.get(job_name)
        if entry is None or entry.reason != NAME_CONFLICT or entry.observed or entry.created:
            return False
        entry.reason = entry.message = ""
        self.state.candidates.add(entry.name)
        return True

    def hold(self, message: str) -> None:
        """`admission: Hold` (docs/scheduling.md): while `message` says why the flow can
        never fit, `decide` creates nothing and the status says so; "" lets it go."""
        self.state.scheduling.held = message

    @property
    def started(self) -> bool:
        """Has any vcjob of the flow been created (or seen)? A hold applies only before."""
        return any(e.has_job or e.state != State.NONE for e in self.state.entries.values())

    def template_appeared(self, template: str) -> None:
        """Entries that waited for this JobTemplate become candidates again."""
        for name in self.state.template_waiters.pop(template, set()):
            self.state.candidates.add(name)

    def mark_created(self, job_name: str) -> None:
        state = self.state
        entry = state.by_job[job_name]
        state.outputs.forget(entry.name)
        state.set_live(entry, observed=entry.observed, created=True)
        entry.reason = entry.message = ""
        if entry.renew:
            attempts.new_attempt(state.ready, state.history, entry, entry.creating)

    def mark_create_failed(self, job_name: str, message: str) -> None:
        """The API refused the create (row 9): the entry waits with the reason, retried."""
        entry = self.state.by_job[job_name]
        entry.reason, entry.message = CREATE_FAILED, message
        self.state.candidates.add(entry.name)

    def mark_conflict(self, job: VCJob) -> None:
        self._conflict(self.state.by_job[job.name], job)

    def _conflict(self, entry: Entry, job: VCJob) -> None:
        """The entry waits: `job`, not this flow's, holds its vcjob's name (row 12). One
        that begins to (or whose holder changed) is noted for `take_conflicts`."""
        message = conflict_message(job)
        if (entry.reason, entry.message) != (NAME_CONFLICT, message):
            self.state.conflicts.append((entry.job, message))
        entry.reason, entry.message = NAME_CONFLICT, message

    def take_conflicts(self) -> list[tuple[str, str]]:
        """(vcjob name, message) of each entry that began waiting on NameConflict since
        the last call: the shell tells each once (a Warning Event)."""
        taken, self.state.conflicts = self.state.conflicts, []
        return taken

    def defer_create(self, job_name: str, message: str) -> None:
        """The next attempt's vcjob cannot be created yet (the last one's pods are still
        going): the entry stays a candidate."""
        entry = self.state.by_job[job_name]
        entry.message = message
        self.state.candidates.add(entry.name)

    def probe_result(
        self, entry_name: str, target: str, ok: bool, note: str, now: datetime
    ) -> bool:
        """The shell ran a probe round of `entry_name` on `target`: True when it met the
        dependency (the entry may now be created)."""
        state = self.state
        entry, key = state.entries[entry_name], (entry_name, target)
        if ok:
            state.probing.forget(key)
            return transitions.probe_met(state, entry, target)
        active = transitions.probing(state, entry, state.entries[target])
        state.probing.failed(key, note, now, active=active)
        return False

    def take_probes(self) -> list[probes.Round]:
        """The probe rounds the last `decide` found due, for the shell to run."""
        return self.state.probing.take()

    def next_wakeup(self) -> datetime | None:
        """When the earliest timer is due: a retry, a deadline, a probe round."""
        return self.state.timers.next()

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

        `limit` caps the creations, in creation order (`_creation_key`): the entries
        after it stay candidates, and `Plan.more` says the next decision has creations
        left to make."""
        state = self.state
        creates: list[VCJob] = []
        replaced: list[str] = []
        rest: list[str] = []
        state.building = False
        if now is not None:
            self._fire(now)
            transitions.take_request(state)
        if state.composing:
            expansion.compose(state)
        transitions.settle(state)
        if state.scheduling.held and (self.started or state.stopping):
            state.scheduling.held = ""  # (a hold stops a flow only before it starts)
        if state.scheduling.held:
            return Plan((), (), state.phase)  # (`admission: Hold`: nothing made, Pending)
        while state.phase not in (FlowPhase.FAILED, FlowPhase.SUCCEED, FlowPhase.TERMINATING):
            if self._left and len(self._left) == len(state.candidates):
                order = self._left  # (candidates only grow between decisions)
            else:
                order = sorted(state.candidates, key=self._creation_key)
            gated = False
            looked = len(order)
            blocked: dict[str, list[str]] = {}  # items `parallelism` holds back, by entry
            for at, name in enumerate(order):
                if limit is not None and len(creates) >= limit:
                    rest = order[at:]
                    break
                entry = state.entries[name]
                if state.exits.names and not self._may_start(entry):
                    continue
                if entry.renew and entry.observed:
                    replaced.append(entry.job)  # the failed attempt goes first
                    continue
                if not entry.creatable():
                    continue
                fan = state.fans[entry.item.group] if entry.item is not None else None
                if fan is not None and fan.held is not None:
                    fan.held.add(name)  # (its entry waits for its dependencies: `rerun`)
                    fan.released.discard(name)
                    continue
                if fan is not None and not fan.may_build(name):
                    blocked.setdefault(fan.name, []).append(name)  # (waits for a place)
                    continue
                job = building.build(state, entry, templates)
                if job is not None:
                    creates.append(job)
                    if fan is not None:
                        fan.built(name)
                elif entry.state != State.NONE:  # its `when`/`switch` decided it
                    gated = True
                    if entry.state == State.FAILED:
                        # (the flow may have failed: nothing more is made)
                        transitions.settle(state)
                        if state.failed_or_stopping:
                            looked = at + 1
                            break
            for group, held_back in blocked.items():  # (in index order among the waiting)
                expansion.wait_in_order(state, state.fans[group], held_back)
            if rest:  # (what was looked at leaves the candidates: O(limit), not O(left))
                state.candidates.difference_update(order[: len(order) - len(rest)])
            else:
                state.candidates.difference_update(order[:looked])
            self._left = rest
            if not gated:
                break
            transitions.settle(state)  # a `when` skipped or failed an entry: its successors
            if rest or not state.candidates:
                break
        terminate, self._terminate = tuple(self._terminate), []
        deletes = self.to_delete()
        if deletes:  # (a stop or the retain policy removes them all anyway)
            replaced = []
        return Plan(
            tuple(creates), tuple(deletes), state.phase, bool(rest), terminate, tuple(replaced)
        )

    def _creation_key(self, name: str) -> tuple[float, tuple[int, int]]:
        """Ready entries are created in flow order; under `jobOrder: CriticalPath` highest
        rank first (an item by its `for` entry's), flow order among equals."""
        state = self.state
        entry = state.entries[name]
        basis = entry.item.group if entry.item is not None else name
        return (state.scheduling.order_key(state.flow, state.history, basis), entry.rank)

    def _may_start(self, entry: Entry) -> bool:
        """In a flow with exit handlers: a handler once the other entries have ended, any
        other entry until the flow fails or stops."""
        if entry.name in self.state.exits.names:
            return self.state.exits.released
        return not self.state.failed_or_stopping

    def _item_moved(self, item: Entry, before: State, after: State) -> None:
        expansion.item_moved(self.state, item, before, after)

    def to_delete(self) -> list[str]:
        """`jobRetainPolicy: delete` removes the vcjobs once the flow Succeed (row 16 keeps
        their outcome); a stop removes them all — but the exit handlers', which run after."""
        state = self.state
        stop = state.stopping and state.phase != FlowPhase.SUCCEED
        keep = state.phase != FlowPhase.SUCCEED or state.flow.retain_policy != RetainPolicy.DELETE
        if not state.live or (keep and not stop):
            return []
        spare = state.exits.names if stop else frozenset()
        return [
            e.job
            for e in state.entries.values()
            if (e.observed or e.created) and e.name not in spare
        ]

    # -- outputs ---------------------------------------------------------------------------

    def outputs_to_read(self) -> list[str]:
        """The vcjobs whose outputs the controller reads (from their pods) before the next
        decision: the entries that completed since."""
        state = self.state
        return [state.entries[n].job for n in sorted(state.outputs.unread) if n not in state.fans]

    def give_outputs(
        self, job_name: str, found: dict[str, Any] | reading.Failure, now: datetime
    ) -> None:
        """The outputs read from the pods of the entry's completed vcjob, or why they fail
        it (section 12): kept in its `jobStatusList` item, or the entry fails."""
        state = self.state
        entry = state.by_job[job_name]
        if entry.name not in state.outputs.unread:
            return
        if not isinstance(found, reading.Failure):
            found = state.outputs.too_large(found) or found
        held = state.outputs.give(entry.name, None if isinstance(found, reading.Failure) else found)
        state.candidates.update(held)
        if isinstance(found, reading.Failure):
            transitions.set_phase(state, entry, JobPhase.FAILED, now)
            if entry.state == State.FAILED:
                entry.verdict, entry.verdict_message = found.reason, found.message
            return
        item = state.history.get(entry.job)
        if found and item is not None:
            state.history[entry.job] = {**item, "outputs": found}

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
        return fitting.fit(flowstatus.render(self.state), rest=self._rest.of(self.state.flow))

    # -- timers ----------------------------------------------------------------------------

    def _fire(self, now: datetime) -> None:
        state = self.state
        for timer in state.timers.due(now):
            if timer.kind == timers.RETRY:
                entry = state.entries[timer.name]
                entry.renew = True
                state.candidates.add(entry.name)
            elif timer.kind == timers.DEADLINE:
                entry = state.entries[timer.name]
                entry.deadline_hit = True
                self._terminate.append(entry.job)
            elif timer.kind == timers.FLOW:
                state.expired = True
            elif state.probing.fire(state.entries[timer.name], state.entries[timer.target]):
                transitions.probe_met(state, state.entries[timer.name], timer.target)


def plan(
    flow: JobFlow,
    templates: Mapping[str, JobTemplate],
    jobs: Iterable[VCJob],
    *,
    now: datetime,
    tombstones: Mapping[str, str] | None = None,
    limit: int | None = None,
    platform: Platform = Platform.LOCAL,
    held: str = "",
) -> tuple[FlowIndex, Plan]:
    """The full reconcile: an index built from the flow's status, the vcjobs that exist
    (`jobs`: any in the namespace; foreign ones become NameConflict) and `tombstones`
    (job name → last phase of vcjobs deleted since the status was written); `limit` as in
    `FlowIndex.decide`; `platform` as in `probes.target_of`; `held`: why `admission: Hold`
    holds the flow (`FlowIndex.hold`), if it does."""
    index = FlowIndex(flow, platform=platform)
    index.restore(flow.status)
    index.hold(held)
    state = index.state
    seen: set[str] = set()
    for job in jobs:
        if job.name in state.by_job or state.has_for:
            index.observe(job, now)  # (an item's vcjob expands its `for` entry: adopted)
            if job.name in state.by_job:
                seen.add(job.name)
    for name, last in (tombstones or {}).items():
        if name not in seen:
            index.forget(name, last, now, existed=True)
    for entry in state.entries.values():
        if (
            entry.gone
            and entry.job not in seen
            and entry.state == State.LIVE
            and entry.verdict != JOB_DELETED
        ):
            index.forget(entry.job, entry.phase or "", now)
        if not entry.has_job:
            state.candidates.add(entry.name)
    for fan in state.fans.values():
        expansion.refill(state, fan)  # (the items with no vcjob wait for `parallelism`)
    return index, index.decide(templates, limit, now=now)
