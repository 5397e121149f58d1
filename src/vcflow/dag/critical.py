"""Critical-path ranks: an entry's rank is its own estimate plus the largest rank among the
entries that wait for it — the longest path of work from its start to the flow's end.
Ready entries taken by rank, highest first, keep the longest path busy (docs/scheduling.md,
`jobOrder: CriticalPath`). Pure: O(V+E), no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import median

from vcflow.dag.graph import Graph, topological_order

#: the estimate of an entry with no `runningEstimate` and no past run, in seconds
DEFAULT_ESTIMATE = 1.0


def ranks(graph: Graph, estimates: Mapping[str, float]) -> dict[str, float]:
    """Entry → its rank; an entry without an estimate counts `DEFAULT_ESTIMATE`. The graph
    must be a DAG (admission refuses cycles)."""
    succ = graph.successors()
    out: dict[str, float] = {}
    for node in reversed(topological_order(graph)):
        after = max((out[s] for s in succ[node]), default=0.0)
        out[node] = max(estimates.get(node, DEFAULT_ESTIMATE), 0.0) + after
    return out


def estimate(running_estimate: float | None, past: list[float]) -> float:
    """An entry's estimate: its `runningEstimate` (seconds), else the median of its
    template's past durations, else `DEFAULT_ESTIMATE`."""
    if running_estimate is not None:
        return running_estimate
    if past:
        return float(median(past))
    return DEFAULT_ESTIMATE
