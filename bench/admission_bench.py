"""Admission benchmark: JobFlow parsing and `review()` on 10,000-entry flows.

Cases (every flow is valid, so `review` walks its whole happy path):

- `chain`: 10,000 entries, each targeting the one before (9,999 edges);
- `layered`: 100 layers x 100 entries, each targeting 5 entries of the previous layer
  (49,500 edges);
- `ladder`: 60 layers x 2 entries, each targeting both entries of the previous layer — 2^59
  paths from the last layer, which Volcano's `IsDAG` walks one by one (it keeps only the
  current path, nothing memoised; reference §6.1). vcflow's three-colour DFS visits each
  edge once;
- `ladder 5,000x2`: the same shape with 10,000 entries, to show the check stays linear;
- `layered + unknown targets`: `layered` with 10 targets misspelt, the error path (each
  unknown target gets a "did you mean" suggestion, `difflib` against every entry name).

A second table runs a Python port of Volcano's `IsDAG` against vcflow's `find_cycle` on small
ladders, to show the doubling per layer, and extrapolates it to the 60-layer ladder.

Run: `.venv/bin/python bench/admission_bench.py [--repeat N] [--json PATH]`.

`--when [ARGS]` runs instead the flow language's comparison (`bench/when_bench.py`, whose
options follow): `vcflow validate` of a 10,000-entry flow with a `when` on every entry
against the same flow without, as subprocesses, A B A B (issue 22's bound: within 2x).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vcflow.admission.review import errors_only, review
from vcflow.api.jobflow import JobFlow
from vcflow.dag import graph as dag

Flows = list[dict[str, Any]]

FLOW_NAME = "bench"
VOLCANO_LADDERS = (8, 12, 16, 20)
LADDER_LAYERS = 60
UNKNOWN_TARGETS = 10


def entry(name: str, targets: list[str]) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": targets}} if targets else {"name": name}


def chain(n: int) -> Flows:
    return [entry(f"e{i:05d}", [f"e{i - 1:05d}"] if i else []) for i in range(n)]


def layered(layers: int, width: int, fan_in: int) -> Flows:
    """Entry j of layer l targets `fan_in` entries of layer l-1, spread evenly across it."""
    step = width // fan_in
    flows: Flows = []
    for layer in range(layers):
        for j in range(width):
            targets = [f"l{layer - 1:03d}-{(j + k * step) % width:03d}" for k in range(fan_in)]
            flows.append(entry(f"l{layer:03d}-{j:03d}", targets if layer else []))
    return flows


def ladder(layers: int) -> Flows:
    return layered(layers, 2, 2)


def with_unknown_targets(flows: Flows, count: int) -> Flows:
    """A copy of `flows` where `count` entries, spread evenly, have a misspelt first target
    (one extra character: a typo, so the "did you mean" search finds close candidates)."""
    out = [dict(f) for f in flows]
    with_deps = [i for i, f in enumerate(out) if "dependsOn" in f]
    for n, i in enumerate(with_deps[:: len(with_deps) // count][:count]):
        targets = list(out[i]["dependsOn"]["targets"])
        targets[0] = f"{targets[0]}x{n}"
        out[i] = {"name": out[i]["name"], "dependsOn": {"targets": targets}}
    return out


def manifest(flows: Flows) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": FLOW_NAME, "namespace": "default"},
        "spec": {"flows": flows},
    }


def edges(flows: Flows) -> int:
    return sum(len(f.get("dependsOn", {}).get("targets", [])) for f in flows)


def median_ms(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs), runs


def volcano_is_dag(graph: dict[str, list[str]]) -> bool:
    """Volcano's `IsDAG` (reference §6.1 step 3), ported: from every vertex, DFS keeping only
    the vertices on the current path; nothing is memoised, so every path is walked."""

    def walk(vertex: str, on_path: set[str]) -> bool:
        for target in graph[vertex]:
            if target in on_path:
                return False
            on_path.add(target)
            ok = walk(target, on_path)
            on_path.discard(target)
            if not ok:
                return False
        return True

    return all(walk(root, {root}) for root in graph)


def admission_case(name: str, flows: Flows, repeat: int, expect_errors: int) -> dict[str, Any]:
    data = manifest(flows)
    flow = JobFlow.from_dict(data)
    found = errors_only(review(flow))
    if len(found) != expect_errors:
        raise SystemExit(f"{name}: expected {expect_errors} errors, got {len(found)}: {found[:3]}")
    parse_ms, parse_runs = median_ms(lambda: JobFlow.from_dict(data), repeat)
    review_ms, review_runs = median_ms(lambda: review(flow), repeat)
    return {
        "case": name,
        "entries": len(flows),
        "edges": edges(flows),
        "errors": expect_errors,
        "parse_ms": parse_ms,
        "review_ms": review_ms,
        "parse_runs_ms": parse_runs,
        "review_runs_ms": review_runs,
    }


def ladder_case(layers: int, repeat: int) -> dict[str, Any]:
    flows = ladder(layers)
    graph = dag.Graph.build((f["name"], f.get("dependsOn", {}).get("targets", [])) for f in flows)
    plain = {n: list(graph.targets[n]) for n in graph.nodes}
    assert volcano_is_dag(plain) and dag.find_cycle(graph) is None
    volcano_ms, _ = median_ms(lambda: volcano_is_dag(plain), repeat)
    ours_ms, _ = median_ms(lambda: dag.find_cycle(graph), repeat)
    return {
        "layers": layers,
        "entries": len(flows),
        "volcano_isdag_ms": volcano_ms,
        "vcflow_ms": ours_ms,
    }


def run(repeat: int) -> dict[str, Any]:
    big = layered(100, 100, 5)
    cases = [
        admission_case("chain 10,000", chain(10_000), repeat, 0),
        admission_case("layered 100x100, fan-in 5", big, repeat, 0),
        admission_case(f"ladder {LADDER_LAYERS}x2", ladder(LADDER_LAYERS), repeat, 0),
        admission_case("ladder 5,000x2", ladder(5_000), repeat, 0),
        admission_case(
            f"layered + {UNKNOWN_TARGETS} unknown targets",
            with_unknown_targets(big, UNKNOWN_TARGETS),
            repeat,
            UNKNOWN_TARGETS,
        ),
    ]
    ladders = [ladder_case(n, min(repeat, 3)) for n in VOLCANO_LADDERS]
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeat": repeat,
        "cases": cases,
        "volcano_ladders": ladders,
        "volcano_ladder_60_extrapolated_s": extrapolate(ladders[-1], LADDER_LAYERS) / 1000,
    }


def extrapolate(row: dict[str, Any], layers: int) -> float:
    """Volcano's time on a taller ladder: it doubles with each layer."""
    return float(row["volcano_isdag_ms"]) * 2.0 ** (layers - int(row["layers"]))


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Admission — median of {result['repeat']} runs, Python {result['python']}",
        "",
        "| case | entries | edges | JobFlow.from_dict (ms) | review (ms) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for c in result["cases"]:
        lines.append(
            f"| {c['case']} | {c['entries']:,} | {c['edges']:,} | "
            f"{c['parse_ms']:.1f} | {c['review_ms']:.1f} |"
        )
    lines += [
        "",
        "Cycle check on ladders (N layers x 2, each entry targets both entries of the layer "
        "before):",
        "",
        "| layers | entries | Volcano IsDAG, Python port (ms) | vcflow find_cycle (ms) |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for r in result["volcano_ladders"]:
        lines.append(
            f"| {r['layers']} | {r['entries']} | {r['volcano_isdag_ms']:.1f} | "
            f"{r['vcflow_ms']:.3f} |"
        )
    years = result["volcano_ladder_60_extrapolated_s"] / (365.25 * 24 * 3600)
    lines += [
        "",
        f"Volcano IsDAG on the {LADDER_LAYERS}-layer ladder, extrapolated: ~{years:,.0f} years.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["--when"]:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import when_bench

        return when_bench.main(given[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="runs per case (median reported)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    args = parser.parse_args(argv)
    result = run(max(args.repeat, 1))
    print(markdown(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
