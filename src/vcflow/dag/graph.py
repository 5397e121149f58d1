"""The dependency graph of a JobFlow's entries and its checks, all O(V+E).

Edges point from an entry to the targets it waits for. Volcano's `IsDAG` re-walks every
path from every vertex (exponential on some DAGs, STYLE §3); here one iterative DFS with
three colours finds a cycle and returns it as a path. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Graph:
    """Entries in spec order, each with its targets; duplicates keep their first targets."""

    nodes: tuple[str, ...]
    targets: dict[str, tuple[str, ...]]

    @classmethod
    def build(cls, entries: Iterable[tuple[str, Sequence[str]]]) -> Graph:
        nodes: list[str] = []
        targets: dict[str, tuple[str, ...]] = {}
        for name, deps in entries:
            if name not in targets:
                nodes.append(name)
                targets[name] = tuple(deps)
        return cls(tuple(nodes), targets)

    def successors(self) -> dict[str, list[str]]:
        """Entry → the entries that wait for it (reverse edges), known targets only."""
        out: dict[str, list[str]] = {n: [] for n in self.nodes}
        for node in self.nodes:
            for target in dict.fromkeys(self.targets[node]):
                if target in out:
                    out[target].append(node)
        return out


def duplicates(names: Iterable[str]) -> list[str]:
    """Names that occur more than once, each listed once, in order of first repetition."""
    seen: set[str] = set()
    dups: dict[str, None] = {}
    for name in names:
        if name in seen:
            dups[name] = None
        seen.add(name)
    return list(dups)


def unknown_targets(graph: Graph) -> list[tuple[str, int, str]]:
    """(entry, index in its targets, target) for every target that is not an entry."""
    return [
        (node, i, target)
        for node in graph.nodes
        for i, target in enumerate(graph.targets[node])
        if target not in graph.targets
    ]


def find_cycle(graph: Graph) -> list[str] | None:
    """One cycle as a path whose first and last element are equal, or None for a DAG.

    Iterative three-colour DFS from each entry in spec order: O(V+E), no recursion limit.
    Unknown targets are ignored (reported separately).
    """
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph.nodes, white)
    for root in graph.nodes:
        if colour[root] != white:
            continue
        path: list[str] = [root]
        iters = [iter(graph.targets[root])]
        colour[root] = grey
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = black
                iters.pop()
                continue
            state = colour.get(nxt)
            if state is None or state == black:
                continue
            if state == grey:
                return [*path[path.index(nxt) :], nxt]
            colour[nxt] = grey
            path.append(nxt)
            iters.append(iter(graph.targets[nxt]))
    return None


def format_cycle(cycle: Sequence[str]) -> str:
    """A cycle found by `find_cycle` (edges entry → target) in run order: each entry is
    followed by one that waits for it, as users draw flows (`a → b` = b runs after a)."""
    return " → ".join(reversed(cycle))


def topological_order(graph: Graph) -> list[str]:
    """Entries with every target before its dependents (Kahn); the graph must be a DAG."""
    indegree = {
        n: len([t for t in dict.fromkeys(graph.targets[n]) if t in graph.targets])
        for n in graph.nodes
    }
    succ = graph.successors()
    ready = [n for n in graph.nodes if indegree[n] == 0]
    order: list[str] = []
    while ready:
        node = ready.pop()
        order.append(node)
        for s in succ[node]:
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
    return order
