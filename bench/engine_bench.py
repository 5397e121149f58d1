"""Engine benchmark: 10,000-entry JobFlows driven to Succeed by the controllers.

Shapes (every entry has its own JobTemplate: an entry's name is its template's name):

- `chain`: N entries, each targeting the one before — one job at a time, N syncs;
- `layered`: N/100 layers of 100 entries, each targeting 2 entries of the layer before;
- `fan`: N entries without targets (a wide fan, one entry per job);
- `for`: one entry with `for` over N items (the same N jobs, docs/flow-features.md §19).

The flow and its templates are applied to a store (SQLite in a temporary directory, or
`--store memory`), then `vcflow.controller.manager.Manager` runs them with runtime `none`:
a driver stands in for the vcjob runtime and sets every vcjob the controller creates to
`Completed` (`store.update_status`), until the flow's phase is `Succeed`. Two drivers:

- `inline` (default): the driver works between the manager's steps, as a runtime running
  alongside the controllers does — the manager is idle only once the flow is done;
- `rounds`: `manager.settle()`, then complete every new vcjob, repeat — the manager goes
  idle (and writes the flow's status) after every round, i.e. after every job of a chain;
- `run`: the same rounds, settled as `Manager.run` does between bursts
  (`settle(flush=False)`: a status is written once it is due, not at every lull) — what a
  long-running controller does when the jobs take real time.

The driver finds new vcjobs through the store's watch (`events_since`), so it costs O(1) per
job. Controller and driver are timed separately (wall: `perf_counter`, CPU:
`process_time`); the figures are per job. Syncs and JobFlow status writes are counted.

Run: `.venv/bin/python bench/engine_bench.py [--sizes 1000,10000] [--shapes chain,layered]
[--store sqlite|memory|both] [--driver inline,rounds,run] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vcflow.api.clock import SystemClock
from vcflow.api.errors import Conflict
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.phases import FlowPhase, JobPhase
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.store import MemoryStore, SqliteStore, Store
from vcflow.store.base import EventType

NAMESPACE = "default"
FLOW_NAME = "bench"
LAYER_WIDTH = 100
FAN_IN = 2

Flows = list[dict[str, Any]]


# --- the objects ---------------------------------------------------------------------------


def _entry(name: str, targets: list[str]) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": targets}} if targets else {"name": name}


def chain(n: int) -> Flows:
    return [_entry(f"e{i:05d}", [f"e{i - 1:05d}"] if i else []) for i in range(n)]


def layered(n: int) -> Flows:
    """n/100 layers of 100; entry j targets entries j and j+50 of the layer before."""
    layers, step = max(n // LAYER_WIDTH, 1), LAYER_WIDTH // FAN_IN
    flows: Flows = []
    for layer in range(layers):
        for j in range(LAYER_WIDTH):
            prev = [(j + k * step) % LAYER_WIDTH for k in range(FAN_IN)] if layer else []
            targets = [f"l{layer - 1:03d}-{t:03d}" for t in prev]
            flows.append(_entry(f"l{layer:03d}-{j:03d}", targets))
    return flows


def fan(n: int) -> Flows:
    """n entries, none with a target: a wide fan, one entry per job."""
    return [_entry(f"e{i:05d}", []) for i in range(n)]


def fan_out(n: int) -> Flows:
    """One entry with `for` over n items: the same n jobs as `fan`, one entry."""
    return [{"name": "item", "for": {"items": list(range(n))}}]


def size_of(flows: Flows) -> int:
    """The jobs of the flow: one per entry, one per item of a `for` entry."""
    return sum(len(f["for"]["items"]) if "for" in f else 1 for f in flows)


SHAPES: dict[str, Callable[[int], Flows]] = {
    "chain": chain,
    "layered": layered,
    "fan": fan,
    "for": fan_out,
}
DRIVERS = ("inline", "rounds", "run")


def template(name: str) -> JobTemplate:
    return JobTemplate.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {
                "minAvailable": 1,
                "schedulerName": "volcano",
                "tasks": [
                    {
                        "name": "main",
                        "replicas": 1,
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "main", "image": "busybox", "command": ["true"]}
                                ],
                                "restartPolicy": "Never",
                            }
                        },
                    }
                ],
            },
        }
    )


def objects(flows: Flows) -> list[Resource]:
    flow = JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": FLOW_NAME, "namespace": NAMESPACE},
            "spec": {"flows": flows, "jobRetainPolicy": "retain"},
        }
    )
    return [*(template(f["name"]) for f in flows), flow]


# --- the driver ------------------------------------------------------------------------------


class Driver:
    """Runtime `none` plus an external system: every vcjob created is set to Completed."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.rv = store.resource_version()
        self.completed = 0

    def poll(self) -> int:
        """Complete the vcjobs created since the last poll; how many."""
        done = 0
        latest = self.store.resource_version()  # every event up to here is read below
        for event in self.store.events_since(self.rv, kinds=[VCJob]):
            self.rv = event.resource_version
            job = event.object
            if event.type == EventType.ADDED and isinstance(job, VCJob):
                done += self._complete(job)
        self.rv = max(self.rv, latest)
        self.completed += done
        return done

    def _complete(self, job: VCJob) -> int:
        for _ in range(3):
            if job.phase == JobPhase.COMPLETED:
                return 0
            job.status = VCJobStatus(state=JobState(phase=JobPhase.COMPLETED))
            try:
                self.store.update_status(job)
                return 1
            except Conflict:
                job = self.store.get(VCJob, job.namespace, job.name)
        raise RuntimeError(f"vcjob {job.name}: status kept conflicting")


# --- timing ------------------------------------------------------------------------------------


@dataclass
class Timer:
    wall: float = 0.0
    cpu: float = 0.0

    @contextmanager
    def __call__(self) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall += time.perf_counter() - wall
            self.cpu += time.process_time() - cpu


@dataclass
class Counts:
    syncs: int = 0
    status_writes: int = 0
    steps: int = 0
    rounds: int = 0


@dataclass
class Result:
    shape: str
    entries: int
    edges: int
    store: str
    driver: str
    apply_s: float
    controller_wall_us: float
    controller_cpu_us: float
    driver_wall_us: float
    driver_cpu_us: float
    total_wall_s: float
    syncs: int
    status_writes: int
    rounds: int
    events: int
    db_mb: float | None
    extra: dict[str, Any] = field(default_factory=dict)


def _count_calls(obj: object, name: str, counter: Callable[[tuple[Any, ...]], None]) -> None:
    """Wrap the bound method `obj.name` so every call is counted first (instance attribute)."""
    method = getattr(obj, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counter(args)
        return method(*args, **kwargs)

    setattr(obj, name, counted)


def instrument(manager: Manager, store: Store) -> Counts:
    counts = Counts()

    def sync(_: tuple[Any, ...]) -> None:
        counts.syncs += 1

    def status(args: tuple[Any, ...]) -> None:
        if isinstance(args[0], JobFlow):
            counts.status_writes += 1

    def status_data(args: tuple[Any, ...]) -> None:
        if args[0] is JobFlow:
            counts.status_writes += 1

    _count_calls(manager.flows, "sync", sync)
    _count_calls(store, "update_status", status)
    if hasattr(store, "update_status_data"):
        _count_calls(store, "update_status_data", status_data)
    return counts


def drive(manager: Manager, driver: Driver, mode: str, counts: Counts) -> tuple[Timer, Timer]:
    control, drive_ = Timer(), Timer()
    if mode in ("rounds", "run"):
        while True:
            counts.rounds += 1
            with control():
                manager.settle(flush=mode == "rounds")
            with drive_():
                if not driver.poll():
                    break
        with control():
            manager.settle()  # `run`: the statuses not yet due, as `Manager.run` ends
        return control, drive_
    # inline: one manager step, then the driver; done when neither had anything to do.
    while True:
        counts.steps += 1
        with control():
            worked = manager.step()
        with drive_():
            completed = driver.poll()
        if not worked and not completed:
            with control():
                manager.settle()  # the idle manager's last word (a no-op when settled)
            return control, drive_


# --- one case --------------------------------------------------------------------------------


def open_store(kind: str, directory: Path) -> Store:
    if kind == "memory":
        return MemoryStore()
    return SqliteStore(directory / "vcflow.db")


def db_size(directory: Path) -> float | None:
    files = list(directory.glob("vcflow.db*"))
    return sum(f.stat().st_size for f in files) / 1e6 if files else None


def run_case(shape: str, size: int, store_kind: str, mode: str) -> Result:
    flows = SHAPES[shape](size)
    batch = objects(flows)
    with tempfile.TemporaryDirectory(prefix="vcflow-bench-") as tmp:
        directory = Path(tmp)
        store = open_store(store_kind, directory)
        try:
            start = time.perf_counter()
            store.apply(batch)
            apply_s = time.perf_counter() - start
            manager = Manager(store, SystemClock())
            driver = Driver(store)
            counts = instrument(manager, store)
            was_enabled = gc.isenabled()
            gc.collect()
            gc.disable()  # as Manager.settle does: the models are acyclic
            try:
                start = time.perf_counter()
                control, drive_ = drive(manager, driver, mode, counts)
                total = time.perf_counter() - start
            finally:
                if was_enabled:
                    gc.enable()
            flow = store.get(JobFlow, NAMESPACE, FLOW_NAME)
            if flow.phase != FlowPhase.SUCCEED or driver.completed != size_of(flows):
                raise SystemExit(
                    f"{shape} {size}: flow is {flow.phase!r} after {driver.completed} jobs"
                )
            events = store.resource_version()
            size_mb = db_size(directory) if store_kind == "sqlite" else None
        finally:
            store.close()
    n = size_of(flows)
    return Result(
        shape=shape,
        entries=n,
        edges=sum(len(f.get("dependsOn", {}).get("targets", [])) for f in flows),
        store=store_kind,
        driver=mode,
        apply_s=apply_s,
        controller_wall_us=control.wall / n * 1e6,
        controller_cpu_us=control.cpu / n * 1e6,
        driver_wall_us=drive_.wall / n * 1e6,
        driver_cpu_us=drive_.cpu / n * 1e6,
        total_wall_s=total,
        syncs=counts.syncs,
        status_writes=counts.status_writes,
        rounds=counts.rounds or counts.steps,
        events=events,
        db_mb=size_mb,
    )


# --- report ----------------------------------------------------------------------------------


def markdown(results: list[Result], meta: dict[str, Any]) -> str:
    lines = [
        f"Engine — Python {meta['python']}, {meta['cpus']} CPUs, {meta['date']}",
        "",
        "| shape | entries | store | driver | controller wall µs/job | controller CPU µs/job "
        "| driver wall µs/job | syncs | status writes | total s | store MB |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        mb = "—" if r.db_mb is None else f"{r.db_mb:.0f}"
        lines.append(
            f"| {r.shape} | {r.entries:,} | {r.store} | {r.driver} | "
            f"{r.controller_wall_us:,.0f} | {r.controller_cpu_us:,.0f} | "
            f"{r.driver_wall_us:,.0f} | {r.syncs:,} | {r.status_writes:,} | "
            f"{r.total_wall_s:.1f} | {mb} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000", help="entries per flow, comma-separated")
    parser.add_argument(
        "--shapes", default="chain,layered", help="chain, layered, fan, for, comma-separated"
    )
    parser.add_argument("--store", choices=("sqlite", "memory", "both"), default="sqlite")
    parser.add_argument(
        "--driver", default="inline", help="inline, rounds, run, or several comma-separated"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    stores = ["sqlite", "memory"] if args.store == "both" else [args.store]
    drivers = args.driver.split(",")
    if unknown := set(drivers) - set(DRIVERS):
        parser.error(f"unknown driver {', '.join(sorted(unknown))}; choose from {DRIVERS}")
    meta = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }
    results = []
    for store_kind in stores:
        for mode in drivers:
            for shape in shapes:
                for size in sizes:
                    result = run_case(shape, size, store_kind, mode)
                    print(
                        f"{shape} {size} {store_kind} {mode}: "
                        f"{result.controller_cpu_us:,.0f} µs CPU/job",
                        file=sys.stderr,
                    )
                    results.append(result)
    print(markdown(results, meta))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({**meta, "results": [asdict(r) for r in results]}, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
