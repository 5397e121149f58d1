"""A flow's DAG as `vcflow graph` draws it: nodes are its entries (a `for` entry one node
with its items' progress, a `when`/`switch` one dashed, an `onExit` one doubled), edges its
`dependsOn.targets` (labelled with a strategy or outcome that is not the default:
`reconcile.flowshape`), phases
when the flow is stored, and the critical path (`reconcile.outlook`) in bold. Renders DOT
and Mermaid text; `graph.py` reads the flows and lays DOT out for `-o svg`.
Pure: no I/O, no clock (the time is an argument).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from vcflow.api.jobflow import Flow, JobFlow
from vcflow.reconcile import flowshape, outlook

#: fill colours by entry phase (Volcano's job phases and vcflow's entry states)
COLOURS = {
    "Completed": "#b7e1cd",
    "Running": "#a4c8f0",
    "Pending": "#fff2b3",
    "Waiting": "#eeeeee",
    "Backoff": "#fce5cd",
    "Failed": "#f4b6b6",
    "Terminated": "#f9cb9c",
    "Aborted": "#f9cb9c",
    "Skipped": "#d9d9d9",
}
UNKNOWN_COLOUR = "#ffffff"


@dataclass(frozen=True)
class Node:
    """One entry: its id (unique in the drawing), the lines of its label, and how drawn."""

    id: str
    lines: tuple[str, ...]
    phase: str = ""
    conditional: bool = False  # `when` or `switch`: dashed
    exit_handler: bool = False  # `spec.onExit`: doubled
    critical: bool = False


@dataclass(frozen=True)
class Edge:
    """`source` runs first, `dest` waits for it; `label` a non-default strategy/outcome."""

    source: str
    dest: str
    label: str = ""
    critical: bool = False


@dataclass(frozen=True)
class Picture:
    """One flow's drawing: `title` (namespace/name), nodes in spec order, edges."""

    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]


def picture(flow: JobFlow, now: datetime, *, phased: bool, prefix: str = "") -> Picture:
    """The drawing of `flow`; `phased`: show the phases its status has (a stored flow);
    `prefix` makes node ids unique across several flows."""
    seen = outlook.outlook(flow, now)
    path = seen.critical_path
    on_path = set(path)
    steps = set(itertools.pairwise(path))
    exits = set(flow.exit_handlers)
    nodes: list[Node] = []
    edges: list[Edge] = []
    for entry in flowshape.entries(flow):
        view = seen.entries.get(entry.name)
        phase = view.phase if phased and view is not None else ""
        items = view.items if view is not None else None
        nodes.append(
            Node(
                prefix + entry.name,
                _lines(entry, phase, items if phased else None, exit_handler=entry.name in exits),
                phase,
                conditional=flowshape.conditional(entry),
                exit_handler=entry.name in exits,
                critical=entry.name in on_path,
            )
        )
        for target in dict.fromkeys(entry.targets):
            edges.append(
                Edge(
                    prefix + target,
                    prefix + entry.name,
                    flowshape.edge_label(entry),
                    critical=(target, entry.name) in steps,
                )
            )
    return Picture(f"{flow.namespace}/{flow.name}", tuple(nodes), tuple(edges))


def _lines(
    entry: Flow, phase: str, items: tuple[int, int] | None, *, exit_handler: bool
) -> tuple[str, ...]:
    lines = [entry.name]
    if entry.switch:
        lines.append("switch: " + " | ".join(case.template for case in entry.switch))
    elif entry.template is not None and entry.template != entry.name:
        lines.append(f"template: {entry.template}")
    if entry.when is not None:
        lines.append(f"when: {entry.when}")
    if entry.for_each is not None:
        lines.append(_for_line(entry, items))
    if exit_handler:
        lines.append("onExit")
    if phase:
        lines.append(phase)
    return tuple(lines)


def _for_line(entry: Flow, items: tuple[int, int] | None) -> str:
    """`for: 3/10` (items completed/known), else where its items come from."""
    each = entry.for_each
    if items is not None and items[1]:
        return f"for: {items[0]}/{items[1]}"
    if each is None or each.items is not None:
        return f"for: {len(each.items or []) if each else 0} items"
    if each.from_argument is not None:
        return f"for: args.{each.from_argument}"
    if each.from_output is not None:
        return f"for: outputs.{each.from_output}"
    return "for"


# --- DOT ---------------------------------------------------------------------------------


def dot_quoted(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, line breaks as spaces."""
    flat = " ".join(text.splitlines())
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_label(lines: Sequence[str]) -> str:
    """Lines joined by DOT's centred line break `\\n` (escaped first, so a `\\n` in a name
    stays text)."""
    return '"' + "\\n".join(dot_quoted(line)[1:-1] for line in lines) + '"'


def dot(pictures: Sequence[Picture]) -> str:
    """One `digraph`, each flow a cluster titled namespace/name; filled by phase, dashed
    when conditional, doubled for onExit, bold on the critical path."""
    out = [
        "digraph jobflows {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica"];',
        '  edge [fontname="Helvetica"];',
    ]
    for i, pic in enumerate(pictures):
        out.append(f"  subgraph cluster_{i} {{")
        out.append(f"    label={dot_quoted(pic.title)};")
        for node in pic.nodes:
            style = ["rounded", "filled"]
            if node.conditional:
                style.append("dashed")
            if node.critical:
                style.append("bold")
            attrs = [
                f"label={_dot_label(node.lines)}",
                f'fillcolor="{COLOURS.get(node.phase, UNKNOWN_COLOUR)}"',
                f'style="{",".join(style)}"',
            ]
            if node.critical:
                attrs.append("penwidth=3")
            if node.exit_handler:
                attrs.append("peripheries=2")
            out.append(f"    {dot_quoted(node.id)} [{', '.join(attrs)}];")
        for edge in pic.edges:
            attrs = []
            if edge.label:
                attrs.append(f"label={dot_quoted(edge.label)}")
            if edge.critical:
                attrs += ["style=bold", "penwidth=3"]
            tail = f" [{', '.join(attrs)}]" if attrs else ""
            out.append(f"    {dot_quoted(edge.source)} -> {dot_quoted(edge.dest)}{tail};")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


# --- Mermaid -----------------------------------------------------------------------------

_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "|": "#124;"}


def mermaid_text(text: str) -> str:
    """Text safe inside a quoted Mermaid label: its entity codes for `# " < > |`."""
    flat = " ".join(text.splitlines())
    return "".join(_ENTITIES.get(ch, ch) for ch in flat)


def _mermaid_class(phase: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", phase)


def mermaid(pictures: Sequence[Picture]) -> str:
    """A `flowchart LR`, each flow a subgraph; node ids `f<flow>n<entry>` (names are labels
    only), classes by phase plus `conditional`, `onExit` and `critical`; critical edges
    thick (`==>`)."""
    out = ["flowchart LR"]
    classes: list[str] = []
    phases: dict[str, None] = {}
    for i, pic in enumerate(pictures):
        ids = {node.id: f"f{i}n{j}" for j, node in enumerate(pic.nodes)}
        out.append(f'  subgraph f{i}["{mermaid_text(pic.title)}"]')
        for node in pic.nodes:
            label = "<br/>".join(mermaid_text(line) for line in node.lines)
            out.append(f'    {ids[node.id]}["{label}"]')
            mine = [_mermaid_class(node.phase)] if node.phase else []
            mine += ["conditional"] if node.conditional else []
            mine += ["onExit"] if node.exit_handler else []
            mine += ["critical"] if node.critical else []
            classes += [f"  class {ids[node.id]} {name}" for name in mine]
            if node.phase:
                phases[node.phase] = None
        for edge in pic.edges:
            if edge.source not in ids:
                continue  # (an unknown target: admission refuses it, a manifest may have it)
            arrow = "==>" if edge.critical else "-->"
            label = f'|"{mermaid_text(edge.label)}"|' if edge.label else ""
            out.append(f"    {ids[edge.source]} {arrow}{label} {ids[edge.dest]}")
        out.append("  end")
    for phase in phases:
        fill = COLOURS.get(phase, UNKNOWN_COLOUR)
        out.append(f"  classDef {_mermaid_class(phase)} fill:{fill}")
    out += [
        "  classDef conditional stroke-dasharray:5 5",
        "  classDef onExit stroke-width:4px,stroke:#666",
        "  classDef critical stroke-width:3px,stroke:#000",
        *classes,
    ]
    return "\n".join(out) + "\n"
