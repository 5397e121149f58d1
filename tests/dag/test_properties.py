"""Property tests: JobFlow admission accepts a flow graph exactly when it is a valid DAG.

Random flows use names from a small alphabet, so duplicates, unknown targets, self-loops and
longer cycles all happen. The oracle is computed independently with `graphlib`: admitted ⇔
names unique, every target a known entry, and no cycle.
"""

from __future__ import annotations

import graphlib
import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vcflow.admission import review as admission
from vcflow.api.jobflow import JobFlow
from vcflow.dag import graph as dag

KNOWN = "abcdef"
UNKNOWN = "xy"

Entries = list[tuple[str, list[str]]]

entries_strategy: st.SearchStrategy[Entries] = st.lists(
    st.tuples(
        st.sampled_from(KNOWN),
        st.lists(st.sampled_from(KNOWN + UNKNOWN), max_size=3)
        | st.lists(st.sampled_from(KNOWN), max_size=3),
    ),
    max_size=7,
)

PROPERTY = settings(max_examples=200, deadline=None)


def flow_of(entries: Entries, style: int) -> JobFlow:
    flows: list[dict[str, Any]] = []
    for name, targets in entries:
        entry: dict[str, Any] = {"name": name}
        if targets or style == 1:
            entry["dependsOn"] = {"targets": targets}
        elif style == 2:
            entry["dependsOn"] = {}
        flows.append(entry)
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "prop"},
            "spec": {"flows": flows},
        }
    )


def is_valid_dag(entries: Entries) -> bool:
    """The oracle, independent of vcflow.dag."""
    names = [name for name, _ in entries]
    if len(set(names)) != len(names):
        return False
    if any(t not in names for _, targets in entries for t in targets):
        return False
    sorter = graphlib.TopologicalSorter({name: targets for name, targets in entries})
    try:
        sorter.prepare()
    except graphlib.CycleError:
        return False
    return True


@PROPERTY
@given(entries=entries_strategy, style=st.integers(0, 2))
def test_admitted_iff_unique_known_and_acyclic(entries: Entries, style: int) -> None:
    errors = admission.errors_only(admission.review(flow_of(entries, style)))
    assert (not errors) == is_valid_dag(entries), [str(e) for e in errors]


@PROPERTY
@given(entries=entries_strategy)
def test_reported_cycle_is_a_real_cycle(entries: Entries) -> None:
    graph = dag.Graph.build(entries)
    first_targets = {name: set(targets) for name, targets in reversed(entries)}
    cycle = dag.find_cycle(graph)
    if cycle is None:
        order = dag.topological_order(graph)
        assert sorted(order) == sorted(graph.nodes)
        position = {n: i for i, n in enumerate(order)}
        for node in graph.nodes:
            for target in first_targets[node] & set(position):
                assert position[target] < position[node]
        return
    assert cycle[0] == cycle[-1]
    assert len(set(cycle[:-1])) == len(cycle) - 1
    for node, target in itertools.pairwise(cycle):
        assert target in first_targets[node]


@PROPERTY
@given(entries=entries_strategy)
def test_cycle_message_names_the_cycle_in_run_order(entries: Entries) -> None:
    errors = admission.errors_only(admission.review(flow_of(entries, 0)))
    targets = {name: set(t) for name, t in reversed(entries)}
    for error in errors:
        if "cycle " not in error.message:
            continue
        path = error.message.split("cycle ", 1)[1].split(" → ")
        assert path[0] == path[-1]
        for before, after in itertools.pairwise(path):
            assert before in targets[after], f"{after} does not wait for {before}"


@PROPERTY
@given(entries=entries_strategy)
def test_every_unknown_target_is_reported_once(entries: Entries) -> None:
    names = {name for name, _ in entries}
    graph = dag.Graph.build(entries)
    expected = [
        (name, i, t)
        for name in graph.nodes
        for i, t in enumerate(graph.targets[name])
        if t not in names
    ]
    assert dag.unknown_targets(graph) == expected
