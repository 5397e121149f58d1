"""`vcflow server` under load: many flows submitted through the API at once.

Starts a real `vcflow server --port 0` on a fresh state directory, creates 20 JobTemplates
(each one task of `sh -c 'echo $HOSTNAME >> runs.log'`, cpu request "0") and then, in the
same run:

  idle   one flow of the templates, alone on the server;
  load   --flows flows (default 200) created at once by --clients threads (default 16).

A flow is 5 layers of 4 entries, every entry of a layer targeting all 4 of the layer before.
While each phase runs, a probe thread GETs one JobFlow every 20 ms and times it (API latency
under that load); the creates are timed too. A watcher on the vcjobs (one streaming watch
from the resourceVersion before the phase) notes when each vcjob is first seen (ADDED) and
when it is first seen Completed; an entry's dependencies were met when the last of its
targets was seen Completed (its flow's create answer for the first layer), so
"dependency met -> vcjob created" is measured as a watching client sees it, from the same
clock. At the end every pod name must be in runs.log exactly once: none lost, none run twice.

    .venv/bin/python bench/server_bench.py                 # 200 flows x 20 jobs
    .venv/bin/python bench/server_bench.py --flows 50 --json /tmp/server.json

Needs httpx (a dev dependency) and the vcflow executable next to this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from layered20 import ENTRIES, FLOW, flow, targets_of

JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"


def template(name: str, log: Path) -> dict[str, Any]:
    command = ["sh", "-c", f'echo "$HOSTNAME" >> {log}']
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {
            "minAvailable": 1,
            "tasks": [
                {
                    "name": "run",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "busybox",
                                    "command": command,
                                    "resources": {"requests": {"cpu": "0"}},
                                }
                            ],
                        }
                    },
                }
            ],
        },
    }


class Server:
    def __init__(self, vcflow: str, state: Path) -> None:
        self.state = state
        self.proc = subprocess.Popen(
            # (plain HTTP without a token, as the figures before the default token and TLS)
            [
                vcflow,
                "server",
                "--state-dir",
                str(state),
                "--port",
                "0",
                "--log-level",
                "warning",
                "--insecure-no-auth",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(state.parent / "server.err", "wb"),  # noqa: SIM115
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        info = state / "server.json"
        while not info.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = (state.parent / "server.err").read_text()
                raise SystemExit(f"vcflow server did not start: {err.strip()[-500:]}")
            time.sleep(0.05)
        self.url = json.loads(info.read_text())["url"]
        self.client = httpx.Client(base_url=self.url, timeout=30)
        while True:
            try:
                if self.client.get("/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("vcflow server never became ready")
            time.sleep(0.05)

    def stop(self) -> None:
        self.client.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class JobWatch(threading.Thread):
    """One watch on the vcjobs: when each was first seen, and first seen Completed."""

    def __init__(self, url: str, since: str) -> None:
        super().__init__(daemon=True)
        self.url, self.since = url, since
        self.created: dict[str, float] = {}
        self.completed: dict[str, float] = {}
        self.stopping = threading.Event()

    def run(self) -> None:
        rv = self.since
        with httpx.Client(base_url=self.url, timeout=httpx.Timeout(30, read=None)) as client:
            while not self.stopping.is_set():
                params = {
                    "watch": "true",
                    "resourceVersion": rv,
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": "30",
                }
                with client.stream("GET", JOBS, params=params) as answer:
                    for line in answer.iter_lines():
                        if not line:
                            continue
                        now = time.perf_counter()
                        event = json.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":
                            raise SystemExit(f"watch failed: {obj.get('message')}")
                        rv = obj["metadata"].get("resourceVersion", rv)
                        if event["type"] == "BOOKMARK":
                            continue
                        name = obj["metadata"]["name"]
                        self.created.setdefault(name, now)
                        phase = ((obj.get("status") or {}).get("state") or {}).get("phase")
                        if phase == "Completed":
                            self.completed.setdefault(name, now)
                        if self.stopping.is_set():
                            return


class Probe(threading.Thread):
    """GET one object every 20 ms and time each answer."""

    def __init__(self, url: str, path: str) -> None:
        super().__init__(daemon=True)
        self.url, self.path = url, path
        self.times: list[float] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self.stopping.wait(0.02):
                start = time.perf_counter()
                client.get(self.path)
                self.times.append(time.perf_counter() - start)


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0, "p50": float("nan"), "p99": float("nan")}
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50": statistics.median(ordered), "p99": p99}


def phase(server: Server, names: list[str], clients: int, timeout: float) -> dict[str, Any]:
    """Create the flows `names` at once; wait until each is Succeed (or Failed)."""
    rv = server.client.get(f"{FLOW}/jobflows").json()["metadata"]["resourceVersion"]
    watch = JobWatch(server.url, rv)
    watch.start()
    probe = Probe(server.url, f"{FLOW}/jobtemplates/t00")
    probe.start()
    created_at: dict[str, float] = {}
    create_times: list[float] = []
    lock = threading.Lock()

    def create(name: str) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            start = time.perf_counter()
            answer = client.post(f"{FLOW}/jobflows", json=flow(name))
            end = time.perf_counter()
            if answer.status_code != 201:
                raise SystemExit(f"create {name}: {answer.status_code} {answer.text[:300]}")
            with lock:
                created_at[name] = end
                create_times.append(end - start)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(create, names))
    submitted = time.perf_counter() - start
    pending, phases = set(names), {}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for item in server.client.get(f"{FLOW}/jobflows").json()["items"]:
            name = item["metadata"]["name"]
            got = ((item.get("status") or {}).get("state") or {}).get("phase")
            if name in pending and got in ("Succeed", "Failed"):
                pending.discard(name)
                phases[name] = got
        time.sleep(0.5)
    wall = time.perf_counter() - start
    probe.stopping.set()
    watch.stopping.set()
    probe.join()
    lags = []
    for name in names:
        for entry in ENTRIES:
            job = f"{name}-{entry}"
            deps = [watch.completed.get(f"{name}-{t}") for t in targets_of(entry)]
            if job not in watch.created or any(d is None for d in deps):
                continue
            met = max(deps) if deps else created_at[name]  # type: ignore[type-var]
            lags.append(max(0.0, watch.created[job] - met))
    return {
        "flows": len(names),
        "jobs": len(names) * len(ENTRIES),
        "succeeded": sum(1 for p in phases.values() if p == "Succeed"),
        "not_finished": sorted(pending),
        "submit_s": submitted,
        "wall_s": wall,
        "api_get": percentiles(probe.times),
        "api_create": percentiles(create_times),
        "dependency_met_to_created": percentiles(lags),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--vcflow", default=str(Path(sys.executable).with_name("vcflow")))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vcflow-server-bench-") as tmp:
        root = Path(tmp)
        log = root / "runs.log"
        log.touch()
        server = Server(args.vcflow, root / "state")
        try:
            for name in ENTRIES:
                answer = server.client.post(f"{FLOW}/jobtemplates", json=template(name, log))
                answer.raise_for_status()
            idle = phase(server, ["idle-0"], 1, args.timeout)
            load = phase(
                server, [f"load-{i:03d}" for i in range(args.flows)], args.clients, args.timeout
            )
        finally:
            server.stop()
        runs = Counter(log.read_text().split())
        expected = {
            f"{flow}-{e}-run-0"
            for flow in ["idle-0"] + [f"load-{i:03d}" for i in range(args.flows)]
            for e in ENTRIES
        }
        report = {
            "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus",
            "date": time.strftime("%Y-%m-%d"),
            "idle": idle,
            "load": load,
            "pods_expected": len(expected),
            "pods_missing": len(expected - set(runs)),
            "pods_run_twice": sum(1 for n, c in runs.items() if c > 1),
            "pods_unexpected": len(set(runs) - expected),
        }
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    ok = (
        not load["not_finished"]
        and load["succeeded"] == args.flows
        and report["pods_missing"] == 0
        and report["pods_run_twice"] == 0
    )
    sys.exit(0 if ok else 1)


def print_report(report: dict[str, Any]) -> None:
    idle, load = report["idle"], report["load"]
    print(f"vcflow server bench, {report['date']}, {report['machine']}")
    print(
        f"load: {load['flows']} flows x {len(ENTRIES)} jobs = {load['jobs']} jobs; "
        f"submitted in {load['submit_s']:.2f} s, all ended in {load['wall_s']:.1f} s; "
        f"{load['succeeded']} Succeed, {len(load['not_finished'])} not finished"
    )
    print(
        f"pods: {report['pods_expected']} expected, {report['pods_missing']} missing, "
        f"{report['pods_run_twice']} run twice, {report['pods_unexpected']} unexpected"
    )
    print(f"{'ms':32} {'idle p50':>9} {'idle p99':>9} {'load p50':>9} {'load p99':>9}")
    for key, label in (
        ("api_get", "API GET one JobTemplate"),
        ("api_create", "API create JobFlow"),
        ("dependency_met_to_created", "dependency met -> vcjob created"),
    ):
        a, b = idle[key], load[key]
        print(
            f"{label:32} {a['p50'] * 1e3:9.1f} {a['p99'] * 1e3:9.1f} "
            f"{b['p50'] * 1e3:9.1f} {b['p99'] * 1e3:9.1f}"
        )


if __name__ == "__main__":
    main()
