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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction

from vcflow.api import names
from vcflow.api.queues import QueueTable
from vcflow.api.scheduling import OPEN, Queue
from vcflow.reconcile.vcjob import proportion, resources
from vcflow.reconcile.vcjob.holds import NONE as NO_HOLDS
from vcflow.reconcile.vcjob.holds import Holds
from vcflow.reconcile.vcjob.resources import Capacity, Resources

Key = names.ObjectKey


class WaitKind(StrEnum):
    """Why a job waits; the shell rewrites a job's condition only when this changes."""

    NEVER_FITS = "NeverFits"
    QUEUE_MISSING = "QueueMissing"
    QUEUE_CLOSED = "QueueClosed"
    CAPABILITY = "QueueCapability"
    SHARE = "QueueShare"
    HELD = "HandoverHold"
    RESOURCES = "Resources"


class Wait:
    """A waiting job's reason: its kind and a one-line message for its condition. The
    message may be given as a function, made only when read: a pass finds a reason for
    every waiting job, and the shell reads the message only when the kind changed."""

    __slots__ = ("_message", "kind")

    def __init__(self, kind: WaitKind, message: str | Callable[[], str]) -> None:
        self.kind = kind
        self._message = message

    @property
    def message(self) -> str:
        if not isinstance(self._message, str):
            self._message = self._message()
        return self._message

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Wait):
            return NotImplemented
        return self.kind is other.kind and self.message == other.message

    def __hash__(self) -> int:
        return hash((self.kind, self.message))

    def __repr__(self) -> str:
        return f"Wait({self.kind.value}, {self.message!r})"


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


def capability(queue: Queue) -> dict[str, Fraction]:
    """Its capability; a resource it does not list (or lists ≤ 0, as Volcano) is uncapped."""
    return resources.parse(queue.spec.capability if queue.spec else None)


def admit(
    candidates: Sequence[Candidate],
    *,
    capacity: Capacity,
    room: Capacity,
    queues: QueueTable,
    allocated: Mapping[str, Resources],
    holds: Holds = NO_HOLDS,
) -> Admission:
    """One admission pass. `room`: capacity − used − reserved; `allocated`: what each
    queue's jobs hold or reserve; `candidates` in job order; `queues` the stored ones
    (`default` is implicit)."""
    waits: dict[Key, Wait] = {}
    found: dict[str, Queue] = {}
    caps: dict[str, dict[str, Fraction]] = {}
    lines: dict[str, deque[Candidate]] = {}
    for cand in candidates:
        if cand.queue not in caps:
            queue = queues.get(cand.queue)
            if queue is not None:
                found[cand.queue] = queue
            caps[cand.queue] = capability(queue) if queue is not None else {}
        why = _refused(cand, found.get(cand.queue), caps[cand.queue])
        if why is not None:
            waits[cand.key] = why
            continue
        lines.setdefault(cand.queue, deque()).append(cand)
    alloc = {n: dict(a) for n, a in allocated.items()}
    for name in list(alloc):
        queue = found.get(name) or queues.get(name)
        if queue is not None:
            found[name] = queue
            caps.setdefault(name, capability(queue))
    demands = [_demand(q, caps[n], alloc, lines) for n, q in found.items()]
    deserved = proportion.deserved(capacity, demands)
    turns = {n: _turn(found[n], alloc.get(n, {}), deserved[n]) for n in lines}
    admitted: list[Key] = []
    while lines:
        name = min(turns, key=turns.__getitem__) if len(turns) > 1 else next(iter(turns))
        cand = lines[name].popleft()
        if not lines[name]:
            del lines[name], turns[name]
        have = alloc.get(name, {})
        why = _capability_wait(cand, caps[name], have)
        why = why or _room_wait(cand.need, room, holds.against(cand.flow) if holds else {})
        if why is None and _needs_some(cand) and proportion.overused(have, deserved[name]):
            why = _share_wait(name, have, deserved[name])
        if why is not None:
            waits[cand.key] = why
            continue
        admitted.append(cand.key)
        room = resources.minus(room, cand.need)
        alloc[name] = resources.add(have, cand.need)
        holds = holds.consume(cand.flow, cand.need)
        if name in turns:
            turns[name] = _turn(found[name], alloc[name], deserved[name])
    return Admission(tuple(admitted), waits, holds)


def _refused(cand: Candidate, queue: Queue | None, cap: Mapping[str, Fraction]) -> Wait | None:
    """Waits that do not depend on what runs: a missing or closed queue, a minimum over the
    queue's capability."""
    if queue is None:
        return Wait(WaitKind.QUEUE_MISSING, f"queue {cand.queue} does not exist")
    if queue.state != OPEN:
        return Wait(WaitKind.QUEUE_CLOSED, f"queue {cand.queue} is {queue.state}, not Open")
    short = _over(cand.need, cap) if cap else []
    if not short:
        return None

    def text() -> str:
        caps = _show((n, c) for n, _, c in short)
        return f"queue {cand.queue} capability {caps}: its minimum needs {_wants(short)}"

    return Wait(WaitKind.CAPABILITY, text)


def _needs_some(cand: Candidate) -> bool:
    """A job that needs nothing is never held back by its queue's share."""
    return any(a > 0 for a in cand.need.values())


def _capability_wait(cand: Candidate, cap: Mapping[str, Fraction], have: Resources) -> Wait | None:
    short = _over(resources.add(have, cand.need), cap) if cap else []
    if not short:
        return None

    def text() -> str:
        caps = _show((n, c) for n, _, c in short)
        used = _show((n, have.get(n, Fraction(0))) for n, _, _ in short)
        wants = _show((n, cand.need.get(n, Fraction(0))) for n, _, _ in short)
        return f"queue {cand.queue} capability {caps}: {used} in use, its minimum needs {wants}"

    return Wait(WaitKind.CAPABILITY, text)


def _room_wait(need: Resources, room: Capacity, held: Resources) -> Wait | None:
    free = resources.minus(room, held) if held else room
    short = resources.shortfall(need, free)
    if not short:
        return None

    def text() -> str:
        return f"needs {_wants(short)}; free {_free(short)}"

    if held and resources.fits(need, room):
        return Wait(WaitKind.HELD, lambda: f"{text()} (held for another flow's hand-over)")
    return Wait(WaitKind.RESOURCES, text)


def _share_wait(name: str, have: Resources, due: Resources) -> Wait:
    def text() -> str:
        return f"queue {name} is at its share: holds {_show(have.items())} of deserved " + (
            _show(due.items())
        )

    return Wait(WaitKind.SHARE, text)


def _turn(queue: Queue, have: Resources, due: Resources) -> tuple[int, Fraction, str]:
    """Queue order: priority (higher first), then share (lower first), then name."""
    prio = (queue.spec.priority if queue.spec else None) or 0
    return (-prio, proportion.share(have, due), queue.name)


def _demand(
    queue: Queue,
    cap: Mapping[str, Fraction],
    alloc: Mapping[str, Resources],
    lines: Mapping[str, deque[Candidate]],
) -> proportion.QueueDemand:
    waiting = (c.need for c in lines.get(queue.name, ()))
    spec = queue.spec
    guarantee = spec.guarantee.resource if spec is not None and spec.guarantee else None
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


def _wants(short: list[tuple[str, Fraction, Fraction]]) -> str:
    return _show((n, w) for n, w, _ in short)


def _free(short: list[tuple[str, Fraction, Fraction]]) -> str:
    return ", ".join(f"{n} {resources.show(n, max(h, Fraction(0)))}" for n, _, h in short)
