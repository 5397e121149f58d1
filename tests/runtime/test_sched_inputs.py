"""What the runtime's scheduler reads from the store besides vcjobs and pods
(`runtime.schedinputs`): Queues and PriorityClasses listed once, then kept from the watch;
none from a store that does not hold the kinds."""

from __future__ import annotations

from vcflow.api.scheduling import PriorityClass, Queue
from vcflow.runtime.schedinputs import KINDS, SchedulingInputs
from vcflow.store.base import Cursor, KindRegistry, default_kinds
from vcflow.store.memory import MemoryStore


def _queue(name: str, weight: int = 1) -> Queue:
    return Queue.from_dict({"metadata": {"name": name}, "spec": {"weight": weight}})


def _class(name: str, value: int, default: bool = False) -> PriorityClass:
    data = {"metadata": {"name": name}, "value": value, "globalDefault": default}
    return PriorityClass.from_dict(data)


def _follow(store: MemoryStore, inputs: SchedulingInputs, cursor: Cursor) -> Cursor:
    found, cursor = store.poll_events(cursor, KINDS)
    for event in found:
        inputs.observe(event)
    return cursor


def test_listed_then_kept_from_the_watch() -> None:
    store = MemoryStore()
    store.create(_queue("a", 3), admit=False)
    store.create(_class("base", 10, default=True), admit=False)
    inputs = SchedulingInputs({"fixed": 5})
    inputs.load(store)
    cursor = Cursor.now(store)
    assert inputs.queues.get("a") is not None and inputs.queues.get("b") is None
    assert inputs.queues.get("default") is not None  # (implicit)
    assert inputs.priorities.of(None) == 10 and inputs.priorities.of("fixed") == 5
    store.create(_queue("b"), admit=False)
    store.create(_class("high", 100), admit=False)
    store.delete(Queue, "", "a", force=True)
    _follow(store, inputs, cursor)
    assert inputs.queues.get("a") is None and inputs.queues.get("b") is not None
    assert inputs.priorities.of("high") == 100


def test_a_store_without_the_kinds_gives_none() -> None:
    """A store whose kinds lack them (a Kubernetes API without Volcano's Queue CRD): no
    stored queue, every class worth 0, nothing to watch."""
    kinds = KindRegistry()
    for info in default_kinds().all():
        if info.model not in KINDS:
            kinds.register(info.model, defaulter=info.defaulter)
    bare = MemoryStore(kinds=kinds)
    inputs = SchedulingInputs()
    assert inputs.kinds(bare) == ()
    inputs.load(bare)
    assert inputs.queues.names() == ["default"]
    assert inputs.priorities.of(None) == 0
