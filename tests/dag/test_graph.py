"""Unit tests of vcflow.dag.graph: building, duplicates, unknown targets, cycles, order."""

from __future__ import annotations

import pytest

from vcflow.dag import graph as dag

Entries = list[tuple[str, list[str]]]

CHAIN: Entries = [("a", []), ("b", ["a"]), ("c", ["b"])]
VOLCANO_EXAMPLE: Entries = [
    ("a", []),
    ("b", ["a"]),
    ("c", ["b"]),
    ("d", ["b"]),
    ("e", ["c", "d"]),
]


def build(entries: Entries) -> dag.Graph:
    return dag.Graph.build(entries)


def test_build_keeps_spec_order_and_first_duplicate() -> None:
    graph = build([("b", ["a"]), ("a", []), ("b", ["c"])])
    assert graph.nodes == ("b", "a")
    assert graph.targets == {"b": ("a",), "a": ()}


def test_successors_are_reverse_edges_of_known_targets() -> None:
    graph = build([*VOLCANO_EXAMPLE, ("f", ["a", "a", "zz"])])
    assert graph.successors() == {
        "a": ["b", "f"],
        "b": ["c", "d"],
        "c": ["e"],
        "d": ["e"],
        "e": [],
        "f": [],
    }


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        pytest.param([], [], id="empty"),
        pytest.param(["a", "b"], [], id="unique"),
        pytest.param(["a", "b", "a", "a", "b"], ["a", "b"], id="each-once"),
        pytest.param(["b", "a", "a", "b"], ["a", "b"], id="order-of-repetition"),
    ],
)
def test_duplicates(names: list[str], expected: list[str]) -> None:
    assert dag.duplicates(names) == expected


def test_unknown_targets_name_entry_and_index() -> None:
    graph = build([("a", []), ("b", ["a", "x"]), ("c", ["y", "b"])])
    assert dag.unknown_targets(graph) == [("b", 1, "x"), ("c", 0, "y")]


def test_no_unknown_targets_in_volcano_example() -> None:
    assert dag.unknown_targets(build(VOLCANO_EXAMPLE)) == []


@pytest.mark.parametrize(
    ("entries", "cycle"),
    [
        pytest.param([("a", ["a"])], ["a", "a"], id="self-loop"),
        pytest.param([("a", ["b"]), ("b", ["a"])], ["a", "b", "a"], id="two-cycle"),
        pytest.param(
            [("a", ["c"]), ("b", ["a"]), ("c", ["b"])], ["a", "c", "b", "a"], id="three-cycle"
        ),
        pytest.param(
            [("a", []), ("b", ["a", "d"]), ("c", ["b"]), ("d", ["c"])],
            ["b", "d", "c", "b"],
            id="design-doc-loop-behind-a-root",
        ),
        pytest.param(
            [("r", ["s"]), ("s", []), ("t", ["t"])], ["t", "t"], id="self-loop-after-a-dag"
        ),
    ],
)
def test_find_cycle_returns_the_path(entries: Entries, cycle: list[str]) -> None:
    assert dag.find_cycle(build(entries)) == cycle


@pytest.mark.parametrize(
    "entries",
    [
        pytest.param([], id="empty"),
        pytest.param(CHAIN, id="chain"),
        pytest.param(VOLCANO_EXAMPLE, id="volcano-example"),
        pytest.param([("a", ["x"]), ("b", ["a", "y"])], id="unknown-targets-ignored"),
        pytest.param([("a", []), ("b", ["a", "a"])], id="repeated-target"),
    ],
)
def test_find_cycle_none_for_a_dag(entries: Entries) -> None:
    assert dag.find_cycle(build(entries)) is None


def test_format_cycle_is_run_order() -> None:
    # find_cycle follows "waits for" edges: b waits for d, d for c, c for b;
    # in run order that is b, then c, then d, then b again.
    assert dag.format_cycle(["b", "d", "c", "b"]) == "b → c → d → b"
    assert dag.format_cycle(["a", "a"]) == "a → a"


def test_long_chain_has_no_recursion_limit() -> None:
    n = 20_000
    entries: Entries = [(f"j{i}", [f"j{i - 1}"] if i else []) for i in range(n)]
    graph = build(entries)
    assert dag.find_cycle(graph) is None
    assert dag.topological_order(graph) == [f"j{i}" for i in range(n)]
    closed = build([("j0", [f"j{n - 1}"]), *entries[1:]])
    cycle = dag.find_cycle(closed)
    assert cycle is not None and len(cycle) == n + 1


def is_topological(order: list[str], entries: Entries) -> bool:
    position = {name: i for i, name in enumerate(order)}
    return all(position[t] < position[name] for name, ts in entries for t in ts if t in position)


@pytest.mark.parametrize(
    "entries",
    [
        pytest.param(CHAIN, id="chain"),
        pytest.param(VOLCANO_EXAMPLE, id="volcano-example"),
        pytest.param([("e", ["c", "d"]), ("d", ["b"]), ("c", ["b"]), ("b", [])], id="reversed"),
        pytest.param([("a", []), ("b", ["a", "a"]), ("c", ["x"])], id="repeats-and-unknown"),
    ],
)
def test_topological_order(entries: Entries) -> None:
    order = dag.topological_order(build(entries))
    assert sorted(order) == sorted(name for name, _ in entries)
    assert is_topological(order, entries)


def test_topological_order_of_volcano_example_starts_with_root_ends_with_join() -> None:
    order = dag.topological_order(build(VOLCANO_EXAMPLE))
    assert (order[0], order[1], order[-1]) == ("a", "b", "e")
