"""Local execution: `vcflow run` on DAGs of `true` jobs against the process floor.

For each shape and size this script writes, in a temp dir, one JobTemplate per entry and
one JobFlow (an entry's name is its JobTemplate's name), runs

    vcflow --state-dir <fresh tmp> run -f <dir> --no-live --timeout 900

as a subprocess, and times it (wall: perf_counter around the subprocess; CPU: user+sys of
the children from getrusage(RUSAGE_CHILDREN) deltas, so vcflow plus the `true` processes it
spawned). In the same process it measures the floor: the same N `true` processes spawned
directly with subprocess.Popen in DAG order, each started as soon as its dependencies have
exited, at most --floor-jobs (default 2, the cores of the reference machine) at a time.

Shapes (every job: one task, 1 replica, restartPolicy Never, command ["true"], cpu request "0"):

  chain    N entries, each targeting the previous one
  fan      one root -> N-2 parallel entries -> one sink targeting all of them
  layered  layers of ~sqrt(N) entries, each targeting 2 entries of the previous layer

    .venv/bin/python bench/local_bench.py --sizes 50,200,1000 --shapes chain,fan,layered
    .venv/bin/python bench/local_bench.py --sizes 50 --json /tmp/local.json
    .venv/bin/python bench/local_bench.py --sizes 1000 --repeat 5   # medians, min–max

With --repeat N each case runs N times, floor and vcflow alternating, and the table shows
medians (and vcflow's min–max): on a noisy machine one run is not a measurement.

Standard library only (plus the vcflow executable next to this interpreter, or --vcflow).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

Node = tuple[str, tuple[str, ...]]  # (name, deps)
SHAPES = ("chain", "fan", "layered")


# --------------------------------------------------------------------------- shapes


def _names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i:05d}" for i in range(n)]


def chain(n: int) -> list[Node]:
    names = _names("c", n)
    return [(x, (names[i - 1],) if i else ()) for i, x in enumerate(names)]


def fan(n: int) -> list[Node]:
    if n < 3:
        raise ValueError("fan needs n >= 3")
    names = _names("f", n)
    root, mid, sink = names[0], names[1:-1], names[-1]
    return [(root, ())] + [(x, (root,)) for x in mid] + [(sink, tuple(mid))]


def layered(n: int) -> list[Node]:
    width = max(1, round(math.sqrt(n)))
    names = _names("l", n)
    layers = [names[i : i + width] for i in range(0, n, width)]
    nodes: list[Node] = [(x, ()) for x in layers[0]]
    for prev, layer in itertools.pairwise(layers):
        for j, x in enumerate(layer):
            deps = {prev[j % len(prev)], prev[(j + 1) % len(prev)]}
            nodes.append((x, tuple(sorted(deps))))
    return nodes


BUILD = {"chain": chain, "fan": fan, "layered": layered}


# --------------------------------------------------------------------------- manifests

TEMPLATE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: {name}
  namespace: default
spec:
  minAvailable: 1
  schedulerName: volcano
  queue: default
  tasks:
    - name: main
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox:1.36
              command: ["true"]
              resources:
                requests:
                  cpu: "0"
"""


def write_manifests(nodes: Sequence[Node], outdir: Path, flow: str = "bench") -> None:
    (outdir / "templates.yaml").write_text("---\n".join(TEMPLATE.format(name=x) for x, _ in nodes))
    lines = [
        "apiVersion: flow.volcano.sh/v1alpha1",
        "kind: JobFlow",
        "metadata:",
        f"  name: {flow}",
        "  namespace: default",
        "spec:",
        "  jobRetainPolicy: retain",
        "  flows:",
    ]
    for x, deps in nodes:
        lines.append(f"    - name: {x}")
        if deps:
            lines.append("      dependsOn:")
            lines.append("        targets: [" + ", ".join(deps) + "]")
    (outdir / "flow.yaml").write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------- measuring


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def floor(nodes: Sequence[Node], jobs: int) -> tuple[float, float]:
    """Spawn `true` for every node in DAG order, at most `jobs` at once.
    Returns (wall s, CPU s of the children)."""
    indeg = {x: len(d) for x, d in nodes}
    children: dict[str, list[str]] = {x: [] for x, _ in nodes}
    for x, deps in nodes:
        for d in deps:
            children[d].append(x)
    ready = deque(x for x, d in nodes if not d)
    running: dict[int, tuple[str, subprocess.Popen]] = {}
    done = 0
    c0, t0 = _children_cpu(), time.perf_counter()
    while ready or running:
        while ready and len(running) < jobs:
            x = ready.popleft()
            p = subprocess.Popen(["true"])
            running[p.pid] = (x, p)
        pid, status = os.wait()
        if pid not in running:
            continue
        x, p = running.pop(pid)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise SystemExit(f"floor: {x} exited {p.returncode}")
        done += 1
        for c in children[x]:
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    wall = time.perf_counter() - t0
    if done != len(nodes):
        raise SystemExit(f"floor: ran {done} of {len(nodes)}")
    return wall, _children_cpu() - c0


def run_vcflow(
    vcflow: str,
    nodes: Sequence[Node],
    timeout: float,
    kill_after: float,
    keep: bool,
    where: str | None = None,
) -> dict:
    work = Path(tempfile.mkdtemp(prefix="vcflow-local-bench-", dir=where))
    try:
        mdir, sdir = work / "manifests", work / "state"
        mdir.mkdir()
        write_manifests(nodes, mdir)
        argv = [
            vcflow,
            "--state-dir",
            str(sdir),
            "run",
            "-f",
            str(mdir),
            "--no-live",
            "--timeout",
            str(int(timeout)),
        ]
        with open(work / "output.log", "wb") as log:
            c0, t0 = _children_cpu(), time.perf_counter()
            try:
                rc = subprocess.run(
                    argv, stdout=log, stderr=subprocess.STDOUT, timeout=kill_after
                ).returncode
            except subprocess.TimeoutExpired:
                rc = None
            wall = time.perf_counter() - t0
            cpu = _children_cpu() - c0
        rec = {"wall": wall, "cpu": cpu, "rc": rc}
        if rc != 0:
            tail = (work / "output.log").read_text(errors="replace").splitlines()[-15:]
            rec["error"] = f"killed after {kill_after:.0f} s" if rc is None else f"exit {rc}"
            rec["log_tail"] = tail
        return rec
    finally:
        if keep:
            print(f"  kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------- the machine

#: directories (each with one file) the disk probe creates
PROBE_DIRS = 400


def disk_probe(count: int = PROBE_DIRS, where: str | None = None) -> dict[str, float | str]:
    """What this machine's disk charges for the inodes a pod creates: microseconds per
    directory + file created (and per file written again, atomically), in a fresh temp
    directory like the runs' state directories. Each pod creates its directory, spec.json,
    status.json (its claim) and one log file, and replaces status.json once or twice: the
    figure says how much of a per-job overhead is the disk's, not vcflow's."""
    work = Path(tempfile.mkdtemp(prefix="vcflow-disk-probe-", dir=where))
    try:
        t0 = time.perf_counter()
        for i in range(count):
            d = work / f"p{i:05d}"
            d.mkdir()
            (d / "spec.json").write_bytes(b"{}")
        created = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(count):
            tmp = work / f"p{i:05d}" / "status.json.tmp"
            tmp.write_bytes(b"{}")
            os.replace(tmp, work / f"p{i:05d}" / "status.json")
        replaced = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "dir_and_file_us": round(1e6 * created / count, 1),
        "atomic_replace_us": round(1e6 * replaced / count, 1),
        "filesystem_of": where or tempfile.gettempdir(),
    }


# --------------------------------------------------------------------------- main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="50,200,1000")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument(
        "--floor-jobs", type=int, default=2, help="processes the floor runs at once (default 2)"
    )
    ap.add_argument("--timeout", type=float, default=900, help="vcflow run --timeout (s)")
    ap.add_argument(
        "--kill-after",
        type=float,
        default=600,
        help="kill a vcflow run still going after this many seconds",
    )
    ap.add_argument(
        "--vcflow",
        default=str(Path(sys.executable).with_name("vcflow")),
        help="the vcflow executable (default: next to this Python)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per case, floor and vcflow alternating; the table shows medians (default 1)",
    )
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    ap.add_argument("--keep", action="store_true", help="keep each run's temp dir")
    ap.add_argument(
        "--workdir",
        metavar="DIR",
        help="where the runs' state directories go (default: the system's temp dir); "
        "e.g. /dev/shm to take the disk out of the figures",
    )
    a = ap.parse_args(argv)
    shapes = [s for s in a.shapes.split(",") if s]
    sizes = [int(s) for s in a.sizes.split(",") if s]
    for s in shapes:
        if s not in BUILD:
            ap.error(f"unknown shape {s!r} (choose from {', '.join(SHAPES)})")
    if not Path(a.vcflow).exists() and not shutil.which(a.vcflow):
        ap.error(f"no vcflow executable at {a.vcflow}")

    disk = disk_probe(where=a.workdir)
    print(
        f"disk ({disk['filesystem_of']}): {disk['dir_and_file_us']:.0f} µs per directory + "
        f"file created, {disk['atomic_replace_us']:.0f} µs per file replaced",
        file=sys.stderr,
        flush=True,
    )
    rows = []
    for n in sizes:
        for shape in shapes:
            nodes = BUILD[shape](n)
            floors, runs = [], []
            for _ in range(max(1, a.repeat)):  # alternating: a drift of the machine hits both
                floors.append(floor(nodes, a.floor_jobs))
                runs.append(run_vcflow(a.vcflow, nodes, a.timeout, a.kill_after, a.keep, a.workdir))
            fw = statistics.median(w for w, _ in floors)
            fc = statistics.median(c for _, c in floors)
            failed = [r for r in runs if r["rc"] != 0]
            v = failed[0] if failed else dict(runs[0])
            walls = [r["wall"] for r in runs]
            v["wall"] = statistics.median(walls)
            v["cpu"] = statistics.median(r["cpu"] for r in runs)
            row = {
                "shape": shape,
                "n": len(nodes),
                "edges": sum(len(d) for _, d in nodes),
                "runs": len(runs),
                "vcflow_wall_s": round(v["wall"], 4),
                "vcflow_wall_min_s": round(min(walls), 4),
                "vcflow_wall_max_s": round(max(walls), 4),
                "vcflow_cpu_s": round(v["cpu"], 4),
                "floor_wall_s": round(fw, 4),
                "floor_cpu_s": round(fc, 4),
                "overhead_ms_per_job": round(1000 * (v["wall"] - fw) / len(nodes), 3),
                "rc": v["rc"],
            }
            if "error" in v:
                row["error"] = v["error"]
                row["log_tail"] = v["log_tail"]
            rows.append(row)
            status = "" if v["rc"] == 0 else f"  ERROR {v['error']}"
            print(
                f"{shape:8} {len(nodes):5}  vcflow {v['wall']:8.3f} s (cpu {v['cpu']:7.3f})"
                f"  floor {fw:7.3f} s  {row['overhead_ms_per_job']:7.2f} ms/job{status}",
                file=sys.stderr,
                flush=True,
            )
            for line in v.get("log_tail", ()):
                print("    | " + line, file=sys.stderr)

    spread = a.repeat > 1
    head = "| shape | N | vcflow wall (s) |" + (" min–max (s) |" if spread else "")
    print(head + " floor wall (s) | overhead (ms/job) | vcflow CPU (s) |")
    print("| --- | ---: | ---: |" + (" ---: |" if spread else "") + " ---: | ---: | ---: |")
    for r in rows:
        bad = f" ({r['error']})" if "error" in r else ""
        span = f" {r['vcflow_wall_min_s']:.3f}–{r['vcflow_wall_max_s']:.3f} |" if spread else ""
        print(
            f"| {r['shape']} | {r['n']} | {r['vcflow_wall_s']:.3f}{bad} |{span}"
            f" {r['floor_wall_s']:.3f} | {r['overhead_ms_per_job']:.2f} | {r['vcflow_cpu_s']:.3f} |"
        )

    print(
        f"\nMachine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}; disk "
        f"({disk['filesystem_of']}): {disk['dir_and_file_us']:.0f} µs per directory + file "
        f"created, {disk['atomic_replace_us']:.0f} µs per file replaced (a pod creates ~4 "
        "inodes and replaces ~2 files)."
    )
    if a.json:
        meta = {
            "disk": disk,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "system": platform.platform(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "floor_jobs": a.floor_jobs,
            "vcflow": a.vcflow,
        }
        Path(a.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
