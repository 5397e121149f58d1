"""Resource arithmetic for gang admission on one machine (reference §10, exact fit): a pod's
request, the machine's capacity, what is left, whether something fits.

Quantities are exact (`Fraction`; `500m`, `1Gi`, `2` via `api.quantity`).
A pod's request is the sum over its containers of `requests` (`limits` where a resource has
no request), and at least the largest init container's. A capacity lists what the machine
has: `cpu`, `memory`, `ephemeral-storage` and `pods` not listed are unlimited; any other
(extended) resource, e.g. `nvidia.com/gpu`, exists only if declared. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from vcflow.api import quantity
from vcflow.api.vcjob import Container, PodSpec, Quantity

Resources = Mapping[str, Fraction]
#: Resources a capacity leaves unlimited when it does not list them.
STANDARD = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


@dataclass(frozen=True)
class Capacity:
    """What the machine has. `unlimited` (no capacity given) has room for everything."""

    amounts: Mapping[str, Fraction] = field(default_factory=dict)
    unlimited: bool = False

    def limit(self, name: str) -> Fraction | None:
        """The amount of `name`, or None when it is unlimited."""
        if self.unlimited:
            return None
        if name in self.amounts:
            return self.amounts[name]
        return None if name in STANDARD else Fraction(0)


UNLIMITED = Capacity(unlimited=True)


def parse(values: Mapping[str, Quantity] | None) -> dict[str, Fraction]:
    """Quantities by resource name; unparsable or non-positive entries are dropped."""
    out: dict[str, Fraction] = {}
    for name, raw in (values or {}).items():
        amount = quantity.parse(raw)
        if amount is not None and amount > 0:
            out[name] = amount
    return out


def capacity(values: Mapping[str, Quantity] | None) -> Capacity:
    """A capacity from a `{resource: quantity}` map; None means unlimited."""
    if values is None:
        return UNLIMITED
    return Capacity({name: quantity.parse(raw) or Fraction(0) for name, raw in values.items()})


def pod_request(spec: PodSpec | None) -> dict[str, Fraction]:
    """What one pod needs (Kubernetes resource-quota usage, §10.1)."""
    if spec is None:
        return {}
    total = add(*(_container(c) for c in spec.containers or []))
    for init in spec.init_containers or []:
        for name, amount in _container(init).items():
            total[name] = max(total.get(name, Fraction(0)), amount)
    return total


def _container(container: Container) -> dict[str, Fraction]:
    res = container.resources
    if res is None:
        return {}
    return {**parse(res.limits), **parse(res.requests)}


def add(*parts: Resources) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for part in parts:
        for name, amount in part.items():
            out[name] = out.get(name, Fraction(0)) + amount
    return out


def total(parts: Iterable[Resources]) -> dict[str, Fraction]:
    return add(*parts)


def subtract(have: Resources, part: Resources) -> dict[str, Fraction]:
    """`have` without `part` (exact: what `add` put in, `subtract` takes out)."""
    out = dict(have)
    for name, amount in part.items():
        out[name] = out.get(name, Fraction(0)) - amount
    return out


def minus(have: Capacity, used: Resources) -> Capacity:
    """What is left of `have` once `used` is taken (may go negative: nothing fits then)."""
    if have.unlimited:
        return have
    names = set(have.amounts) | {n for n in used if have.limit(n) is not None}
    amounts = {n: (have.limit(n) or Fraction(0)) - used.get(n, Fraction(0)) for n in names}
    return Capacity(amounts)


def fits(request: Resources, room: Capacity) -> bool:
    return not shortfall(request, room)


def shortfall(request: Resources, room: Capacity) -> list[tuple[str, Fraction, Fraction]]:
    """(resource, needed, available) for every resource `request` needs more of than `room`
    has, in name order."""
    out = []
    for name in sorted(request):
        limit = room.limit(name)
        if limit is not None and request[name] > limit:
            out.append((name, request[name], limit))
    return out


def show(name: str, amount: Fraction) -> str:
    """A quantity as a person writes it: `4`, `1500m`, `2Gi`."""
    if amount.denominator == 1:
        whole = int(amount)
        if name != "cpu" and whole > 0:
            for suffix, factor in _BINARY:
                if whole % factor == 0:
                    return f"{whole // factor}{suffix}"
        return str(whole)
    milli = amount * 1000
    if milli.denominator == 1:
        return f"{int(milli)}m"
    return str(float(amount))
