"""`when` admission benchmark: `vcflow validate -f FILE` on a 10,000-entry JobFlow without
`when` and with a distinct `when` on every entry, each run as a subprocess, A B A B.

The flow is a layered DAG (`--width` entries per layer, 100 by default): entry j of a layer
depends on entry j of the layer before, so every entry but the first layer's has one
target. Form A has no `when`; form B gives every entry a `when` of its own text that reads
its target's phase and an argument (`phases['e-41'] == 'Completed' && args.threshold !=
'141'`; a first-layer entry, without a target, reads the argument only), so admission
parses and checks 10,000 distinct expressions (docs/flow-features.md section 13). Both
forms declare the argument and come with their JobTemplates in the same file: one shared
template (`template: job`, the default) or one per entry (`--templates per-entry`). The
done-when of issue 22: B within 2x of A.

Run: `.venv/bin/python bench/when_bench.py [--entries N] [--rounds N] [--templates
shared|per-entry] [--json PATH]`.

Also `bench/admission_bench.py --when [ARGS]`. Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

FLOW_NAME = "bench"


def template(name: str) -> dict[str, Any]:
    pod = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "minAvailable": 1,
            "tasks": [{"name": "main", "replicas": 1, "template": {"spec": pod}}],
        },
    }


def entry_name(i: int) -> str:
    return f"e-{i}"


def flow(entries: int, width: int, *, when: bool, shared: bool) -> dict[str, Any]:
    """The layered flow; `when`: a distinct expression on every entry."""
    flows: list[dict[str, Any]] = []
    for i in range(entries):
        item: dict[str, Any] = {"name": entry_name(i)}
        if shared:
            item["template"] = "job"
        target = i - width if i >= width else None
        if target is not None:
            item["dependsOn"] = {"targets": [entry_name(target)]}
        if when:
            argument = f"args.threshold != '{i}'"
            item["when"] = (
                f"phases['{entry_name(target)}'] == 'Completed' && {argument}"
                if target is not None
                else argument
            )
        flows.append(item)
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": FLOW_NAME, "namespace": "default"},
        "spec": {"arguments": [{"name": "threshold", "value": "0.9"}], "flows": flows},
    }


def manifest(entries: int, width: int, *, when: bool, shared: bool) -> str:
    names = ["job"] if shared else [entry_name(i) for i in range(entries)]
    docs = [*(template(n) for n in names), flow(entries, width, when=when, shared=shared)]
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(docs, Dumper=dumper, sort_keys=False)


def vcflow_command() -> list[str]:
    found = Path(sys.executable).with_name("vcflow")
    if found.exists():
        return [str(found)]
    which = shutil.which("vcflow")
    if which is None:
        raise SystemExit("vcflow is not installed in this environment")
    return [which]


def validate_seconds(command: list[str], path: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [*command, "validate", "-f", str(path)], capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"vcflow validate -f {path} failed:\n{proc.stdout}{proc.stderr}")
    return elapsed


def run(entries: int, width: int, rounds: int, shared: bool) -> dict[str, Any]:
    command = vcflow_command()
    with tempfile.TemporaryDirectory(prefix="when-bench-") as tmp:
        files = {
            "without when": Path(tmp, "plain.yaml"),
            "with when": Path(tmp, "when.yaml"),
        }
        for path, has_when in zip(files.values(), (False, True), strict=True):
            path.write_text(manifest(entries, width, when=has_when, shared=shared))
        for path in files.values():
            validate_seconds(command, path)  # warm the page cache and .pyc files, check it passes
        times: dict[str, list[float]] = {label: [] for label in files}
        for _ in range(rounds):
            for label, path in files.items():
                times[label].append(validate_seconds(command, path))
        sizes = {label: path.stat().st_size for label, path in files.items()}
    medians = {label: statistics.median(ts) for label, ts in times.items()}
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "entries": entries,
        "width": width,
        "templates": "shared" if shared else "per-entry",
        "rounds": rounds,
        "bytes": sizes,
        "seconds": times,
        "median_s": medians,
        "ratio": medians["with when"] / medians["without when"],
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"{result['date']}, {result['cpus']} CPUs ({result['machine']}), Python "
        f"{result['python']}; {result['entries']:,} entries, layers of {result['width']}, "
        f"templates {result['templates']}, {result['rounds']} rounds A B A B.",
        "",
        "| flow | file KiB | runs (s) | median (s) |",
        "| --- | ---: | --- | ---: |",
    ]
    for label, runs in result["seconds"].items():
        shown = " ".join(f"{t:.2f}" for t in runs)
        lines.append(
            f"| {label} | {result['bytes'][label] / 1024:,.0f} | {shown} | "
            f"{result['median_s'][label]:.2f} |"
        )
    verdict = "within" if result["ratio"] <= 2 else "over"
    lines += ["", f"with when / without: {result['ratio']:.2f}x ({verdict} 2x)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--entries", type=int, default=10_000, help="entries of the flow")
    parser.add_argument("--width", type=int, default=100, help="entries per layer")
    parser.add_argument("--rounds", type=int, default=5, help="A B rounds (median reported)")
    parser.add_argument(
        "--templates",
        choices=("shared", "per-entry"),
        default="shared",
        help="one JobTemplate for every entry (template: job), or one per entry",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    args = parser.parse_args(argv)
    result = run(
        max(args.entries, 1),
        max(args.width, 1),
        max(args.rounds, 1),
        args.templates == "shared",
    )
    print(markdown(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
