"""A flow's DAG shape (`reconcile.flowshape`): each entry drawn once, its kind, its edges'
labels — what `vcflow graph` and the dashboard both draw."""

from __future__ import annotations

from typing import Any

from vcflow.api.jobflow import JobFlow
from vcflow.reconcile import flowshape


def _flow(*entries: dict[str, Any], **spec: Any) -> JobFlow:
    return JobFlow.model_validate(
        {
            "metadata": {"name": "f", "namespace": "default"},
            "spec": {"flows": list(entries), **spec},
        }
    )


def test_a_name_given_twice_is_one_node_at_its_first_place() -> None:
    # Volcano keeps both entries of a repeated name; a drawing has one node for it
    flow = _flow(
        {"name": "a"},
        {"name": "b", "dependsOn": {"targets": ["a"]}},
        {"name": "a", "dependsOn": {"targets": ["b"]}},
        {"name": "c", "dependsOn": {"targets": ["b"]}},
    )
    drawn = list(flowshape.entries(flow))
    assert [entry.name for entry in drawn] == ["a", "b", "c"]
    assert drawn[0].targets == []


def test_kinds_and_labels() -> None:
    flow = _flow(
        {"name": "a"},
        {"name": "b", "dependsOn": {"targets": ["a"], "outcome": "Failed"}},
        onExit=["b"],
    )
    a, b = flowshape.entries(flow)
    exits = flow.exit_handlers
    assert (flowshape.kind(a, exits), flowshape.kind(b, exits)) == (flowshape.JOB, flowshape.EXIT)
    assert (flowshape.edge_label(a), flowshape.edge_label(b)) == ("", "Failed")
