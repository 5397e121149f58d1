"""Hand-over holds (docs/scheduling.md, `handover`): resources a flow's ended job freed, kept
for that flow's successors for a while. Other flows' jobs see them as used; the flow's own
jobs may use them, and what an admitted job uses of its flow's hold is consumed. A hold goes
at zero, at its expiry, or when the shell drops it (the flow stopped or is gone).

Also the `vcflow.io/handover` annotation's reading. Pure: no I/O, no clock (time comes in).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from fractions import Fraction

from vcflow.api import names
from vcflow.api.scheduling import HANDOVER
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import resources
from vcflow.reconcile.vcjob.resources import Capacity, Resources

_ZERO = Fraction(0)


@dataclass(frozen=True)
class Handover:
    """A job's `vcflow.io/handover` annotation: hold `need` for `hold_seconds` when it ends."""

    hold_seconds: float
    need: Mapping[str, Fraction]


def handover_of(job: VCJob) -> Handover | None:
    """The job's hand-over request, None without one or when it is not readable (the flow
    controller writes it; a hand-made wrong one only loses the hold)."""
    raw = job.metadata.annotations.get(HANDOVER)
    if not raw:
        return None
    try:
        data = json.loads(raw)
        seconds = float(data.get("holdSeconds", 0))
        need = resources.parse(data.get("need") or {})
    except (ValueError, TypeError, AttributeError):
        return None
    if seconds <= 0 or not need:
        return None
    return Handover(seconds, need)


def flow_of(job: VCJob) -> str | None:
    """The `<ns>.<name>` of the flow that made the job (its createdByJobFlow label)."""
    return job.metadata.labels.get(names.LABEL_CREATED_BY_FLOW) or None


@dataclass(frozen=True)
class Hold:
    """What is held for one flow, until `expires`."""

    flow: str
    amount: Mapping[str, Fraction]
    expires: datetime


@dataclass(frozen=True)
class Holds:
    """Every live hold, by flow (`<ns>.<name>`)."""

    by_flow: Mapping[str, Hold] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.by_flow)

    def __iter__(self) -> Iterator[Hold]:
        return iter(self.by_flow.values())

    def add(self, flow: str, amount: Resources, now: datetime, seconds: float) -> Holds:
        """Hold `amount` more for `flow`; two holds of one flow add up and last the longer."""
        kept = {n: a for n, a in amount.items() if a > 0}
        if not kept:
            return self
        expires = now + timedelta(seconds=seconds)
        old = self.by_flow.get(flow)
        if old is not None:
            kept = resources.add(old.amount, kept)
            expires = max(expires, old.expires)
        return Holds({**self.by_flow, flow: Hold(flow, kept, expires)})

    def consume(self, flow: str | None, used: Resources) -> Holds:
        """`flow`'s hold less what one of its admitted jobs uses of it; gone at zero."""
        old = self.by_flow.get(flow) if flow is not None else None
        if old is None or flow is None:
            return self
        left = {n: a - min(a, used.get(n, _ZERO)) for n, a in old.amount.items()}
        left = {n: a for n, a in left.items() if a > 0}
        return self.drop(flow) if not left else self._with(replace(old, amount=left))

    def drop(self, flow: str) -> Holds:
        if flow not in self.by_flow:
            return self
        return Holds({f: h for f, h in self.by_flow.items() if f != flow})

    def expire(self, now: datetime) -> Holds:
        """Without the holds due at `now`."""
        if all(h.expires > now for h in self):
            return self
        return Holds({f: h for f, h in self.by_flow.items() if h.expires > now})

    def within(self, room: Capacity) -> Holds:
        """The holds cut to what is free (`room`: capacity less what placed pods use and
        admitted gangs reserve): a hold never claims what another job already has. Holds
        are cut in flow order; a hold cut to nothing goes."""
        left = {n: room.limit(n) for h in self for n in h.amount}
        out: dict[str, Hold] = {}
        changed = False
        for flow in sorted(self.by_flow):
            hold = self.by_flow[flow]
            kept: dict[str, Fraction] = {}
            for n, a in hold.amount.items():
                free = left[n]
                take = a if free is None else min(a, max(free, _ZERO))
                if free is not None:
                    left[n] = free - take
                if take > 0:
                    kept[n] = take
            changed |= kept != dict(hold.amount)
            if kept:
                out[flow] = replace(hold, amount=kept)
        return Holds(out) if changed else self

    def next_due(self) -> datetime | None:
        return min((h.expires for h in self), default=None)

    def against(self, flow: str | None) -> dict[str, Fraction]:
        """What a job of `flow` (None: of no flow) sees as used: every other flow's hold."""
        return resources.total(h.amount for f, h in self.by_flow.items() if f != flow)

    def _with(self, hold: Hold) -> Holds:
        return Holds({**self.by_flow, hold.flow: hold})


#: no holds (a shared immutable default)
NONE = Holds()
