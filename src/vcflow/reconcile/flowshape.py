"""The shape of a flow's DAG, apart from how it is drawn: each entry's kind (a job, a `for`
fan-out, a `when` or `switch` one that may not run, an `onExit` handler) and each edge's
label (a dependency's strategy or outcome that is not the default) — what `vcflow graph`
draws in DOT and Mermaid and the dashboard in SVG, said once. Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from vcflow.api.jobflow import Flow, JobFlow
from vcflow.api.phases import DependencyOutcome, DependencyStrategy

JOB, FOR, WHEN, SWITCH, EXIT = "job", "for", "when", "switch", "exit"


def entries(flow: JobFlow) -> Iterator[Flow]:
    """`flow`'s entries in spec order, each name once (its first entry): one node each."""
    done: set[str] = set()
    for entry in flow.flows:
        if entry.name not in done:
            done.add(entry.name)
            yield entry


def kind(entry: Flow, exits: Collection[str]) -> str:
    """The entry's kind: `exit` if `spec.onExit` names it, else `for`, `switch`, `when`,
    else `job` (the first that holds)."""
    if entry.name in exits:
        return EXIT
    if entry.for_each is not None:
        return FOR
    if entry.switch:
        return SWITCH
    if entry.when is not None:
        return WHEN
    return JOB


def conditional(entry: Flow) -> bool:
    """A `when` or `switch` entry: it may not run (drawn dashed)."""
    return entry.when is not None or bool(entry.switch)


def edge_label(entry: Flow) -> str:
    """The label of the edges into `entry`: its dependency's strategy and outcome where
    they are not the defaults (all of, Completed), `""` else."""
    parts = []
    if entry.strategy is not DependencyStrategy.ALL:
        parts.append(str(entry.strategy))
    if entry.outcome is not DependencyOutcome.COMPLETED:
        parts.append(str(entry.outcome))
    return ", ".join(parts)
