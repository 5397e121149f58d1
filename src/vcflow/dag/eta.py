"""The critical path of a flow and how long its unfinished work still takes, for `vcflow
describe jobflow`, `vcflow get jf -o wide` and `vcflow graph`. The estimates come from the
flow controller's estimator (`reconcile.scheduling.estimates`); this module only walks the
graph with them (`critical.ranks`). Pure: O(V+E), no I/O; the caller turns seconds into a
time with its own clock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from vcflow.dag import critical
from vcflow.dag.graph import Graph


@dataclass(frozen=True)
class Progress:
    """Where a flow's entries are: `finished` ones (any outcome: Completed, Failed,
    Skipped...) and `running` ones with the seconds since they started; the rest wait."""

    finished: frozenset[str] = frozenset()
    running: Mapping[str, float] = field(default_factory=dict)


def remaining(graph: Graph, estimates: Mapping[str, float], progress: Progress) -> dict[str, float]:
    """Entry → the seconds of its work still to do: 0 when finished, `max(estimate −
    elapsed, 0)` when running, its estimate when waiting (DEFAULT_ESTIMATE without one)."""
    out: dict[str, float] = {}
    for node in graph.nodes:
        whole = estimates.get(node, critical.DEFAULT_ESTIMATE)
        if node in progress.finished:
            out[node] = 0.0
        elif node in progress.running:
            out[node] = max(whole - progress.running[node], 0.0)
        else:
            out[node] = whole
    return out


def critical_path(graph: Graph, weights: Mapping[str, float]) -> list[str]:
    """The longest chain of entries by `weights`, in run order (each entry waits for the one
    before it); ties go to the entry first in spec order. [] for an empty graph."""
    if not graph.nodes:
        return []
    rank = critical.ranks(graph, weights)
    succ = graph.successors()
    order = {n: i for i, n in enumerate(graph.nodes)}
    # (the highest rank is always an entry's with no targets: a target ranks at least as high)
    node = min(graph.nodes, key=lambda n: (-rank[n], order[n]))
    path = [node]
    while succ[node]:
        node = min(succ[node], key=lambda n: (-rank[n], order[n]))
        path.append(node)
    return path


def seconds_left(
    graph: Graph,
    estimates: Mapping[str, float],
    known: Collection[str],
    progress: Progress,
) -> float | None:
    """The longest remaining path over the unfinished entries, in seconds; None (unknown)
    when no unfinished entry has an estimate of its own (`known`: a `runningEstimate` or
    a past run) — the default alone would make up a number."""
    unfinished = [n for n in graph.nodes if n not in progress.finished]
    if not any(n in known for n in unfinished):
        return None
    left = remaining(graph, estimates, progress)
    return max(critical.ranks(graph, left).values(), default=0.0)
