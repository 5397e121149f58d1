"""Queue-aware admission: queue order (priority, then share), capability, closed and
missing queues, a queue at its share, hand-over holds, and the reason each job waits."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from vcflow.api import names
from vcflow.api.queues import QueueTable
from vcflow.api.scheduling import Queue
from vcflow.reconcile.vcjob import queueing, resources
from vcflow.reconcile.vcjob.holds import NONE as NO_HOLDS
from vcflow.reconcile.vcjob.holds import Holds
from vcflow.reconcile.vcjob.queueing import Candidate, WaitKind

F = Fraction
CPU4 = resources.capacity({"cpu": "4"})
_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _queue(name: str, **spec: Any) -> Queue:
    state = spec.pop("state", None)
    data: dict[str, Any] = {"metadata": {"name": name}, "spec": spec}
    if state:
        data["status"] = {"state": state}
    return Queue.from_dict(data)


def _cand(name: str, queue: str = "default", cpu: int = 1, flow: str | None = None) -> Candidate:
    need = {"cpu": F(cpu)} if cpu else {}
    return Candidate(names.object_key("default", name), queue, flow, need)


def _admit(
    cands: list[Candidate],
    queues: list[Queue] = (),  # type: ignore[assignment]
    *,
    free: int = 4,
    allocated: Mapping[str, int] | None = None,
    holds: Holds = NO_HOLDS,
) -> queueing.Admission:
    room = resources.capacity({"cpu": str(free)})
    alloc = {q: {"cpu": F(n)} for q, n in (allocated or {}).items()}
    return queueing.admit(
        cands,
        capacity=CPU4,
        room=room,
        queues=QueueTable.of(queues),
        allocated=alloc,
        holds=holds,
    )


def _admitted(out: queueing.Admission) -> list[str]:
    return [k.split("/")[1] for k in out.admitted]


def _why(out: queueing.Admission, name: str) -> queueing.Wait:
    return out.waits[names.object_key("default", name)]


def test_the_default_queue_exists_and_others_must_be_stored() -> None:
    out = _admit([_cand("a"), _cand("b", "team-a")])
    assert _admitted(out) == ["a"]
    assert _why(out, "b") == queueing.Wait(WaitKind.QUEUE_MISSING, "queue team-a does not exist")


def test_a_closed_queue_admits_nothing() -> None:
    out = _admit([_cand("a", "q")], [_queue("q", state="Closed")])
    assert _why(out, "a") == queueing.Wait(WaitKind.QUEUE_CLOSED, "queue q is Closed, not Open")


def test_a_minimum_over_the_capability_waits_naming_queue_and_resource() -> None:
    out = _admit([_cand("big", "team-a", cpu=4)], [_queue("team-a", capability={"cpu": "2"})])
    assert _why(out, "big") == queueing.Wait(
        WaitKind.CAPABILITY, "queue team-a capability cpu 2: its minimum needs cpu 4"
    )


def test_capability_counts_what_the_queue_holds_and_admits_now() -> None:
    q = _queue("q", capability={"cpu": "3"})
    out = _admit([_cand("a", "q"), _cand("b", "q"), _cand("c", "q")], [q], allocated={"q": 1})
    assert _admitted(out) == ["a", "b"]
    assert _why(out, "c").kind is WaitKind.CAPABILITY
    assert (
        _why(out, "c").message == "queue q capability cpu 3: cpu 3 in use, its minimum needs cpu 1"
    )


def test_backlogged_queues_fill_to_their_weights_share() -> None:
    queues = [_queue("a", weight=3), _queue("b", weight=1)]
    cands = [_cand(f"a{i}", "a") for i in range(6)] + [_cand(f"b{i}", "b") for i in range(6)]
    out = _admit(cands, queues)
    assert sorted(_admitted(out)) == ["a0", "a1", "a2", "b0"]
    assert _why(out, "a3") == queueing.Wait(WaitKind.RESOURCES, "needs cpu 1; free cpu 0")


def test_a_queue_at_its_share_waits_although_resources_are_free() -> None:
    queues = [_queue("a", weight=3), _queue("b", weight=1)]
    # b's job needs 2 CPUs, 1 is free: it waits for them, and a, at its 3, takes none
    out = _admit([_cand("a9", "a"), _cand("b9", "b", cpu=2)], queues, free=1, allocated={"a": 3})
    assert _admitted(out) == []
    assert _why(out, "b9") == queueing.Wait(WaitKind.RESOURCES, "needs cpu 2; free cpu 1")
    assert _why(out, "a9") == queueing.Wait(
        WaitKind.SHARE, "queue a is at its share: holds cpu 3 of deserved cpu 3"
    )


def test_the_queue_further_below_its_share_goes_first() -> None:
    queues = [_queue("a", weight=3), _queue("b", weight=1)]
    # a holds 2 of its 3, b nothing of its 1: one CPU free goes to b
    out = _admit([_cand("a9", "a"), _cand("b9", "b")], queues, free=1, allocated={"a": 2, "b": 0})
    assert _admitted(out) == ["b9"]
    assert _why(out, "a9") == queueing.Wait(WaitKind.RESOURCES, "needs cpu 1; free cpu 0")


def test_queue_priority_comes_before_share() -> None:
    queues = [_queue("low", weight=1), _queue("urgent", weight=1, priority=10)]
    out = _admit([_cand("l", "low"), _cand("u", "urgent", cpu=4)], queues, allocated={"urgent": 0})
    assert _admitted(out) == ["u"]


def test_a_lone_backlogged_queue_takes_everything() -> None:
    queues = [_queue("a", weight=3), _queue("b", weight=1)]
    out = _admit([_cand(f"b{i}", "b") for i in range(5)], queues)
    assert len(out.admitted) == 4


def test_a_misfit_does_not_block_smaller_jobs() -> None:
    out = _admit([_cand("big", cpu=3), _cand("small")], free=2)
    assert _admitted(out) == ["small"]
    assert _why(out, "big").message == "needs cpu 3; free cpu 2"


def test_a_hold_is_used_for_other_flows_and_free_for_its_own() -> None:
    holds = Holds().add("ns.a", {"cpu": F(2)}, _T0, 60)
    out = _admit(
        [_cand("rival", cpu=2, flow="ns.b"), _cand("next", cpu=2, flow="ns.a")], free=2, holds=holds
    )
    assert _admitted(out) == ["next"]
    assert not out.holds  # consumed
    why = _why(out, "rival")
    assert why.kind is WaitKind.HELD
    assert "hand-over" in why.message


def test_a_job_needing_nothing_is_not_held_back_by_its_share() -> None:
    out = _admit([_cand("a"), _cand("free", cpu=0)], free=0, allocated={"default": 4})
    assert _admitted(out) == ["free"]
