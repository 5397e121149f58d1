"""Flow-aware scheduling with `vcflow run` (docs/scheduling.md): four cases, each run with
today's behaviour (no `schedulingPolicy`, one queue) and with the policy, in the same run.

  handover  `--capacity nvidia.com/gpu=2`: flow A `prep -> train -> eval` (2-GPU jobs)
            against flow B, a stream of 2-GPU jobs; the gap between A's stages, with and
            without `handover`, and B's completion (the competitor's loss)
  dags      random 20-entry DAGs, lognormal durations, capacity 2-8 CPUs: makespan divided
            by the lower bound max(critical path, work / capacity), with the entries listed
            in a random topological order and reversed, `jobOrder` FlowOrder vs CriticalPath
  queues    queues weighted 3:1, both backlogged with short 1-CPU jobs: each queue's share
            of the CPU-seconds while both are backlogged
  misfit    `p1 (1 cpu) -> p2 (4 cpu)` on 2 CPUs: the seconds of work done before the flow
            is held (`admission: Hold`) or p2 is found unschedulable (today)

Every job is `sh -c` that appends `<name> start|end <unix time>` to a log file and sleeps its
duration, so times are the jobs' own (not the status' 1-second stamps). Each `vcflow run`
gets a fresh state directory.

    .venv/bin/python bench/scheduling_bench.py                 # every case
    .venv/bin/python bench/scheduling_bench.py --cases dags --dags 50 --parallel 3

Standard library only (plus the vcflow executable next to this interpreter, or --vcflow).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

CASES = ("handover", "dags", "queues", "misfit")
NS = "default"


# --------------------------------------------------------------------------- manifests


@dataclass
class Job:
    """One entry: its JobTemplate is named after it."""

    name: str
    seconds: float
    deps: tuple[str, ...] = ()
    requests: dict[str, str] = field(default_factory=lambda: {"cpu": "1"})
    queue: str | None = None


def template(job: Job, log: Path) -> dict:
    script = (
        f'echo "{job.name} start $(date +%s.%N)" >> {log}; sleep {job.seconds:.3f}; '
        f'echo "{job.name} end $(date +%s.%N)" >> {log}'
    )
    spec: dict = {
        "minAvailable": 1,
        "schedulerName": "volcano",
        "tasks": [
            {
                "name": "main",
                "replicas": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "image": "busybox:1.36",
                                "command": ["sh", "-c", script],
                                "resources": {
                                    "requests": dict(job.requests),
                                    "limits": dict(job.requests),
                                },
                            }
                        ],
                    }
                },
            }
        ],
    }
    if job.queue:
        spec["queue"] = job.queue
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": job.name, "namespace": NS},
        "spec": spec,
    }


def flow(name: str, jobs: Sequence[Job], policy: dict | None = None, **spec: object) -> dict:
    entries = []
    for job in jobs:
        entry: dict = {"name": job.name}
        if job.deps:
            entry["dependsOn"] = {"targets": list(job.deps)}
        entries.append(entry)
    body: dict = {"flows": entries, "jobRetainPolicy": "retain", **spec}
    if policy:
        body["schedulingPolicy"] = policy
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": NS},
        "spec": body,
    }


def queue(name: str, weight: int) -> dict:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight},
    }


def write(directory: Path, objects: Iterable[dict]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for i, obj in enumerate(objects):
        (directory / f"{i:04d}.json").write_text(json.dumps(obj))


# --------------------------------------------------------------------------- running


@dataclass
class Run:
    """What one `vcflow run` did: each job's (start, end) from its own log, exit code."""

    times: dict[str, tuple[float, float | None]]
    code: int
    wall: float
    state_dir: Path

    def start(self, name: str) -> float:
        return self.times[name][0]

    def end(self, name: str) -> float:
        found = self.times[name][1]
        if found is None:
            raise RuntimeError(f"job {name} did not end")
        return found


def run_vcflow(
    vcflow: str, objects: list[dict], capacity: str, timeout: float, log: Path, work: Path
) -> Run:
    manifests = work / "manifests"
    write(manifests, objects)
    state = work / "state"
    began = time.perf_counter()
    proc = subprocess.run(
        [
            vcflow,
            "--state-dir",
            str(state),
            "run",
            "-f",
            str(manifests),
            "--no-live",
            "--capacity",
            capacity,
            "--timeout",
            str(timeout),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - began
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr[-2000:])
    return Run(read_log(log), proc.returncode, wall, state)


def read_log(log: Path) -> dict[str, tuple[float, float | None]]:
    times: dict[str, list[float | None]] = {}
    if not log.exists():
        return {}
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        name, what, stamp = parts
        slot = times.setdefault(name, [None, None])
        slot[0 if what == "start" else 1] = float(stamp)
    return {n: (s or 0.0, e) for n, (s, e) in times.items()}


def one(vcflow: str, build, capacity: str, timeout: float) -> Run:
    """Build the objects with the log path of a fresh directory, run them."""
    work = Path(tempfile.mkdtemp(prefix="vcflow-sched-"))
    log = work / "jobs.log"
    return run_vcflow(vcflow, build(log), capacity, timeout, log, work)


# --------------------------------------------------------------------------- cases


def case_handover(args: argparse.Namespace) -> list[str]:
    gpu = {"cpu": "1", "nvidia.com/gpu": "2"}
    stage = args.unit * 2

    def build(policy: dict | None):
        def objects(log: Path) -> list[dict]:
            a = [
                Job("prep", stage, (), gpu),
                Job("train", stage, ("prep",), gpu),
                Job("eval", stage, ("train",), gpu),
            ]
            b = [Job(f"rival{i}", args.unit * 3, (), gpu) for i in range(args.rivals)]
            return [
                *(template(j, log) for j in a + b),
                flow("a", a, policy),
                flow("b", b),
            ]

        return objects

    lines = [
        "handover: flow a prep->train->eval (2 GPUs each) vs flow b, "
        f"{args.rivals} rival 2-GPU jobs; capacity nvidia.com/gpu=2"
    ]
    for label, policy in (("today", None), ("handover", {"handover": {"holdSeconds": 60}})):
        gaps, a_done, b_done = [], [], []
        for _ in range(args.repeat):
            run = one(args.vcflow, build(policy), "cpu=8,nvidia.com/gpu=2", args.timeout)
            gaps.append(
                max(run.start("train") - run.end("prep"), run.start("eval") - run.end("train"))
            )
            first = min(s for s, _ in run.times.values())
            a_done.append(run.end("eval") - first)
            b_done.append(max(run.end(f"rival{i}") for i in range(args.rivals)) - first)
        lines.append(
            f"  {label:9} largest gap between a's stages {_med(gaps):6.2f} s   "
            f"a done {_med(a_done):6.2f} s   b done {_med(b_done):6.2f} s"
        )
    return lines


def random_dag(rng: random.Random, n: int, unit: float) -> list[Job]:
    """n entries in a random topological order; each depends on 0-3 earlier ones;
    lognormal durations (median `unit`, sigma 0.6, within [0.2, 6] units)."""
    jobs: list[Job] = []
    for i in range(n):
        earlier = [j.name for j in jobs]
        deps = tuple(rng.sample(earlier, min(len(earlier), rng.choice((0, 1, 1, 2, 3)))))
        seconds = min(max(rng.lognormvariate(0, 0.6), 0.2), 6.0) * unit
        jobs.append(Job(f"e{i:02d}", round(seconds, 3), deps))
    return jobs


def bound(jobs: Sequence[Job], capacity: int, measured: dict[str, float]) -> float:
    """max(critical path, work / capacity), with each job's measured duration."""
    finish: dict[str, float] = {}
    for job in jobs:  # (topological order)
        finish[job.name] = measured[job.name] + max((finish[d] for d in job.deps), default=0)
    return max(max(finish.values()), sum(measured.values()) / capacity)


def case_dags(args: argparse.Namespace) -> list[str]:
    rng = random.Random(args.seed)
    dags = [(random_dag(rng, 20, args.unit), rng.randint(2, 8)) for _ in range(args.dags)]
    variants = [
        (order, name, policy)
        for order in ("listed", "reversed")
        for name, policy in (("FlowOrder", None), ("CriticalPath", {"jobOrder": "CriticalPath"}))
    ]

    def measure(item: tuple[int, str, str, dict | None]) -> tuple[str, str, float]:
        index, order, name, policy = item
        jobs, cap = dags[index]
        listed = list(jobs) if order == "listed" else _reversed_topological(jobs)

        def objects(log: Path) -> list[dict]:
            return [*(template(j, log) for j in jobs), flow("dag", listed, policy)]

        run = one(args.vcflow, objects, f"cpu={cap}", args.timeout)
        measured = {n: (e or s) - s for n, (s, e) in run.times.items()}
        makespan = max(e or 0 for _, e in run.times.values()) - min(
            s for s, _ in run.times.values()
        )
        return order, name, makespan / bound(jobs, cap, measured)

    items = [(i, o, n, p) for i in range(len(dags)) for o, n, p in variants]
    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(measure, items))
    lines = [
        f"dags: {args.dags} random 20-entry DAGs, capacity 2-8 cpu, seed {args.seed}; "
        "makespan / max(critical path, work / capacity)"
    ]
    for order, name, _ in variants:
        ratios = sorted(r for o, n, r in results if o == order and n == name)
        lines.append(
            f"  {order:8} {name:12} median {statistics.median(ratios):.3f}   "
            f"p90 {ratios[int(0.9 * (len(ratios) - 1))]:.3f}   max {ratios[-1]:.3f}"
        )
    return lines


def _reversed_topological(jobs: Sequence[Job]) -> list[Job]:
    """The entries listed last-first wherever the dependencies allow (a flow's list order
    does not have to be topological; reversing it is the worst list order for FlowOrder)."""
    return list(reversed(jobs))


def case_queues(args: argparse.Namespace) -> list[str]:
    per_queue = args.backlog

    def build(weighted: bool):
        def objects(log: Path) -> list[dict]:
            hi = [
                Job(f"hi{i:03d}", args.unit, queue="hi" if weighted else None)
                for i in range(per_queue)
            ]
            lo = [
                Job(f"lo{i:03d}", args.unit, queue="lo" if weighted else None)
                for i in range(per_queue)
            ]
            queues = [queue("hi", 3), queue("lo", 1)] if weighted else []
            return [*queues, *(template(j, log) for j in hi + lo), flow("lo", lo), flow("hi", hi)]

        return objects

    lines = [
        f"queues: hi (weight 3) and lo (weight 1), {per_queue} 1-cpu jobs each of "
        f"{args.unit:g} s, capacity cpu=4; share of cpu-seconds while both wait"
    ]
    for label, weighted in (("one queue", False), ("3:1", True)):
        run = one(args.vcflow, build(weighted), "cpu=4", args.timeout)
        share = _share(run.times, "hi")
        lines.append(f"  {label:9} hi {share:5.1%}   lo {1 - share:5.1%}")
    return lines


def _share(times: dict[str, tuple[float, float | None]], prefix: str) -> float:
    """`prefix` jobs' part of the cpu-seconds until the first queue's last job started
    (after that only one queue has work waiting)."""
    last_start = {q: max(s for n, (s, _) in times.items() if n.startswith(q)) for q in ("hi", "lo")}
    window_end = min(last_start.values())
    begin = min(s for s, _ in times.values())
    used = {"hi": 0.0, "lo": 0.0}
    for name, (start, end) in times.items():
        stop = min(end or window_end, window_end)
        if stop > start:
            used[name[:2]] += stop - max(start, begin)
    total = used["hi"] + used["lo"]
    return used[prefix] / total if total else math.nan


def case_misfit(args: argparse.Namespace) -> list[str]:
    def build(policy: dict | None):
        def objects(log: Path) -> list[dict]:
            jobs = [Job("p1", args.unit), Job("p2", args.unit, ("p1",), {"cpu": "4"})]
            return [*(template(j, log) for j in jobs), flow("misfit", jobs, policy)]

        return objects

    lines = [
        "misfit: p1 (1 cpu) -> p2 (4 cpu) on cpu=2; work done before the flow stops making progress"
    ]
    for label, policy in (("today", None), ("Hold", {"admission": "Hold"})):
        run = one(args.vcflow, build(policy), "cpu=2", timeout=args.unit * 4)
        work = sum((e or time.time()) - s for s, e in run.times.values())
        lines.append(
            f"  {label:9} {work:5.2f} s of work, jobs started: {sorted(run.times) or 'none'}"
        )
    return lines


def _med(values: Sequence[float]) -> float:
    return statistics.median(values)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--unit", type=float, default=1.0, help="seconds of a unit job")
    parser.add_argument("--dags", type=int, default=50)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--parallel", type=int, default=2, help="DAG runs at once")
    parser.add_argument("--rivals", type=int, default=6)
    parser.add_argument("--backlog", type=int, default=40, help="jobs per queue")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--vcflow", default=str(Path(sys.executable).with_name("vcflow")))
    args = parser.parse_args(argv)
    wanted = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(wanted) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    print(
        f"# {platform.node()} {platform.machine()} {os.cpu_count()} cpus, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        flush=True,
    )
    for name in wanted:
        for line in globals()[f"case_{name}"](args):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
