"""The flow controller's side of `admission: Hold` (docs/scheduling.md): the Queues it reads
(listed once, listed again after a Queue event) and the machine it was given, handed to the
pure `reconcile.neverfits.why_held`. A store that holds no Queue kind has the implicit
`default` queue only, and the controller then does not watch Queues.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar

from vcflow.api import scheduling
from vcflow.api.errors import NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.queues import QueueTable
from vcflow.api.scheduling import Queue
from vcflow.controller.events import NORMAL, WARNING, Recorder
from vcflow.reconcile import neverfits
from vcflow.reconcile.flow import FlowIndex
from vcflow.reconcile.vcjob.resources import Capacity
from vcflow.store.base import Store, UnknownKind

K = TypeVar("K")
#: holds remembered for their Events at most
TOLD_MAX = 10_000


def asks_hold(flow: JobFlow) -> bool:
    """Does the flow ask for `admission: Hold`?"""
    policy = flow.spec.scheduling_policy if flow.spec is not None else None
    return policy is not None and policy.admission == scheduling.ADMISSION_HOLD


class QueueWatch:
    """Why a flow with `admission: Hold` is held, against the stored Queues and `machine`."""

    def __init__(self, store: Store, machine: Capacity, recorder: Recorder | None = None) -> None:
        self.store = store
        self.machine = machine
        self.recorder = recorder
        #: flow uid → the hold last told in an Event (so each hold and release is told once)
        self._told: dict[str, str] = {}
        self._table: QueueTable | None = None
        #: the store has the Queue kind (Queues are watched, a change releases a hold)
        self.known = self._list() is not None

    def watched(self, kinds: tuple[type[Resource], ...]) -> tuple[type[Resource], ...]:
        """The controller's watched kinds, with Queue where the store has it."""
        return (*kinds, Queue) if self.known else kinds

    def forget(self) -> None:
        """The next check lists the Queues again."""
        self._table = None

    def queues_changed(self, indexes: Mapping[K, FlowIndex]) -> Iterator[K]:
        """A Queue was written or deleted: the next check lists them again; the keys of
        the flows held now, to be synced (and checked) again."""
        self.forget()
        return (key for key, index in indexes.items() if index.state.scheduling.held)

    def recheck(
        self, index: FlowIndex, flow: JobFlow, templates: Mapping[str, JobTemplate]
    ) -> None:
        """Before a sync's decision: a Hold flow none of whose vcjobs exists yet is held
        or released by what the Queues and the machine say now."""
        if index.state.scheduling.policy.hold and not index.started:
            index.hold(self.why(flow, templates))
            self.tell(flow, index.state.scheduling.held)

    def tell(self, flow: JobFlow, held: str) -> None:
        """An Event when a flow's hold begins or changes (Warning `Held`, its message) and
        when it ends (Normal `Released`), as `kubectl describe jf` shows them."""
        uid = flow.metadata.uid
        if held == self._told.get(uid, "") or self.recorder is None:
            return
        if held:
            if len(self._told) >= TOLD_MAX:
                self._told.clear()  # (flows deleted while held; at worst told again)
            self._told[uid] = held
            self.recorder.record(flow, WARNING, "Held", held)
        else:
            del self._told[uid]
            self.recorder.record(flow, NORMAL, "Released", "the flow fits its queue now")

    def why(self, flow: JobFlow, templates: Mapping[str, JobTemplate]) -> str:
        """Why `flow` can never fit ("": it may run, or it does not ask for a hold)."""
        if not asks_hold(flow):
            return ""
        if self._table is None:
            self._table = QueueTable.of(self._list() or [])
        return neverfits.why_held(flow, templates, self._table, self.machine)

    def _list(self) -> list[Queue] | None:
        try:
            return self.store.list(Queue)
        except (UnknownKind, NotFound):  # (no such kind here, or no Queue CRD served)
            return None
