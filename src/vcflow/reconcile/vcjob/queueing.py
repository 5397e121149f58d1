"""Queue-aware admission (docs/scheduling.md, "Queues"): which waiting jobs a scheduler pass
admits, and why each other one waits. Queues take turns by priority (higher first), then
share (allocated ÷ deserved, lowest first; `proportion`); within a queue jobs go in the
order given (`joborder`). A job is admitted when its minimum fits what is free, less what is
held for other flows' hand-overs, and its queue's capability; a misfit does not block the
jobs after it. A queue at or over its deserved share admits nothing, even while resources
are free (another queue's job waits for them). No preemption, no reclaim. A waiting job's
reason is the first that holds of: queue missing or closed, over capability, resources
(held for another flow, or in use), queue at its share. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction

from vcflow.api import names
from vcflow.api.meta import ObjectMeta
from vcflow.api.scheduling import DEFAULT_QUEUE, OPEN, Queue, QueueSpec
from vcflow.reconcile.vcjob import proportion, resources
from vcflow.reconcile.vcjob.holds import NONE as NO_HOLDS
from vcflow.reconcile.vcjob.holds import Holds
from vcflow.reconcile.vcjob.resources import Capacity, Resources

Key = names.ObjectKey
_IMPLICIT_DEFAULT = Queue(metadata=ObjectMeta(name=DEFAULT_QUEUE, namespace=""), spec=QueueSpec())


class WaitKind(StrEnum):
    """Why a job waits; the shell rewrites a job's condition only when this changes."""

    NEVER_FITS = "NeverFits"
    QUEUE_MISSING = "QueueMissing"
    QUEUE_CLOSED = "QueueClosed"
    CAPABILITY = "QueueCapability"
    SHARE = "QueueShare"
    HELD = "HandoverHold"
    RESOURCES = "Resources"


@dataclass(frozen=True)
class Wait:
    """A waiting job's reason: its kind and a one-line message for its condition."""

    kind: WaitKind
    message: str


@dataclass(frozen=True)
class Candidate:
    """A job waiting for admission: its queue, its flow (`<ns>.<name>` or None) and its
    minimum resources."""

    key: Key
    queue: str
    flow: str | None
    need: Resources


@dataclass(frozen=True)
class Admission:
    admitted: tuple[Key, ...] = ()
    waits: Mapping[Key, Wait] = field(default_factory=dict)
    holds: Holds = NO_HOLDS


def lookup(queues: Mapping[str, Queue], name: str) -> Queue | None:
    """The stored queue, the implicit `default` (weight 1, Open, uncapped), or None."""
    found = queues.get(name)
    if found is None and name == DEFAULT_QUEUE:
        return _IMPLICIT_DEFAULT
    return found


def capability(queue: Queue) -> dict[str, Fraction]:
    """Its capability; a resource it does not list (or lists ≤ 0, as Volcano) is uncapped."""
    return resources.parse(queue.spec.capability if queue.spec else None)


def admit(
    candidates: Sequence[Candidate],
    *,
    capacity: Capacity,
    room: Capacity,
    queues: Mapping[str, Queue],
    allocated: Mapping[str, Resources],
    holds: Holds = NO_HOLDS,
) -> Admission:
    """One admission pass. `room`: capacity − used − reserved; `allocated`: what each
    queue's jobs hold or reserve; `candidates` in job order."""
    waits: dict[Key, Wait] = {}
    found: dict[str, Queue] = {}
    lines: dict[str, deque[Candidate]] = {}
    for cand in candidates:
        queue = lookup(queues, cand.queue)
        why = _refused(cand, queue)
        if why is not None:
            waits[cand.key] = why
            continue
        assert queue is not None
        found[cand.queue] = queue
        lines.setdefault(cand.queue, deque()).append(cand)
    alloc = {n: dict(a) for n, a in allocated.items()}
    for name in list(alloc):
        queue = found.get(name) or lookup(queues, name)
        if queue is not None:
            found[name] = queue
    deserved = proportion.deserved(capacity, [_demand(q, alloc, lines) for q in found.values()])
    admitted: list[Key] = []
    while lines:
        name = min(lines, key=lambda n: _turn(found[n], alloc.get(n, {}), deserved[n]))
        cand = lines[name].popleft()
        if not lines[name]:
            del lines[name]
        have = alloc.get(name, {})
        why = _capability_wait(cand, found[name], have)
        why = why or _room_wait(cand.need, room, holds.against(cand.flow))
        if why is None and _needs_some(cand) and proportion.overused(have, deserved[name]):
            text = f"queue {name} is at its share: holds {_show(have.items())}"
            why = Wait(WaitKind.SHARE, text + f" of deserved {_show(deserved[name].items())}")
        if why is not None:
            waits[cand.key] = why
            continue
        admitted.append(cand.key)
        room = resources.minus(room, cand.need)
        alloc[name] = resources.add(have, cand.need)
        holds = holds.consume(cand.flow, cand.need)
    return Admission(tuple(admitted), waits, holds)


def _refused(cand: Candidate, queue: Queue | None) -> Wait | None:
    """Waits that do not depend on what runs: a missing or closed queue, a minimum over the
    queue's capability."""
    if queue is None:
        return Wait(WaitKind.QUEUE_MISSING, f"queue {cand.queue} does not exist")
    if queue.state != OPEN:
        return Wait(WaitKind.QUEUE_CLOSED, f"queue {cand.queue} is {queue.state}, not Open")
    short = _over(cand.need, capability(queue))
    if short:
        caps = _show((n, c) for n, _, c in short)
        wants = _show((n, w) for n, w, _ in short)
        text = f"queue {cand.queue} capability {caps}: its minimum needs {wants}"
        return Wait(WaitKind.CAPABILITY, text)
    return None


def _needs_some(cand: Candidate) -> bool:
    """A job that needs nothing is never held back by its queue's share."""
    return any(a > 0 for a in cand.need.values())


def _capability_wait(cand: Candidate, queue: Queue, have: Resources) -> Wait | None:
    short = _over(resources.add(have, cand.need), capability(queue))
    if short:
        caps = _show((n, c) for n, _, c in short)
        used = _show((n, have.get(n, Fraction(0))) for n, _, _ in short)
        wants = _show((n, cand.need.get(n, Fraction(0))) for n, _, _ in short)
        text = f"queue {cand.queue} capability {caps}: {used} in use, its minimum needs {wants}"
        return Wait(WaitKind.CAPABILITY, text)
    return None


def _room_wait(need: Resources, room: Capacity, held: Resources) -> Wait | None:
    free = resources.minus(room, held)
    short = resources.shortfall(need, free)
    if not short:
        return None
    text = f"needs {_show((n, w) for n, w, _ in short)}; free {_free(short)}"
    if held and resources.fits(need, room):
        return Wait(WaitKind.HELD, f"{text} (held for another flow's hand-over)")
    return Wait(WaitKind.RESOURCES, text)


def _turn(queue: Queue, have: Resources, due: Resources) -> tuple[int, Fraction, str]:
    """Queue order: priority (higher first), then share (lower first), then name."""
    prio = (queue.spec.priority if queue.spec else None) or 0
    return (-prio, proportion.share(have, due), queue.name)


def _demand(
    queue: Queue, alloc: Mapping[str, Resources], lines: Mapping[str, deque[Candidate]]
) -> proportion.QueueDemand:
    waiting = (c.need for c in lines.get(queue.name, ()))
    spec = queue.spec
    guarantee = spec.guarantee.resource if spec is not None and spec.guarantee else None
    cap = capability(queue)
    return proportion.QueueDemand(
        queue.name,
        weight=queue.weight,
        request=resources.add(alloc.get(queue.name, {}), resources.total(waiting)),
        capability=cap or None,
        guarantee=resources.parse(guarantee),
    )


def _over(need: Resources, cap: Mapping[str, Fraction]) -> list[tuple[str, Fraction, Fraction]]:
    return [(n, need[n], cap[n]) for n in sorted(need) if n in cap and need[n] > cap[n]]


def _show(pairs: Iterable[tuple[str, Fraction]]) -> str:
    return ", ".join(f"{n} {resources.show(n, a)}" for n, a in pairs) or "nothing"


def _free(short: list[tuple[str, Fraction, Fraction]]) -> str:
    return ", ".join(f"{n} {resources.show(n, max(h, Fraction(0)))}" for n, _, h in short)
