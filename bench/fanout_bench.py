"""Fan-out benchmark: `vcflow run` of N `true` jobs as one `for` entry against the same N
jobs as N entries (today's way: a script writes one entry and one JobTemplate per job).

Form A, `fan`: local_bench's fan shape (a root, N-2 parallel entries, a sink; one JobTemplate
per entry). Form B, `for`: a root, one entry with `for: {items: [0..N-3]}` on one
JobTemplate, a sink — the same N jobs. Each runs as

    vcflow --state-dir <fresh tmp> run -f <dir> --no-live --timeout 1800

in a subprocess, A B A B (`--repeat`), timed (wall: perf_counter) with the peak resident
memory of that `vcflow run` process and its children (`os.wait4`'s rusage: `true` processes
are a few MB; the peak is vcflow's). Issue 23's targets for N = 10,000: B's peak RSS at most
150 MB, B's wall no worse than A's.

    .venv/bin/python bench/fanout_bench.py --sizes 1000,10000 [--repeat 2] [--json PATH]

Standard library only (plus the vcflow executable next to this interpreter). Figures:
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import local_bench  # (this directory's: the fan shape and its manifests)

VCFLOW = str(Path(sys.executable).with_name("vcflow"))
TEMPLATE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: job}
spec:
  minAvailable: 1
  tasks:
    - name: t
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - {name: c, image: busybox, command: ["true"], resources: {requests: {cpu: "0"}}}
"""


def write_for(n: int, outdir: Path) -> None:
    """A root, one `for` entry over n-2 items, a sink: n jobs on one template."""
    items = json.dumps(list(range(n - 2)))
    flow = f"""apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {{name: bench}}
spec:
  flows:
    - {{name: root, template: job}}
    - name: work
      template: job
      dependsOn: {{targets: [root]}}
      for: {{items: {items}}}
    - {{name: sink, template: job, dependsOn: {{targets: [work]}}}}
"""
    (outdir / "template.yaml").write_text(TEMPLATE)
    (outdir / "flow.yaml").write_text(flow)


def write_fan(n: int, outdir: Path) -> None:
    local_bench.write_manifests(local_bench.fan(n), outdir)


def run(outdir: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one `vcflow run` of the manifests in `outdir`."""
    state = Path(tempfile.mkdtemp(prefix="vcflow-fanout-state-"))
    try:
        argv = [VCFLOW, "--state-dir", str(state), "run", "-f", str(outdir)]
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*argv, "--no-live", "--timeout", "1800"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0 or "Succeed" not in out.splitlines()[-1]:
            raise SystemExit(f"vcflow run failed ({proc.returncode}):\n{out[-2000:]}")
        return wall, usage.ru_maxrss / 1024
    finally:
        shutil.rmtree(state, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--sizes", default="1000", help="jobs per flow, comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="A B rounds (median reported)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    args = parser.parse_args(argv)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="vcflow-fanout-") as tmp:
            dirs = {"fan": Path(tmp) / "fan", "for": Path(tmp) / "for"}
            for form, write in (("fan", write_fan), ("for", write_for)):
                dirs[form].mkdir()
                write(n, dirs[form])
            runs: dict[str, list[tuple[float, float]]] = {"fan": [], "for": []}
            for _ in range(max(args.repeat, 1)):
                for form in ("fan", "for"):
                    runs[form].append(run(dirs[form]))
                    wall, rss = runs[form][-1]
                    print(f"{form} {n}: {wall:.1f} s, peak RSS {rss:.0f} MB", flush=True)
        row = {"jobs": n}
        for form, got in runs.items():
            row[f"{form}_wall_s"] = statistics.median(w for w, _ in got)
            row[f"{form}_rss_mb"] = statistics.median(r for _, r in got)
        results.append(row)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine = f"{os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}"
    print(f"\n{stamp}, {machine}")
    print("\n| jobs | fan wall (s) | for wall (s) | fan peak RSS (MB) | for peak RSS (MB) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(
            f"| {r['jobs']:,} | {r['fan_wall_s']:.1f} | {r['for_wall_s']:.1f} | "
            f"{r['fan_rss_mb']:.0f} | {r['for_rss_mb']:.0f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
