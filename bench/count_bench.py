"""Work counts of `vcflow run`: SQL statements, commits, `PRAGMA data_version` checks and
Python function calls per job, on the DAGs of `local_bench.py`.

Wall and CPU time drift by tens of percent on a shared machine, so a change of a few
percent does not show in them; these counts do not depend on the machine's speed (only on
which paths a run takes, which is almost always the same). Each case runs in a subprocess:

    python -c <driver> --state-dir <fresh tmp> run -f <dir> --no-live

where the driver traces every SQL statement of the store's connections (`sqlite3`'s trace
callback) and runs `vcflow` under `cProfile` for the call count. The per-job figure is the
slope between the smallest and the largest size, so start-up (imports, apply) drops out.

    .venv/bin/python bench/count_bench.py                       # chain,fan,layered of 100, 300
    .venv/bin/python bench/count_bench.py --shapes chain --sizes 100,300,1000 --json /tmp/c.json

Compare two trees by running it with each tree's interpreter (or PYTHONPATH=<tree>/src).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from local_bench import BUILD, SHAPES, write_manifests

DRIVER = r"""
import cProfile, json, pstats, sqlite3, sys
counts = {"statements": 0, "commits": 0, "data_version": 0}
_connect = sqlite3.connect
def connect(*args, **kwargs):
    db = _connect(*args, **kwargs)
    def trace(sql):
        counts["statements"] += 1
        head = sql.lstrip()[:24].upper()
        counts["commits"] += head.startswith("COMMIT")
        counts["data_version"] += head.startswith("PRAGMA DATA_VERSION")
    db.set_trace_callback(trace)
    return db
sqlite3.connect = connect
from vcflow.cli.app import main
sys.argv = ["vcflow"] + sys.argv[2:]
code = 0
profile = cProfile.Profile()
try:
    profile.runcall(main)
except SystemExit as exc:
    code = exc.code or 0
counts["calls"] = pstats.Stats(profile).total_calls
counts["exit"] = code
with open(OUT, "w") as f:
    json.dump(counts, f)
"""


def measure(python: str, nodes: list[tuple[str, tuple[str, ...]]]) -> dict[str, int]:
    work = Path(tempfile.mkdtemp(prefix="vcflow-count-bench-"))
    try:
        manifests = work / "manifests"
        manifests.mkdir()
        write_manifests(nodes, manifests)
        out = work / "counts.json"
        driver = DRIVER.replace("OUT", repr(str(out)))
        argv = [python, "-c", driver, "-", "--state-dir", str(work / "state")]
        argv += ["run", "-f", str(manifests), "--no-live", "--timeout", "900"]
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=False, timeout=1800)
        if not out.exists():
            raise SystemExit(f"no counts written: {' '.join(argv[3:])}")
        return json.loads(out.read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,300")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs vcflow")
    ap.add_argument("--json", metavar="PATH", help="also write every count as JSON")
    a = ap.parse_args(argv)
    sizes = sorted(int(s) for s in a.sizes.split(",") if s)
    shapes = [s for s in a.shapes.split(",") if s]
    for s in shapes:
        if s not in BUILD:
            ap.error(f"unknown shape {s!r} (choose from {', '.join(SHAPES)})")
    if len(sizes) < 2:
        ap.error("give at least two sizes: the per-job figure is the slope between them")

    rows = []
    for shape in shapes:
        found = {n: measure(a.python, BUILD[shape](n)) for n in sizes}
        failed = [n for n, c in found.items() if c["exit"] != 0]
        if failed:
            raise SystemExit(f"{shape}: vcflow run failed at N={failed} (counts not comparable)")
        lo, hi = sizes[0], sizes[-1]
        slope = {k: (found[hi][k] - found[lo][k]) / (hi - lo) for k in found[hi] if k != "exit"}
        rows.append({"shape": shape, "sizes": found, "per_job": slope})
        print(f"{shape:8} done", file=sys.stderr, flush=True)

    print(f"Per job (slope between N={sizes[0]} and N={sizes[-1]}):\n")
    print("| shape | SQL statements | commits | data_version checks | Python calls |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        p = r["per_job"]
        print(
            f"| {r['shape']} | {p['statements']:.1f} | {p['commits']:.2f} "
            f"| {p['data_version']:.1f} | {p['calls']:,.0f} |"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
