"""Each queue's deserved share, as Volcano's proportion plugin water-fills it: by weight,
capped by capability and by request, floored at guarantee; share and overused."""

from __future__ import annotations

from fractions import Fraction

from vcflow.reconcile.vcjob import proportion, resources
from vcflow.reconcile.vcjob.proportion import QueueDemand

F = Fraction
CPU4 = resources.capacity({"cpu": "4"})


def _cpu(amount: int | Fraction) -> dict[str, Fraction]:
    return {"cpu": F(amount)}


def test_two_backlogged_queues_split_by_weight() -> None:
    out = proportion.deserved(CPU4, [QueueDemand("a", 3, _cpu(10)), QueueDemand("b", 1, _cpu(10))])
    assert out == {"a": _cpu(3), "b": _cpu(1)}


def test_a_queue_alone_deserves_everything_it_asks_for() -> None:
    out = proportion.deserved(CPU4, [QueueDemand("a", 1, _cpu(10)), QueueDemand("b", 9, {})])
    assert out["a"] == _cpu(4)
    assert out["b"] == {"cpu": 0}


def test_what_a_queue_does_not_request_goes_to_the_others() -> None:
    out = proportion.deserved(CPU4, [QueueDemand("a", 3, _cpu(1)), QueueDemand("b", 1, _cpu(10))])
    assert out == {"a": _cpu(1), "b": _cpu(3)}


def test_capability_caps_and_the_rest_is_redistributed() -> None:
    capped = QueueDemand("a", 3, _cpu(10), capability=_cpu(2))
    out = proportion.deserved(CPU4, [capped, QueueDemand("b", 1, _cpu(10))])
    assert out == {"a": _cpu(2), "b": _cpu(2)}


def test_guarantee_is_a_floor() -> None:
    guaranteed = QueueDemand("b", 1, _cpu(10), guarantee=_cpu(2))
    out = proportion.deserved(CPU4, [QueueDemand("a", 9, _cpu(10)), guaranteed])
    assert out["b"] == _cpu(2)
    assert out["a"] == _cpu(2)


def test_an_unlimited_resource_is_not_contended() -> None:
    out = proportion.deserved(resources.UNLIMITED, [QueueDemand("a", 1, _cpu(10))])
    assert out == {"a": {}}
    assert not proportion.overused(_cpu(10), out["a"])


def test_share_and_overused() -> None:
    assert proportion.share(_cpu(3), _cpu(3)) == 1
    assert proportion.share(_cpu(1), _cpu(4)) == F(1, 4)
    assert proportion.share(_cpu(1), {}) == 1
    assert proportion.overused(_cpu(3), _cpu(3))
    assert not proportion.overused(_cpu(2), _cpu(3))
    assert not proportion.overused({}, {})
