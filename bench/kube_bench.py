"""`vcflow operator` over the Kubernetes API: API requests per job and dependency-met →
vcjob-created latency, for one flow alone and for many flows at once, in one run.

Starts a bare `vcflow server --runtime none --controllers off` (the API server), one
`vcflow operator` on its kubeconfig (leader election on, default timings; client QPS limit
off unless --qps) and, in this process, a fake Volcano job controller
(tests/operator/fakevolcano.py: each vcjob status-patched Pending → Running → Completed).
Then 20 JobTemplates, and:

  alone  one flow;
  load   --flows flows (default 100) created at once.

A flow is 5 layers of 4 entries, each entry targeting all 4 of the layer before. An entry's
dependencies were met when the fake's Completed patch of the last of its targets was
answered (the flow's create answer, for the first layer); its vcjob was created when the
fake's watch showed it: one clock, this process's. Beside it, the mean of the operator's own
`vcflow_dependency_met_to_vcjob_created_seconds` (from the upstream change handled to the
create answered): the part of the wait spent inside the operator. API requests are the
server's own counts (its /metrics `vcflow_api_requests_total`) over the phase, less the
requests of the fake and of this bench (counted here): what the operator asked, per vcjob
created.

    .venv/bin/python bench/kube_bench.py                 # 100 flows x 20 jobs
    .venv/bin/python bench/kube_bench.py --flows 20 --json /tmp/kube.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from layered20 import ENTRIES, FLOW, flow, targets_of
from tests.operator.fakevolcano import FakeVolcano

_SERVING = re.compile(r"serving /metrics on (http://\S+)")
_WAITS = "vcflow_dependency_met_to_vcjob_created_seconds"
_REQUESTS = re.compile(
    r'^vcflow_api_requests_total\{code="(\d+)",resource="([^"]*)",verb="([A-Z]+)"\} (\S+)$'
)


def template(name: str) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "command": ["true"]}
    task = {"name": "run", "replicas": 1, "template": {"spec": {"containers": [container]}}}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {"minAvailable": 1, "tasks": [task]},
    }


class Process:
    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(vcflow: str, root: Path) -> tuple[Process, str]:
    state = root / "state"
    # (plain HTTP without a token, as the figures before the default token and TLS were)
    flags = ["--port", "0", "--runtime", "none", "--controllers", "off", "--log-level", "warning"]
    flags.append("--insecure-no-auth")
    server = Process([vcflow, "server", "--state-dir", str(state), *flags], root / "server.log")
    deadline = time.monotonic() + 60
    while not (state / "server.json").exists():
        if server.proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"vcflow server did not start: {server.log.read_text()[-500:]}")
        time.sleep(0.05)
    return server, str(json.loads((state / "server.json").read_text())["url"])


def requests(client: httpx.Client) -> Counter[tuple[str, str]]:
    """The server's request counts so far, by (verb, resource)."""
    found: Counter[tuple[str, str]] = Counter()
    for line in client.get("/metrics").text.splitlines():
        match = _REQUESTS.match(line)
        if match:
            _code, resource, verb, value = match.groups()
            found[verb, resource] += int(float(value))
    return found


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def operator_waits(operator: Process) -> tuple[float, float]:
    """(sum, count) of the operator's own dependency-met → vcjob-created histogram."""
    found = _SERVING.search(operator.log.read_text(errors="replace"))
    if found is None:
        return 0.0, 0.0
    text = httpx.get(found.group(1) + "/metrics", timeout=30).text
    values = dict(line.rsplit(" ", 1) for line in text.splitlines() if line.startswith(_WAITS))
    return float(values.get(_WAITS + "_sum", 0)), float(values.get(_WAITS + "_count", 0))


def phase(
    client: httpx.Client,
    fake: FakeVolcano,
    operator: Process,
    names: list[str],
    timeout: float,
) -> dict[str, Any]:
    own: Counter[tuple[str, str]] = Counter()
    seen_before = operator_waits(operator)
    before = requests(client)
    own["GET", ""] += 1
    fake_before = (fake.patches, fake.watches)
    began = time.monotonic()
    created_at: dict[str, float] = {}
    for name in names:
        client.post(f"{FLOW}/jobflows", json=flow(name)).raise_for_status()
        own["POST", "jobflows"] += 1
        created_at[name] = time.monotonic()
    pending = set(names)
    deadline = began + timeout
    while pending and time.monotonic() < deadline:
        time.sleep(0.25)
        listed = client.get(f"{FLOW}/jobflows").json()
        own["LIST", "jobflows"] += 1
        for item in listed.get("items") or []:
            state = (item.get("status") or {}).get("state") or {}
            if state.get("phase") == "Succeed":
                pending.discard(item["metadata"]["name"])
    wall = time.monotonic() - began
    after = requests(client)
    own["GET", ""] += 1
    asked = after - before
    asked -= own
    asked["PATCH", "jobs/status"] -= fake.patches - fake_before[0]
    asked["WATCH", "jobs"] -= fake.watches - fake_before[1]
    asked = +asked  # (drops what is zero)
    jobs = {job.name: job for job in fake.jobs.values()}
    waits = []
    for name in names:
        for entry in ENTRIES:
            job = jobs.get(f"{name}-{entry}")
            if job is None:
                continue
            targets = [jobs.get(f"{name}-{t}") for t in targets_of(entry)]
            if not targets:
                met: float | None = created_at[name]
            else:
                done = [t.completed_at for t in targets if t is not None]
                met = max(done) if len(done) == len(targets) and None not in done else None
            if met is not None:
                waits.append(max(0.0, job.at - met))
    total = sum(asked.values())
    created = len(names) * len(ENTRIES)
    seen_after = operator_waits(operator)
    seen_sum, seen_count = seen_after[0] - seen_before[0], seen_after[1] - seen_before[1]
    return {
        "flows": len(names),
        "jobs": created,
        "wall_s": wall,
        "not_finished": sorted(pending),
        "requests": total,
        "requests_per_job": total / created,
        "by_verb": {
            f"{verb} {resource or '-'}": n
            for (verb, resource), n in sorted(asked.items(), key=lambda kv: -kv[1])
        },
        "wait_p50": statistics.median(waits) if waits else float("nan"),
        "wait_p99": quantile(waits, 0.99),
        "operator_wait_mean": seen_sum / seen_count if seen_count else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=100)
    parser.add_argument("--qps", type=float, default=0.0, help="operator --kube-api-qps")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--vcflow", default=str(Path(sys.executable).with_name("vcflow")))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vcflow-kube-bench-") as tmp:
        root = Path(tmp)
        server, url = start_server(args.vcflow, root)
        operator = None
        client = httpx.Client(base_url=url, timeout=60)
        try:
            for name in ENTRIES:
                client.post(f"{FLOW}/jobtemplates", json=template(name)).raise_for_status()
            command = [
                args.vcflow, "operator", "--kubeconfig", str(root / "state" / "kubeconfig"),
                "--health-addr", "0", "--metrics-addr", "127.0.0.1:0",
                "--kube-api-qps", str(args.qps), "--log-level", "info",
            ]  # fmt: skip
            operator = Process(command, root / "operator.log")
            with FakeVolcano(url, step=0.0) as fake:
                alone = phase(client, fake, operator, ["alone"], args.timeout)
                many = [f"load-{i:03d}" for i in range(args.flows)]
                load = phase(client, fake, operator, many, args.timeout)
                twice = sum(1 for uids in fake.created().values() if len(uids) > 1)
                errors = [repr(e) for e in fake.errors]
        finally:
            if operator is not None:
                operator.stop()
            server.stop()
            client.close()
    report = {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus",
        "date": time.strftime("%Y-%m-%d"),
        "qps": args.qps,
        "alone": alone,
        "load": load,
        "created_twice": twice,
        "fake_errors": errors,
    }
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    ok = not load["not_finished"] and not alone["not_finished"] and not twice and not errors
    sys.exit(0 if ok else 1)


def print_report(report: dict[str, Any]) -> None:
    alone, load = report["alone"], report["load"]
    qps = report["qps"] or "off"
    print(f"vcflow operator bench, {report['date']}, {report['machine']}, client QPS {qps}")
    for label, found in (("alone", alone), ("load", load)):
        print(
            f"{label}: {found['flows']} flows x {len(ENTRIES)} jobs, ended in "
            f"{found['wall_s']:.1f} s, {len(found['not_finished'])} not finished"
        )
    print(f"vcjobs created twice: {report['created_twice']}")
    print(f"{'':34} {'alone':>10} {'load':>10}")
    print(
        f"{'API requests per job (operator)':34} {alone['requests_per_job']:10.1f} "
        f"{load['requests_per_job']:10.1f}"
    )
    for key, label in (("wait_p50", "dep met -> vcjob created p50 ms"),
                       ("wait_p99", "dep met -> vcjob created p99 ms")):  # fmt: skip
        print(f"{label:34} {alone[key] * 1e3:10.0f} {load[key] * 1e3:10.0f}")
    label = "  as the operator saw it, mean ms"
    a, b = alone["operator_wait_mean"], load["operator_wait_mean"]
    print(f"{label:34} {a * 1e3:10.0f} {b * 1e3:10.0f}")
    verbs = sorted(
        set(alone["by_verb"]) | set(load["by_verb"]), key=lambda k: -load["by_verb"].get(k, 0)
    )
    print("requests per job by verb and resource:")
    for verb in verbs:
        a = alone["by_verb"].get(verb, 0) / alone["jobs"]
        b = load["by_verb"].get(verb, 0) / load["jobs"]
        print(f"  {verb:32} {a:10.2f} {b:10.2f}")


if __name__ == "__main__":
    main()
