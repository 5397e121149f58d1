"""The status writes of a fan-out through `vcflow operator` (issue 23: under 1 MiB each, at
most one a second): one JobFlow whose one entry runs `for` over N items, on kube_bench's
emulator — `vcflow server --runtime none --controllers off` as the API server, the operator,
a fake Volcano that moves each vcjob Pending → Running → Completed at once
(tests/operator/fakevolcano.py).

This process watches the flow: every status the operator writes is a MODIFIED event (its
size: the object's JSON); it reports how many were written, the largest, their rate over the
run and the shortest gap between two, and the time to `Succeed`.

    .venv/bin/python bench/fanout_operator_bench.py --items 10000

Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import itertools

import kube_bench  # (this directory's: the emulator)
from layered20 import ENTRIES, FLOW


def flow(items: int) -> dict[str, object]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "fan", "namespace": "default"},
        "spec": {
            "flows": [
                {"name": "work", "template": ENTRIES[0], "for": {"items": list(range(items))}}
            ]
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--vcflow", default=str(Path(sys.executable).with_name("vcflow")))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    ns = argparse.Namespace(vcflow=args.vcflow, qps=0.0, run_seconds="0")
    writes: list[tuple[float, int, str]] = []
    done = threading.Event()
    with (
        tempfile.TemporaryDirectory(prefix="vcflow-fanout-op-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        plane = kube_bench.Emulator(ns, Path(tmp), stack)
        kube_bench.wait_ready(plane.operator)

        def watch() -> None:
            path = f"{FLOW}/jobflows?watch=1&fieldSelector=metadata.name%3Dfan"
            with plane.client.stream("GET", path, timeout=None) as answer:
                for line in answer.iter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    phase = ((obj.get("status") or {}).get("state") or {}).get("phase", "")
                    if event.get("type") == "MODIFIED" and obj.get("status"):
                        writes.append((time.monotonic(), len(line.encode()), phase))
                    if phase in ("Succeed", "Failed"):
                        done.set()
                        return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        time.sleep(0.5)
        start = time.monotonic()
        plane.client.post(f"{FLOW}/jobflows", json=flow(args.items)).raise_for_status()
        if not done.wait(args.timeout):
            raise SystemExit(f"the flow did not end in {args.timeout} s")
        took = time.monotonic() - start
    times = [t for t, _, _ in writes]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    result = {
        "items": args.items,
        "seconds": round(took, 1),
        "phase": writes[-1][2] if writes else "",
        "status_writes": len(writes),
        "largest_bytes": max((size for _, size, _ in writes), default=0),
        "writes_per_second": round(len(writes) / took, 2) if took else 0.0,
        "shortest_gap_s": round(min(gaps), 3) if gaps else None,
        "machine": f"{os.cpu_count()} CPUs ({platform.machine()}), Python "
        f"{platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
