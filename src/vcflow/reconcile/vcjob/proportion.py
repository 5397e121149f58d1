"""Each queue's *deserved* share of the machine, as Volcano's proportion plugin computes it
(`pkg/scheduler/plugins/proportion/proportion.go:196-260`): the capacity is water-filled by
weight, each queue capped by its capability and by its request (what it holds plus what its
waiting jobs need) and floored at its guarantee; what a capped queue leaves goes round again.
Capping by request makes it work-conserving: a queue alone with a backlog deserves all.
Also the share (allocated ÷ deserved, the queue order) and the overused test. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from vcflow.reconcile.vcjob import resources
from vcflow.reconcile.vcjob.resources import Capacity, Resources

#: Rounds of water-filling at most: exact fractions may shrink a remainder for ever where
#: Volcano's floats stop; what is left after this many rounds is negligible.
MAX_ROUNDS = 64
_ZERO = Fraction(0)


@dataclass(frozen=True)
class QueueDemand:
    """One queue as the proportion plugin sees it. `capability` None: uncapped."""

    name: str
    weight: int = 1
    request: Resources = field(default_factory=dict)
    capability: Resources | None = None
    guarantee: Resources = field(default_factory=dict)


def deserved(capacity: Capacity, queues: Sequence[QueueDemand]) -> dict[str, dict[str, Fraction]]:
    """Queue name → its deserved resources, over the resources the machine limits (the
    others are not contended: no queue is held back for them)."""
    limited = {n: a for n, a in capacity.amounts.items() if not capacity.unlimited}
    guaranteed = resources.total(q.guarantee for q in queues)
    real_cap = {q.name: _real_capability(q, limited, guaranteed) for q in queues}
    out: dict[str, dict[str, Fraction]] = {q.name: {} for q in queues}
    remaining = dict(limited)
    meet: set[str] = set()
    for _ in range(MAX_ROUNDS):
        total_weight = sum(q.weight for q in queues if q.name not in meet)
        if total_weight == 0:
            break
        before = dict(remaining)
        increased: dict[str, Fraction] = {}
        decreased: dict[str, Fraction] = {}
        for queue in (q for q in queues if q.name not in meet):
            old = out[queue.name]
            share = Fraction(queue.weight, total_weight)
            new = resources.add(old, {n: a * share for n, a in remaining.items()})
            new = _min_dimension(new, real_cap[queue.name])
            new = {n: min(a, queue.request.get(n, _ZERO)) for n, a in new.items()}
            new = _max(new, queue.guarantee)
            out[queue.name] = new
            if _less_equal(queue.request, new, limited) or new == old:
                meet.add(queue.name)
            for n in set(new) | set(old):
                diff = new.get(n, _ZERO) - old.get(n, _ZERO)
                if diff > 0:
                    increased[n] = increased.get(n, _ZERO) + diff
                elif diff < 0:
                    decreased[n] = decreased.get(n, _ZERO) - diff
        grown = resources.add(remaining, decreased)
        remaining = {n: max(a - increased.get(n, _ZERO), _ZERO) for n, a in grown.items()}
        if not any(remaining.values()) or remaining == before:
            break
    return out


def _real_capability(
    queue: QueueDemand, limited: Mapping[str, Fraction], guaranteed: Resources
) -> dict[str, Fraction]:
    """Volcano's realCapability: what others' guarantees leave plus its own, within its
    capability."""
    real = {
        n: max(a - guaranteed.get(n, _ZERO), _ZERO) + queue.guarantee.get(n, _ZERO)
        for n, a in limited.items()
    }
    if queue.capability is not None:
        for n, cap in queue.capability.items():
            real[n] = min(real.get(n, cap), cap)
    return real


def _min_dimension(have: Resources, cap: Mapping[str, Fraction]) -> dict[str, Fraction]:
    return {n: min(a, cap[n]) if n in cap else a for n, a in have.items()}


def _max(have: Resources, floor: Resources) -> dict[str, Fraction]:
    out = dict(have)
    for n, a in floor.items():
        out[n] = max(out.get(n, _ZERO), a)
    return out


def _less_equal(small: Resources, big: Resources, limited: Mapping[str, Fraction]) -> bool:
    return all(a <= big.get(n, _ZERO) for n, a in small.items() if n in limited)


def share(allocated: Resources, deserved_: Resources) -> Fraction:
    """The largest allocated ÷ deserved over the resources (Volcano's `share`): a queue
    holding what it does not deserve counts 1."""
    out = _ZERO
    for n in set(allocated) | set(deserved_):
        have, due = allocated.get(n, _ZERO), deserved_.get(n, _ZERO)
        if due > 0:
            out = max(out, have / due)
        elif have > 0:
            out = max(out, Fraction(1))
    return out


def overused(allocated: Resources, deserved_: Resources) -> bool:
    """Deserved ≤ allocated in every resource it deserves (Volcano's `Overused`); a queue
    that deserves nothing (it asks for no limited resource) is never overused."""
    positive = {n: a for n, a in deserved_.items() if a > 0}
    return bool(positive) and all(a <= allocated.get(n, _ZERO) for n, a in positive.items())
