"""Critical-path ranks of a flow's entries (`jobOrder: CriticalPath`)."""

from vcflow.dag.critical import DEFAULT_ESTIMATE, estimate, ranks
from vcflow.dag.graph import Graph


def test_rank_is_own_estimate_plus_longest_successor_rank():
    # root -> {s1, s2, lng}, lng -> tail: the e2 DAG
    graph = Graph.build(
        [("root", []), ("s1", ["root"]), ("s2", ["root"]), ("lng", ["root"]), ("tail", ["lng"])]
    )
    got = ranks(graph, {"root": 1, "s1": 2, "s2": 2, "lng": 6, "tail": 4})
    assert got == {"root": 11, "s1": 2, "s2": 2, "lng": 10, "tail": 4}


def test_missing_estimates_count_one_each():
    graph = Graph.build([("a", []), ("b", ["a"]), ("c", ["b"])])
    assert ranks(graph, {}) == {"a": 3 * DEFAULT_ESTIMATE, "b": 2.0, "c": 1.0}


def test_a_join_takes_the_longer_branch():
    graph = Graph.build([("a", []), ("b", []), ("j", ["a", "b"])])
    got = ranks(graph, {"a": 5, "b": 1, "j": 2})
    assert got["a"] == 7 and got["b"] == 3


def test_estimate_prefers_running_estimate_then_median_of_past_runs():
    assert estimate(7200.0, [1.0, 2.0]) == 7200.0
    assert estimate(None, [3.0, 1.0, 100.0]) == 3.0
    assert estimate(None, []) == DEFAULT_ESTIMATE
