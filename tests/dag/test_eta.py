"""The critical path and the seconds a flow's unfinished work still takes (`dag.eta`)."""

import pytest

from vcflow.dag.eta import Progress, critical_path, remaining, seconds_left
from vcflow.dag.graph import Graph

# the Volcano example: a -> b -> {c, d} -> e
EXAMPLE = Graph.build([("a", []), ("b", ["a"]), ("c", ["b"]), ("d", ["b"]), ("e", ["c", "d"])])
EST = {"a": 10.0, "b": 20.0, "c": 5.0, "d": 60.0, "e": 30.0}


def test_critical_path_follows_the_longest_branch_in_run_order():
    assert critical_path(EXAMPLE, EST) == ["a", "b", "d", "e"]


def test_ties_go_to_the_entry_first_in_spec_order():
    assert critical_path(EXAMPLE, {}) == ["a", "b", "c", "e"]


def test_critical_path_of_independent_roots_starts_at_the_longest():
    graph = Graph.build([("x", []), ("y", []), ("z", ["y"])])
    assert critical_path(graph, {"x": 5, "y": 1, "z": 1}) == ["x"]
    assert critical_path(Graph.build([]), {}) == []


def test_remaining_of_finished_running_and_waiting_entries():
    progress = Progress(frozenset({"a"}), {"b": 15.0})
    got = remaining(EXAMPLE, EST, progress)
    assert got == {"a": 0.0, "b": 5.0, "c": 5.0, "d": 60.0, "e": 30.0}


def test_a_running_entry_past_its_estimate_has_nothing_left():
    assert remaining(EXAMPLE, EST, Progress(running={"a": 99.0}))["a"] == 0.0


@pytest.mark.parametrize(
    ("progress", "left"),
    [
        pytest.param(Progress(), 120.0, id="nothing-started"),
        pytest.param(Progress(frozenset({"a"}), {"b": 15.0}), 95.0, id="b-running"),
        pytest.param(Progress(frozenset({"a", "b", "d"}), {"c": 1.0}), 34.0, id="join-waits"),
        pytest.param(Progress(frozenset("abcd"), {"e": 40.0}), 0.0, id="overdue"),
    ],
)
def test_seconds_left_is_the_longest_remaining_path(progress: Progress, left: float):
    assert seconds_left(EXAMPLE, EST, set(EST), progress) == left


def test_unknown_without_an_estimate_of_its_own_for_an_unfinished_entry():
    progress = Progress(frozenset({"a"}))
    assert seconds_left(EXAMPLE, EST, {"a"}, progress) is None
    assert seconds_left(EXAMPLE, EST, {"e"}, progress) == 110.0
    assert seconds_left(EXAMPLE, EST, set(EST), Progress(frozenset("abcde"))) is None
