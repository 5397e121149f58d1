"""Status size benchmark: how many bytes a JobFlow costs per entry, in Volcano's status layout
and in vcflow's compact one (docs/status-size.md), and what a status write costs at 10,000.

A layered flow (`--width` entries a layer, each targeting 2 of the layer before; every entry
its own JobTemplate) runs to `Succeed` through the real controllers on a memory store, with
a fake clock; a driver plays Volcano's job controller: each vcjob created goes Running, then
Completed, with its own times, `runningDuration` and `taskStatusCount` (as Volcano writes
them), so the records are as varied as a real run's. Every JobFlow status write is measured
(bytes of the whole object as the store keeps it, CPU time of the controller's write:
render, fit, compare, store). At the end the final status is rendered again in Volcano's
layout (`flowstatus.render`, before `statusfit`) for the "before" figures.

Run: `.venv/bin/python bench/status_size_bench.py [--sizes 1000,10000] [--width 1000]
[--json PATH]`. About a minute at 10,000 entries.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from vcflow.api import bounds
from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.cli import describe as describing
from vcflow.controller.manager import Manager
from vcflow.reconcile import flowstatus
from vcflow.store import MemoryStore
from vcflow.store.base import EventType

NAMESPACE = "default"
FLOW = "size"


def layered(n: int, width: int) -> list[dict[str, Any]]:
    flows: list[dict[str, Any]] = []
    for i in range(n):
        layer, j = divmod(i, width)
        entry: dict[str, Any] = {"name": f"l{layer:03d}-{j:04d}"}
        if layer:
            prev = layer - 1
            targets = [f"l{prev:03d}-{j:04d}", f"l{prev:03d}-{(j + width // 2) % width:04d}"]
            entry["dependsOn"] = {"targets": targets}
        flows.append(entry)
    return flows


def template(name: str) -> JobTemplate:
    container = {"name": "main", "image": "busybox", "command": ["true"]}
    pod = {"spec": {"containers": [container], "restartPolicy": "Never"}}
    return JobTemplate.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {
                "minAvailable": 1,
                "tasks": [{"name": "main", "replicas": 1, "template": pod}],
            },
        }
    )


def flow_of(flows: list[dict[str, Any]]) -> JobFlow:
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": FLOW, "namespace": NAMESPACE},
            "spec": {"flows": flows, "jobRetainPolicy": "retain"},
        }
    )


def running(job: VCJob, now: str) -> VCJobStatus:
    return VCJobStatus.from_dict(
        {
            "state": {"phase": "Running", "lastTransitionTime": now},
            "minAvailable": 1,
            "running": 1,
            "taskStatusCount": {"main": {"phase": {"Running": 1}}},
        }
    )


def completed(job: VCJob, now: str, seconds: int) -> VCJobStatus:
    return VCJobStatus.from_dict(
        {
            "state": {"phase": "Completed", "lastTransitionTime": now},
            "minAvailable": 1,
            "succeeded": 1,
            "runningDuration": f"{seconds}s",
            "taskStatusCount": {"main": {"phase": {"Succeeded": 1}}},
        }
    )


@dataclass
class Write:
    object_bytes: int
    status_bytes: int
    cpu_s: float
    compact: bool


@dataclass
class Result:
    entries: int
    writes: int
    largest_object: int
    largest_status: int
    before_status: int
    before_object: int
    gzip_records: int
    after_status: int
    after_object: int
    write_cpu_ms_median: float
    write_cpu_ms_max: float
    describe_s: float


def run(n: int, width: int) -> Result:
    clock = FakeClock(datetime(2026, 12, 1, tzinfo=UTC))
    store = MemoryStore(clock=clock)
    flows = layered(n, width)
    store.apply([*(template(f["name"]) for f in flows), flow_of(flows)])
    manager = Manager(store, clock)
    writes: list[Write] = []
    controller = manager.flows
    write_status = controller._write_status

    def measured(key: Any) -> bool:
        cpu = time.process_time()
        wrote = write_status(key)
        spent = time.process_time() - cpu
        if wrote:
            flow = store.get(JobFlow, NAMESPACE, FLOW)
            data = flow.to_dict()
            status = data.get("status") or {}
            compact = "compactJobStatus" in status
            writes.append(
                Write(bounds.object_size(data), bounds.object_size(status), spent, compact)
            )
        return wrote

    controller._write_status = measured  # type: ignore[method-assign]
    rv = store.resource_version()
    manager.settle()
    serial = 0
    while True:
        events = list(store.events_since(rv, kinds=[VCJob]))
        rv = max([rv, *(e.resource_version for e in events)])
        new = [e.object for e in events if e.type == EventType.ADDED]
        if not new:
            break
        for job in new:  # each one starts a little after the one before
            serial += 1
            if serial % 7 == 0:
                clock.advance(1)
            assert isinstance(job, VCJob)
            job.status = running(job, _now(clock))
            store.update_status(job)
        manager.settle()
        for job in new:
            serial += 1
            if serial % 5 == 0:
                clock.advance(1)
            fresh = store.get(VCJob, job.namespace, job.name)
            fresh.status = completed(fresh, _now(clock), 20 + serial % 611)
            store.update_status(fresh)
        manager.settle()
    flow = store.get(JobFlow, NAMESPACE, FLOW)
    if flow.phase != "Succeed":
        raise SystemExit(f"{n}: the flow is {flow.phase!r}")
    key = next(iter(controller.indexes))
    full = flowstatus.render(controller.indexes[key].state)
    data = flow.to_dict()
    rest = bounds.object_size(data) - bounds.object_size(data["status"])
    start = time.perf_counter()
    describing.render(flow, [], clock.now())
    describe_s = time.perf_counter() - start
    big = [w for w in writes if w.compact] or writes
    cpu = [w.cpu_s * 1000 for w in big[-20:]]
    return Result(
        entries=n,
        writes=len(writes),
        largest_object=max(w.object_bytes for w in writes),
        largest_status=max(w.status_bytes for w in writes),
        before_status=bounds.object_size(full),
        gzip_records=_gzip_b64(full),
        before_object=rest + bounds.object_size(full),
        after_status=bounds.object_size(data["status"]),
        after_object=bounds.object_size(data),
        write_cpu_ms_median=statistics.median(cpu),
        write_cpu_ms_max=max(cpu),
        describe_s=describe_s,
    )


def _gzip_b64(status: dict[str, Any]) -> int:
    """Bytes of Argo's answer applied to this status: gzip+base64 of its JSON, whole."""
    text = json.dumps(status, separators=(",", ":")).encode()
    return len(base64.b64encode(gzip.compress(text, mtime=0)))


def _now(clock: FakeClock) -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def table(results: list[Result]) -> str:
    lines = [
        "| entries | status writes | before: object | before: status B/entry | "
        "gzip+base64 of it, B/entry | after: object | after: status B/entry | "
        "largest write | write CPU ms (median, max) | describe s |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {r.entries:,} | {r.writes} | {r.before_object:,} | "
            f"{r.before_status / r.entries:,.0f} | {r.gzip_records / r.entries:,.1f} | "
            f"{r.after_object:,} | {r.after_status / r.entries:,.1f} | {r.largest_object:,} | "
            f"{r.write_cpu_ms_median:.0f}, {r.write_cpu_ms_max:.0f} | {r.describe_s:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        result = run(size, min(args.width, size))
        print(f"{size}: {asdict(result)}", file=sys.stderr)
        results.append(result)
    print(f"Status size — Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}\n")
    print(table(results))
    if args.json:
        with open(args.json, "w") as out:
            json.dump([asdict(r) for r in results], out, indent=2)


if __name__ == "__main__":
    main()
