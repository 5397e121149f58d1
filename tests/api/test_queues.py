"""QueueTable and PriorityTable: the implicit `default` queue and the global default
priority that the scheduler and the controllers rely on."""

from __future__ import annotations

from typing import Any

from vcflow.api.queues import PriorityTable, QueueTable
from vcflow.api.scheduling import CLOSED, OPEN, PriorityClass, Queue, QueueStatus


def queue(name: str, **spec: Any) -> Queue:
    return Queue.from_dict(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": name, "namespace": ""},
            "spec": spec,
        }
    )


def pclass(name: str, value: int, default: bool | None = None) -> PriorityClass:
    body: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name, "namespace": ""},
        "value": value,
    }
    if default is not None:
        body["globalDefault"] = default
    return PriorityClass.from_dict(body)


def test_default_queue_is_implicit_open_weight_one_without_capability() -> None:
    table = QueueTable.of([])
    default = table.get("default")
    assert default is not None
    assert (default.name, default.weight, default.state) == ("default", 1, OPEN)
    assert default.spec is not None and default.spec.capability is None
    assert table.get("gpu") is None
    assert table.names() == ["default"]


def test_a_stored_default_queue_replaces_the_implicit_one() -> None:
    stored = queue("default", weight=4)
    stored.status = QueueStatus(state=CLOSED)
    table = QueueTable.of([stored, queue("gpu", weight=2)])
    default = table.get("default")
    assert default is not None and (default.weight, default.state) == (4, CLOSED)
    gpu = table.get("gpu")
    assert gpu is not None and gpu.weight == 2
    assert [q.name for q in table] == ["default", "gpu"]


def test_priority_table_values_and_global_default() -> None:
    table = PriorityTable.of([pclass("high", 1000), pclass("normal", 10, default=True)])
    assert (table.get("high"), table.get("normal"), table.get("nope")) == (1000, 10, None)
    assert table.default_value == 10 and table.default_name == "normal"
    assert table.value_of(None) == 10 and table.value_of("") == 10
    assert table.value_of("high") == 1000 and table.value_of("nope") is None


def test_without_a_global_default_the_default_value_is_zero() -> None:
    table = PriorityTable.of([pclass("high", 1000, default=False)])
    assert (table.default_value, table.default_name) == (0, None)
    assert PriorityTable.of([]).default_value == 0
