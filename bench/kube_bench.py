"""`vcflow operator` over the Kubernetes API: API requests per job and per flow, flows a
minute, dependency-met → vcjob-created and last-Completed → flow-Succeed latency, for one
flow alone and for many flows at once, on an emulated and (--real) a real control plane.

The emulator (unless --no-emulator): a bare `vcflow server --runtime none --controllers off`
as the API server and, in this process, a fake Volcano job controller
(tests/operator/fakevolcano.py: each vcjob status-patched Pending → Running → Completed at
once).

The real control plane (--real, after the emulator): scripts/cluster/kubecluster.py's
Kubernetes v1.37.2 (etcd, kube-apiserver, kube-controller-manager), Volcano v1.10.0's job
controller and scheduler, and kwok nodes that run each pod for its
`vcflow.test/run-seconds` annotation (--run-seconds, default 0) and end it Succeeded;
deploy/crds and deploy/rbac/operator.yaml applied by the admin, the operator run as the
`vcflow-operator` ServiceAccount's user. Built (or found in ~/.cache/vcflow-cluster) and
started in this run's temp dir, stopped however the run ends (Ctrl-C and SIGTERM included).
kube-apiserver also writes an audit log of the operator's and Volcano's requests. With
`--volcano fake` the cluster starts as it is, then its vc-controller-manager and
vc-scheduler are stopped and the emulator's fake Volcano (step 0, as the admin: not in the
audit log) plays the job controller against kube-apiserver: the operator's throughput on
a real API server, not Volcano's (3-4 vcjobs a second on 2 cores).

In both: one JobTemplate per entry of the flow (one task, one replica, Volcano's scheduler
and queue spelled out, the pod annotated), one `vcflow operator` (leader election on;
--qps N passes --kube-api-qps N, 0 being no limit, the default; `--qps default` passes
nothing: the operator's own default; each phase starts once its /readyz says leader and
synced), and

  alone  one flow;
  load   --flows flows (default 100) created at once (one POST after another).

A flow (--shape): `layered` (default), 5 layers of 4 entries, each entry targeting all 4 of
the layer before (bench/layered20.py); `single`, one entry, no dependencies. Either keeps
its vcjobs (jobRetainPolicy retain). This process watches the vcjobs and the flows (one
clock, its own): an entry's dependencies were met when the watch showed the last of its
targets Completed (the flow's create answered, for the first layer), its vcjob was created
when the watch showed it, Volcano's share is from then to its Completed, and a flow's time
splits exactly into the operator's share (per layer, its last target Completed → its last
vcjob created, plus the last Completed → the flow `Succeed`) and Volcano's (the rest); for
`single`: created → vcjob created (operator), → Completed (Volcano), → Succeed (operator).
Beside it, the mean of the operator's own `vcflow_dependency_met_to_vcjob_created_seconds`
(upstream change handled → create answered). API requests, per vcjob and per flow: on the
emulator the server's /metrics counts less the fake's and this bench's own; on the real API
server the audit log (a watch counted when it starts). CPU seconds of every process from
/proc. bench/README.md has the details.

    .venv/bin/python bench/kube_bench.py                 # emulator, 100 flows x 20 jobs
    .venv/bin/python bench/kube_bench.py --real          # the emulator, then the real one
    .venv/bin/python bench/kube_bench.py --real --flows 20 --qps 50 --json /tmp/kube.json
    .venv/bin/python bench/kube_bench.py --real --no-emulator --volcano fake --shape single \\
        --flows 1000 --qps default                      # issue 26's 1,000-flow burst
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import layered20
from layered20 import FLOW
from tests.operator.fakevolcano import FakeVolcano

REPO = Path(__file__).resolve().parents[1]

_SERVING = re.compile(r"serving /metrics on (http://\S+)")
_HEALTH = re.compile(r"serving .*/readyz.* on (http://\S+)")
_WAITS = "vcflow_dependency_met_to_vcjob_created_seconds"
_REQUESTS = re.compile(
    r'^vcflow_api_requests_total\{code="(\d+)",resource="([^"]*)",verb="([A-Z]+)"\} (\S+)$'
)
_APISERVER_REQUESTS = re.compile(r"^apiserver_request_total\{[^}]*\} (\S+)$")
_DURATIONS = re.compile(
    r'^vcflow_api_request_duration_seconds_(sum|count)\{code="\d+",resource="([^"]*)",'
    r'verb="([A-Z]+)"\} (\S+)$'
)
#: the operator's requests whose time on the API server the report shows
TIMED = (("POST", "jobs"), ("PATCH", "jobflows/status"), ("PATCH", "pods"))
JOBS_ALL = "/apis/batch.volcano.sh/v1alpha1/jobs"
FLOWS_ALL = "/apis/flow.volcano.sh/v1alpha1/jobflows"
OPERATOR_USER = "system:serviceaccount:vcflow-system:vcflow-operator"
# audit verbs as kube-apiserver's metrics (and vcflow server's) name them
_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Shape:
    """A flow the bench runs: its entries in layers, each entry after every entry of the
    layer before (none for the first), one JobTemplate per entry, named as the entry."""

    name: str
    layers: tuple[tuple[str, ...], ...]

    @property
    def entries(self) -> list[str]:
        return [entry for layer in self.layers for entry in layer]

    def targets_of(self, entry: str) -> list[str]:
        for index, layer in enumerate(self.layers):
            if entry in layer:
                return list(self.layers[index - 1]) if index else []
        raise KeyError(entry)

    def flow(self, name: str) -> dict[str, Any]:
        return layered20.flow(name, self.entries, self.targets_of)


SHAPES = {
    #: bench/layered20.py's flow: 5 layers of 4 entries
    "layered": Shape(
        "layered",
        tuple(
            tuple(f"t{layer}{i}" for i in range(layered20.WIDTH))
            for layer in range(layered20.LAYERS)
        ),
    ),
    #: one entry, one vcjob, no dependencies
    "single": Shape("single", (("job",),)),
}
assert SHAPES["layered"].flow("x") == layered20.flow("x")


def template(name: str, run_seconds: str) -> dict[str, Any]:
    """A JobTemplate both control planes run: what Volcano's admission webhook (not in the
    test cluster) would default spelled out, the pod's run time for kwok."""
    container = {"name": "c", "image": "busybox", "command": ["true"]}
    pod = {
        "metadata": {"annotations": {"vcflow.test/run-seconds": run_seconds}},
        "spec": {"restartPolicy": "Never", "containers": [container]},
    }
    task = {"name": "run", "replicas": 1, "template": pod}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": 1,
            "tasks": [task],
        },
    }


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """SIGKILL when this bench dies (Linux PR_SET_PDEATHSIG): a killed bench leaves no
    operator or server behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


class Process:
    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the bench, which stops it in order
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cpu_seconds(pid: int) -> float:
    """user + system CPU of one process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# --------------------------------------------------------------------------------------------
# What this process sees: the vcjobs and the flows, by watch


@dataclass
class Seen:
    uid: str
    added: float  # (monotonic) when the watch showed it
    phases: dict[str, float] = field(default_factory=dict)  # phase → first seen


class Observer:
    """Watches every vcjob and every JobFlow (all namespaces) on `client`: when each vcjob
    appeared and first showed each phase, when each flow first showed `Succeed` or
    `Failed`. Its own requests are counted in `own` (verb, resource)."""

    def __init__(self, client: httpx.Client, own: Counter[tuple[str, str]]) -> None:
        self.client = client
        self.own = own
        self.lock = threading.Condition()
        self.jobs: dict[str, list[Seen]] = {}  # by name, in order of creation
        self.flows: dict[str, tuple[str, float]] = {}  # name → (Succeed|Failed, first seen)
        self.errors: list[str] = []
        self.done = threading.Event()
        self.threads = [
            threading.Thread(target=self._run, args=(JOBS_ALL, "jobs", self._job), daemon=True),
            threading.Thread(
                target=self._run, args=(FLOWS_ALL, "jobflows", self._flow), daemon=True
            ),
        ]
        self.ready = threading.Barrier(len(self.threads) + 1)

    def __enter__(self) -> Observer:
        for thread in self.threads:
            thread.start()
        self.ready.wait(timeout=60)  # both lists answered: nothing after this is missed
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(timeout=5)

    def wait_flows(self, names: set[str], deadline: float) -> set[str]:
        """Block until every flow of `names` ended (or the deadline); those that did not."""
        with self.lock:
            while True:
                pending = {n for n in names if n not in self.flows}
                left = deadline - time.monotonic()
                if not pending or left <= 0:
                    return pending
                self.lock.wait(min(left, 1.0))

    def _run(self, path: str, resource: str, handle: Callable[[dict[str, Any]], None]) -> None:
        ready = False
        while not self.done.is_set():
            try:
                self.own["LIST", resource] += 1
                listed = self.client.get(path)
                listed.raise_for_status()
                body = listed.json()
                for item in body.get("items") or []:
                    handle(item)
                rv = str(body["metadata"]["resourceVersion"])
                if not ready:
                    ready = True
                    self.ready.wait(timeout=60)
                self._watch(path, resource, rv, handle)
            except (httpx.HTTPError, ValueError, KeyError, threading.BrokenBarrierError) as exc:
                if self.done.is_set():
                    return
                self.errors.append(f"{resource}: {type(exc).__name__}: {exc}")
                time.sleep(0.5)

    def _watch(
        self, path: str, resource: str, rv: str, handle: Callable[[dict[str, Any]], None]
    ) -> None:
        """Follow the watch from `rv` until `done`; ValueError on an ERROR event (a 410:
        the caller lists again)."""
        while not self.done.is_set():
            query = {
                "watch": "true",
                "resourceVersion": rv,
                "allowWatchBookmarks": "true",
                "timeoutSeconds": "60",
            }
            self.own["WATCH", resource] += 1
            with self.client.stream("GET", path, params=query, timeout=90) as answer:
                answer.raise_for_status()
                for line in answer.iter_lines():
                    if self.done.is_set():
                        return
                    if not line.strip():
                        continue
                    frame = json.loads(line)
                    obj = frame.get("object") or {}
                    if frame.get("type") == "ERROR":
                        raise ValueError(f"watch ended: {obj.get('code')} {obj.get('message')}")
                    if frame.get("type") in ("ADDED", "MODIFIED"):
                        handle(obj)
                    rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)

    def _job(self, obj: dict[str, Any]) -> None:
        now = time.monotonic()
        meta = obj.get("metadata") or {}
        name, uid = str(meta.get("name")), str(meta.get("uid"))
        phase = str(((obj.get("status") or {}).get("state") or {}).get("phase") or "")
        with self.lock:
            seen = self.jobs.setdefault(name, [])
            found = next((s for s in seen if s.uid == uid), None)
            if found is None:
                found = Seen(uid, now)
                seen.append(found)
            if phase:
                found.phases.setdefault(phase, now)

    def _flow(self, obj: dict[str, Any]) -> None:
        now = time.monotonic()
        name = str((obj.get("metadata") or {}).get("name"))
        phase = ((obj.get("status") or {}).get("state") or {}).get("phase")
        if phase in ("Succeed", "Failed"):
            with self.lock:
                if name not in self.flows:
                    self.flows[name] = (str(phase), now)
                    self.lock.notify_all()


# --------------------------------------------------------------------------------------------
# The two control planes


class Plane:
    """What a phase needs of a control plane: an admin client, the operator, the
    operator's request counts so far, everyone's request total, CPU per process."""

    name = ""
    client: httpx.Client
    operator: Process
    own: Counter[tuple[str, str]]

    def requests(self) -> dict[str, Counter[tuple[str, str]]]:
        """Requests so far by actor ("operator"; on the real one Volcano's too), then by
        (verb, resource)."""
        raise NotImplementedError

    def rates(self, actor: str, begin: float, end: float) -> tuple[float, float]:
        return 0.0, 0.0

    def durations(self) -> dict[tuple[str, str], tuple[float, int]]:
        """(seconds, requests) the API server took so far, by (verb, resource) of TIMED."""
        raise NotImplementedError

    def all_requests(self) -> int:
        raise NotImplementedError

    def pids(self) -> dict[str, int]:
        raise NotImplementedError

    def cpu(self) -> dict[str, float]:
        return {name: cpu_seconds(pid) for name, pid in self.pids().items()}

    def describe(self) -> dict[str, Any]:
        return {}


def _operator_command(args: argparse.Namespace, kubeconfig: Path, *extra: str) -> list[str]:
    """The operator's command line: --kube-api-qps only when --qps is a number (with
    `--qps default`, the operator's own default)."""
    qps = [] if args.qps is None else ["--kube-api-qps", str(args.qps)]
    return [
        args.vcflow, "operator", "--kubeconfig", str(kubeconfig),
        "--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
        *qps, "--log-level", "info", *extra,
    ]  # fmt: skip


class Emulator(Plane):
    """`vcflow server --runtime none --controllers off`, the operator, a fake Volcano."""

    name = "emulator"

    def __init__(self, args: argparse.Namespace, root: Path, stack: contextlib.ExitStack) -> None:
        self.own = Counter()
        state = root / "state"
        # (plain HTTP without a token, as the figures before the default token and TLS were)
        flags = ["--port", "0", "--runtime", "none", "--controllers", "off"]
        flags += ["--log-level", "warning", "--insecure-no-auth"]
        self.server = Process(
            [args.vcflow, "server", "--state-dir", str(state), *flags], root / "server.log"
        )
        stack.callback(self.server.stop)
        deadline = time.monotonic() + 60
        while not (state / "server.json").exists():
            if self.server.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"vcflow server did not start: {self.server.log.read_text()}")
            time.sleep(0.05)
        self.url = str(json.loads((state / "server.json").read_text())["url"])
        self.client = stack.enter_context(httpx.Client(base_url=self.url, timeout=60))
        for name in SHAPES[args.shape].entries:
            body = template(name, args.run_seconds)
            self.client.post(f"{FLOW}/jobtemplates", json=body).raise_for_status()
        command = _operator_command(args, state / "kubeconfig")
        self.operator = Process(command, root / "operator.log")
        stack.callback(self.operator.stop)
        self.fake = stack.enter_context(FakeVolcano(self.url, step=0.0, workers=args.fake_workers))

    def _counts(self) -> Counter[tuple[str, str]]:
        """The server's request counts so far, by (verb, resource)."""
        found: Counter[tuple[str, str]] = Counter()
        self.own["GET", ""] += 1
        for line in self.client.get("/metrics").text.splitlines():
            match = _REQUESTS.match(line)
            if match:
                _code, resource, verb, value = match.groups()
                found[verb, resource] += int(float(value))
        return found

    def requests(self) -> dict[str, Counter[tuple[str, str]]]:
        """The operator's: the server's counts less the fake's and this bench's own."""
        found = self._counts()
        found.subtract(self.own)
        found["PATCH", "jobs/status"] -= self.fake.patches
        found["WATCH", "jobs"] -= self.fake.watches
        return {"operator": found}

    def all_requests(self) -> int:
        return sum(self._counts().values())

    def durations(self) -> dict[tuple[str, str], tuple[float, int]]:
        """From the server's histogram (only the operator sends TIMED's requests)."""
        found: dict[tuple[str, str], tuple[float, int]] = {}
        self.own["GET", ""] += 1
        for line in self.client.get("/metrics").text.splitlines():
            match = _DURATIONS.match(line)
            if match and (match.group(3), match.group(2)) in TIMED:
                kind, resource, verb, value = match.groups()
                seconds, count = found.get((verb, resource), (0.0, 0))
                if kind == "sum":
                    found[verb, resource] = (seconds + float(value), count)
                else:
                    found[verb, resource] = (seconds, count + int(float(value)))
        return found

    def pids(self) -> dict[str, int]:
        return {
            "operator": self.operator.proc.pid,
            "vcflow server": self.server.proc.pid,
            "bench (fake Volcano, watches)": os.getpid(),
        }


def load_kubecluster() -> ModuleType:
    """scripts/cluster/kubecluster.py as a module (scripts/ is not a package)."""
    name = "vcflow_bench_kubecluster"
    if name not in sys.modules:
        path = REPO / "scripts" / "cluster" / "kubecluster.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before exec: its dataclasses look themselves up there
        spec.loader.exec_module(module)
    return sys.modules[name]


AUDIT_POLICY = f"""\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["{OPERATOR_USER}", "volcano"]
- level: None
"""


def _timestamp(stamp: Any) -> float:
    """An audit event's RFC 3339 time (microseconds) as time.time() counts."""
    return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()


class AuditLog:
    """The requests of the operator and of Volcano (vc-controller-manager, vc-scheduler:
    one user, told apart by user agent), read from kube-apiserver's audit log as it grows:
    a request when it completes, a watch when it starts (ResponseStarted)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.counts: dict[str, Counter[tuple[str, str]]] = {}
        self.times: dict[str, list[float]] = {}  # actor → when each request completed
        #: the operator's TIMED requests: (verb, resource) → (seconds, requests)
        self.durations: dict[tuple[str, str], tuple[float, int]] = {}
        self.denied = 0

    def read(self) -> dict[str, Counter[tuple[str, str]]]:
        if self.path.exists():
            with self.path.open("rb") as log:
                log.seek(self.offset)
                data = log.read()
            end = data.rfind(b"\n") + 1
            self.offset += end
            for line in data[:end].splitlines():
                self._event(json.loads(line))
        return {actor: Counter(counts) for actor, counts in self.counts.items()}

    def _event(self, event: dict[str, Any]) -> None:
        verb = str(event.get("verb"))
        if (verb == "watch") != (event.get("stage") == "ResponseStarted"):
            return  # (a watch's end; a non-watch request has no ResponseStarted)
        user = (event.get("user") or {}).get("username")
        agent = str(event.get("userAgent") or "")
        if user == OPERATOR_USER:
            actor = "operator"
        elif "scheduler" in agent.split("/", 1)[0]:
            actor = "vc-scheduler"
        else:
            actor = "vc-controller-manager"
        ref = event.get("objectRef") or {}
        resource = str(ref.get("resource") or "")
        if ref.get("subresource"):
            resource += "/" + str(ref["subresource"])
        self.counts.setdefault(actor, Counter())[_VERBS.get(verb, verb.upper()), resource] += 1
        key = (_VERBS.get(verb, verb.upper()), resource)
        with contextlib.suppress(ValueError):
            done = _timestamp(event.get("stageTimestamp"))
            self.times.setdefault(actor, []).append(done)
            if actor == "operator" and key in TIMED:
                seconds, count = self.durations.get(key, (0.0, 0))
                took = done - _timestamp(event.get("requestReceivedTimestamp"))
                self.durations[key] = (seconds + took, count + 1)
        if actor == "operator" and (event.get("responseStatus") or {}).get("code") == 403:
            self.denied += 1

    def rates(self, actor: str, begin: float, end: float) -> tuple[float, float]:
        """(mean, busiest 10 s) requests a second of `actor` between two time.time()s."""
        times = sorted(t for t in self.times.get(actor, ()) if begin <= t <= end)
        if not times or end <= begin:
            return 0.0, 0.0
        busiest, low = 0, 0
        for high, at in enumerate(times):
            while times[low] < at - 10:
                low += 1
            busiest = max(busiest, high - low + 1)
        return len(times) / (end - begin), busiest / 10


class Real(Plane):
    """scripts/cluster/kubecluster.py's cluster with kube-apiserver's audit log on, the
    operator as the vcflow-operator user."""

    name = "real"

    def __init__(self, args: argparse.Namespace, root: Path, stack: contextlib.ExitStack) -> None:
        kubecluster = load_kubecluster()
        workdir = root / "cluster"
        workdir.mkdir()
        policy, log = workdir / "audit-policy.yaml", workdir / "logs" / "audit.log"
        policy.write_text(AUDIT_POLICY)

        extra = {
            "kube-apiserver": [
                f"--audit-policy-file={policy}",
                f"--audit-log-path={log}",
                "--audit-log-maxsize=0",
            ],
        }
        if args.volcano_qps:
            qps = args.volcano_qps
            extra["vc-controller-manager"] = [
                f"--kube-api-qps={qps}",
                f"--kube-api-burst={2 * qps}",
            ]

        class Audited(kubecluster.Cluster):  # type: ignore[misc,name-defined]
            """kubecluster's Cluster, some components with flags of the bench's (above)."""

            def _spawn(self, name: str, command: list[str], *rest: Any) -> Any:
                return super()._spawn(name, [*command, *extra.get(name, ())], *rest)

        nodes = [
            kubecluster.NodeSpec(f"kwok-node-{i}", pods=str(args.node_pods))
            for i in range(args.nodes)
        ]
        try:
            binaries = kubecluster.build()
            self.cluster = Audited.start(workdir, binaries=binaries, nodes=nodes)
        except (kubecluster.ClusterUnavailable, kubecluster.ClusterError) as error:
            raise SystemExit(f"kube_bench: no real control plane: {error}") from None
        stack.callback(self.cluster.stop)
        for name, flags in extra.items():
            if not set(flags) <= set(self.cluster.processes[name].command):
                raise SystemExit(f"{name} started without {flags}: kubecluster changed")
        #: components the bench stopped (--volcano fake): not in pids()
        self.stopped: set[str] = set()
        self.fake: FakeVolcano | None = None
        if args.volcano == "fake":
            for name in ("vc-controller-manager", "vc-scheduler"):
                self._stop_component(name)
            # the admin's requests: not in the audit log (AUDIT_POLICY), so not the operator's
            self.fake = stack.enter_context(
                FakeVolcano(
                    self.cluster.url,
                    step=0.0,
                    workers=args.fake_workers,
                    token=self.cluster.admin_token,
                    ca_file=str(self.cluster.ca_path),
                )
            )
        self.audit = AuditLog(log)
        self.own = Counter()
        self.client = stack.enter_context(
            httpx.Client(
                base_url=self.cluster.url,
                headers={"Authorization": f"Bearer {self.cluster.admin_token}"},
                verify=self.cluster.ssl_context(),
                timeout=60,
            )
        )
        self._install()
        for name in SHAPES[args.shape].entries:
            body = template(name, args.run_seconds)
            self.client.post(f"{FLOW}/jobtemplates", json=body).raise_for_status()
        kubeconfig = self.cluster.kubeconfig_for("vcflow-operator")
        command = _operator_command(args, kubeconfig, "--lease-namespace", "vcflow-system")
        self.operator = Process(command, root / "operator.log")
        stack.callback(self.operator.stop)

    def _stop_component(self, name: str) -> None:
        """SIGTERM one of kubecluster's processes (SIGKILL after 10 s) and wait for it:
        cluster.stop() later finds it exited and closes its log."""
        process = self.cluster.processes[name]
        process.signal_group(signal.SIGTERM)
        try:
            process.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.signal_group(signal.SIGKILL)
            process.popen.wait(timeout=10)
        self.stopped.add(name)

    def _install(self) -> None:
        """vcflow-system, deploy/crds (Established), deploy/rbac/operator.yaml (in force)."""
        post = self.client.post
        post("/api/v1/namespaces", json={"metadata": {"name": "vcflow-system"}}).raise_for_status()
        crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        names = []
        for path in sorted((REPO / "deploy" / "crds").glob("*.yaml")):
            crd = yaml.safe_load(path.read_text())
            post(crds, json=crd).raise_for_status()
            names.append(crd["metadata"]["name"])
        plural = {
            "ServiceAccount": "serviceaccounts",
            "ClusterRole": "clusterroles",
            "ClusterRoleBinding": "clusterrolebindings",
            "Role": "roles",
            "RoleBinding": "rolebindings",
        }
        rbac = (REPO / "deploy" / "rbac" / "operator.yaml").read_text()
        for obj in yaml.safe_load_all(rbac):
            group = "/api/v1" if obj["apiVersion"] == "v1" else f"/apis/{obj['apiVersion']}"
            space = obj["metadata"].get("namespace")
            base = f"{group}/namespaces/{space}" if space else group
            post(f"{base}/{plural[obj['kind']]}", json=obj).raise_for_status()

        def established(name: str) -> bool:
            conditions = self.client.get(f"{crds}/{name}").json()["status"].get("conditions")
            return any(
                c["type"] == "Established" and c["status"] == "True" for c in conditions or ()
            )

        operator = httpx.Client(
            base_url=self.cluster.url,
            headers={"Authorization": f"Bearer {self.cluster.token_for('vcflow-operator')}"},
            verify=self.cluster.ssl_context(),
        )
        with operator:
            deadline = time.monotonic() + 60
            while not (
                all(established(n) for n in names)
                and operator.get(FLOWS_ALL).status_code == 200
                and operator.get(JOBS_ALL).status_code == 200
            ):
                if time.monotonic() > deadline:
                    raise SystemExit("the CRDs or the operator's RBAC did not take effect")
                time.sleep(0.2)

    def requests(self) -> dict[str, Counter[tuple[str, str]]]:
        return self.audit.read()

    def rates(self, actor: str, begin: float, end: float) -> tuple[float, float]:
        return self.audit.rates(actor, begin, end)

    def durations(self) -> dict[tuple[str, str], tuple[float, int]]:
        self.audit.read()
        return dict(self.audit.durations)

    def all_requests(self) -> int:
        total = 0.0
        for line in self.client.get("/metrics").text.splitlines():
            match = _APISERVER_REQUESTS.match(line)
            if match:
                total += float(match.group(1))
        return int(total)

    def pids(self) -> dict[str, int]:
        found = {"operator": self.operator.proc.pid}
        for name, process in self.cluster.processes.items():
            if process.popen is not None and name not in self.stopped:
                found[name] = process.popen.pid
        found["bench (fake Volcano, watches)" if self.fake else "bench (watches)"] = os.getpid()
        return found

    def describe(self) -> dict[str, Any]:
        return {
            "versions": dict(self.cluster.versions),
            "start_s": self.cluster.timings,
            "volcano": "fake" if self.fake else "real",
        }


# --------------------------------------------------------------------------------------------
# One phase: flows created at once, until every one ended


def operator_waits(operator: Process) -> tuple[float, float]:
    """(sum, count) of the operator's own dependency-met → vcjob-created histogram."""
    found = _SERVING.search(operator.log.read_text(errors="replace"))
    if found is None:
        return 0.0, 0.0
    text = httpx.get(found.group(1) + "/metrics", timeout=30).text
    values = dict(line.rsplit(" ", 1) for line in text.splitlines() if line.startswith(_WAITS))
    return float(values.get(_WAITS + "_sum", 0)), float(values.get(_WAITS + "_count", 0))


def wait_ready(operator: Process, timeout: float = 120) -> None:
    """Until the operator's /readyz says it leads and its controllers resynced: a phase
    measures the work, not the start."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if operator.proc.poll() is not None:
            raise SystemExit(f"vcflow operator exited: {operator.log.read_text()[-2000:]}")
        found = _HEALTH.search(operator.log.read_text(errors="replace"))
        if found is not None:
            with contextlib.suppress(httpx.HTTPError):
                answer = httpx.get(found.group(1) + "/readyz", timeout=5)
                if answer.status_code == 200 and answer.text == "leader, synced":
                    return
        time.sleep(0.1)
    raise SystemExit(f"vcflow operator not ready after {timeout:.0f} s")


def post_flows(plane: Plane, shape: Shape, names: list[str], clients: int) -> dict[str, float]:
    """Create the flows from `clients` threads at once (a burst as many users or a CI
    system make it, not paced by one client's round trips); when each create was answered."""
    created_at: dict[str, float] = {}
    plane.own["POST", "jobflows"] += len(names)

    def post(name: str) -> None:
        plane.client.post(f"{FLOW}/jobflows", json=shape.flow(name)).raise_for_status()
        created_at[name] = time.monotonic()

    with ThreadPoolExecutor(max(1, clients)) as pool:
        list(pool.map(post, names))
    return created_at


def phase(
    plane: Plane,
    observer: Observer,
    shape: Shape,
    names: list[str],
    timeout: float,
    clients: int = 1,
) -> dict[str, Any]:
    seen_before = operator_waits(plane.operator)
    asked_before = plane.requests()
    durations_before = plane.durations()
    all_before = plane.all_requests()
    cpu_before = plane.cpu()
    load_before = os.getloadavg()[0]
    began, clock_began = time.monotonic(), time.time()
    created_at = post_flows(plane, shape, names, clients)
    posted = time.monotonic() - began
    pending = observer.wait_flows(set(names), began + timeout)
    wall, clock_ended = time.monotonic() - began, time.time()
    time.sleep(0.5)  # (the last requests' audit entries, the operator's last writes)
    asked_after = plane.requests()
    durations = {}
    for key, (seconds, count) in plane.durations().items():
        before = durations_before.get(key, (0.0, 0))
        if count > before[1]:
            durations[f"{key[0]} {key[1]}"] = (seconds - before[0]) / (count - before[1])
    by_actor = {a: c - asked_before.get(a, Counter()) for a, c in asked_after.items()}
    asked = by_actor.pop("operator", Counter())
    everyone = plane.all_requests() - all_before
    cpu_after = plane.cpu()
    cpu = {k: cpu_after[k] - cpu_before.get(k, 0.0) for k in cpu_after}
    seen_after = operator_waits(plane.operator)
    with observer.lock:
        jobs = {name: list(seen) for name, seen in observer.jobs.items()}
        ended = dict(observer.flows)
    waits, volcano, running = [], [], []
    final = []  # the flow's last vcjob Completed → the flow shown Succeed
    operator_share, volcano_share = [], []
    entries = shape.entries
    for name in names:
        first = {e: jobs[f"{name}-{e}"][0] for e in entries if f"{name}-{e}" in jobs}
        done = {e: s.phases.get("Completed") for e, s in first.items()}
        for entry, job in first.items():
            if "Completed" in job.phases:
                volcano.append(job.phases["Completed"] - job.added)
            if "Running" in job.phases:
                running.append(job.phases["Running"] - job.added)
            targets = shape.targets_of(entry)
            met: float | None = created_at[name]
            if targets:
                times = [done.get(t) for t in targets]
                met = None if None in times else max(t for t in times if t is not None)
            if met is not None:
                waits.append(max(0.0, job.added - met))
        if len(first) < len(entries) or None in done.values() or name not in ended:
            continue
        # the flow's time, split exactly: per layer, met → last vcjob created (operator),
        # then → last vcjob Completed (Volcano); the last Completed → Succeed (operator).
        # (One entry: created → vcjob created, → Completed, → Succeed.)
        ours = theirs = 0.0
        met_at = created_at[name]
        for layer_entries in shape.layers:
            created = max(first[e].added for e in layer_entries)
            completed = max(done[e] or 0.0 for e in layer_entries)
            ours += max(0.0, created - met_at)
            theirs += max(0.0, completed - max(created, met_at))
            met_at = max(completed, met_at)
        succeed = ended[name][1]
        final.append(max(0.0, succeed - met_at))
        ours += max(0.0, succeed - met_at)
        operator_share.append(ours)
        volcano_share.append(theirs)
    created = sum(1 for name in names for e in entries if f"{name}-{e}" in jobs)
    total = sum(v for v in asked.values() if v > 0)
    seen_sum, seen_count = seen_after[0] - seen_before[0], seen_after[1] - seen_before[1]
    failed = sorted(n for n in names if ended.get(n, ("", 0.0))[0] == "Failed")
    rate_mean, rate_busiest = plane.rates("operator", clock_began, clock_ended)
    others = {}
    for actor, counts in sorted(by_actor.items()):
        if not counts:
            continue  # (stopped before the phase: --volcano fake)
        mean, busiest = plane.rates(actor, clock_began, clock_ended)
        others[actor] = {
            "requests": sum(counts.values()),
            "requests_per_job": sum(counts.values()) / created if created else float("nan"),
            "per_second_mean": mean,
            "per_second_busiest_10s": busiest,
            "by_verb": {
                f"{verb} {resource or '-'}": n for (verb, resource), n in counts.most_common()
            },
        }
    return {
        "flows": len(names),
        "jobs_per_flow": len(entries),
        "jobs": created,
        "posted_s": posted,
        "wall_s": wall,
        "flows_per_minute": len(names) / wall * 60 if not pending else float("nan"),
        "not_finished": sorted(pending),
        "failed": failed,
        "requests": total,
        "requests_per_job": total / created if created else float("nan"),
        "requests_per_flow": total / len(names),
        "requests_per_second_mean": rate_mean,  # (the real plane's audit log only)
        "requests_per_second_busiest_10s": rate_busiest,
        "all_requests_per_job": everyone / created if created else float("nan"),
        "by_verb": {
            f"{verb} {resource or '-'}": n
            for (verb, resource), n in sorted(asked.items(), key=lambda kv: -kv[1])
            if n > 0
        },
        "wait_p50": median(waits),
        "wait_p99": quantile(waits, 0.99),
        "operator_wait_mean": seen_sum / seen_count if seen_count else float("nan"),
        "volcano_p50": median(volcano),
        "volcano_p99": quantile(volcano, 0.99),
        "running_p50": median(running),
        "running_p99": quantile(running, 0.99),
        "final_p50": median(final),
        "final_p99": quantile(final, 0.99),
        "operator_share_mean": statistics.fmean(operator_share) if operator_share else None,
        "volcano_share_mean": statistics.fmean(volcano_share) if volcano_share else None,
        "volcano_requests": others,
        "server_seconds_mean": durations,
        "cpu_s": cpu,
        "load": [load_before, os.getloadavg()[0]],
    }


def run_plane(
    kind: type[Plane], args: argparse.Namespace, root: Path
) -> tuple[dict[str, Any], bool]:
    root.mkdir(parents=True)
    with contextlib.ExitStack() as stack:
        print(f"[kube_bench] {kind.name}: starting", file=sys.stderr, flush=True)
        plane = kind(args, root, stack)  # type: ignore[call-arg]
        observer = stack.enter_context(Observer(plane.client, plane.own))
        wait_ready(plane.operator)
        print(f"[kube_bench] {kind.name}: one flow alone", file=sys.stderr, flush=True)
        shape = SHAPES[args.shape]
        alone = phase(plane, observer, shape, ["alone"], args.timeout)
        many = [f"load-{i:03d}" for i in range(args.flows)]
        print(f"[kube_bench] {kind.name}: {args.flows} flows", file=sys.stderr, flush=True)
        load = phase(plane, observer, shape, many, args.timeout, args.clients)
        twice = sorted(n for n, seen in observer.jobs.items() if len(seen) > 1)
        errors = list(observer.errors)
        fake: FakeVolcano | None = getattr(plane, "fake", None)
        if fake is not None:
            errors += [repr(e) for e in fake.errors]
        denied = plane.audit.denied if isinstance(plane, Real) else 0
        log = plane.operator.log.read_text(errors="replace").splitlines()
        complaints = [line for line in log if re.search(r" (WARNING|ERROR|CRITICAL) ", line)]
        report = {
            "alone": alone,
            "load": load,
            "created_twice": twice,
            "errors": errors,
            "operator_denied": denied,
            "operator_log_warnings": complaints[:20],
            "operator_log_warning_count": len(complaints),
            **plane.describe(),
        }
    ok = not (
        alone["not_finished"] or load["not_finished"] or alone["failed"] or load["failed"]
    ) and not (twice or errors or denied)
    return report, ok


# --------------------------------------------------------------------------------------------


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--flows", type=int, default=100, help="flows in the load phase")
    parser.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        default="layered",
        help="a flow: 5 layers of 4 jobs (layered) or one job (single)",
    )
    parser.add_argument(
        "--qps",
        type=_qps,
        default=0.0,
        help="the operator's --kube-api-qps (0, the default: no limit), or `default`: the flag "
        "not passed, the operator's own default",
    )
    parser.add_argument("--real", action="store_true", help="also on the real control plane")
    parser.add_argument(
        "--volcano",
        choices=("real", "fake"),
        default="real",
        help="on the real plane: Volcano's controller and scheduler, or the fake in the bench",
    )
    parser.add_argument(
        "--no-emulator", action="store_true", help="only the real control plane (with --real)"
    )
    parser.add_argument("--run-seconds", default="0", help="the pods' run time on kwok")
    parser.add_argument("--nodes", type=int, default=2, help="kwok nodes (--real)")
    parser.add_argument("--node-pods", type=int, default=1000, help="pods a kwok node holds")
    parser.add_argument(
        "--volcano-qps",
        type=int,
        default=0,
        help="vc-controller-manager --kube-api-qps (burst twice that; default: Volcano's 50/100)",
    )
    parser.add_argument(
        "--fake-workers",
        type=int,
        default=4,
        help="threads the fake Volcano patches vcjob statuses from (default 4)",
    )
    parser.add_argument(
        "--clients",
        type=int,
        default=1,
        help="threads the load phase's flows are created from (default 1: one after another)",
    )
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs)")
    parser.add_argument("--vcflow", default=str(Path(sys.executable).with_name("vcflow")))
    args = parser.parse_args()
    if args.no_emulator and not args.real:
        parser.error("--no-emulator needs --real")
    if args.volcano == "fake" and not args.real:
        parser.error("--volcano fake is for the real plane: needs --real")
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    root = Path(tempfile.mkdtemp(prefix="vcflow-kube-bench-"))
    report: dict[str, Any] = {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus",
        "cpu": _cpu_model(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "qps": "default" if args.qps is None else args.qps,
        "shape": args.shape,
        "run_seconds": args.run_seconds,
        "flows": args.flows,
        "clients": args.clients,
        "fake_workers": args.fake_workers,
    }
    ok = True
    try:
        if not (args.real and args.no_emulator):
            report["emulator"], good = run_plane(Emulator, args, root / "emulator")
            ok = ok and good
        if args.real:
            report["nodes"] = f"{args.nodes} x {args.node_pods} pods"
            report["volcano"] = args.volcano
            report["real"], good = run_plane(Real, args, root / "real")
            ok = ok and good
    except KeyboardInterrupt:
        print("[kube_bench] interrupted: everything stopped", file=sys.stderr)
        sys.exit(130)
    finally:
        if args.keep:
            print(f"[kube_bench] kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    sys.exit(0 if ok else 1)


def _qps(text: str) -> float | None:
    """--qps: a number, or `default` (None: the flag not passed)."""
    return None if text == "default" else float(text)


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def _ms(value: float | None) -> str:
    if value is None or value != value:
        return "-"
    if value < 0.01:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e3:.0f} ms" if value < 1 else f"{value:.2f} s"


def print_report(report: dict[str, Any]) -> None:
    planes = [p for p in ("emulator", "real") if p in report]
    columns = [(p, phase) for p in planes for phase in ("alone", "load")]
    qps = report["qps"] or "off"
    plays = {"real": "Volcano", "fake": "the bench's fake Volcano"}
    print(
        f"vcflow operator bench, {report['date']}, {report['machine']} ({report['cpu']}), "
        f"{report.get('shape', 'layered')} flows created by {report.get('clients', 1)} "
        f"client(s), the operator's client QPS {qps}, "
        f"pods run {report['run_seconds']} s"
        + (f", {report['nodes']} kwok nodes" if "nodes" in report else "")
        + (f", real plane with {plays[report['volcano']]}" if "volcano" in report else "")
    )
    for plane in planes:
        found = report[plane]
        for label in ("alone", "load"):
            one = found[label]
            load = ", ".join(f"{x:.1f}" for x in one["load"])
            print(
                f"{plane} {label}: {one['flows']} flows x {one['jobs_per_flow']} jobs, "
                f"{one['wall_s']:.1f} s (created in {one['posted_s']:.1f} s), "
                f"{len(one['not_finished'])} not finished, "
                f"{len(one['failed'])} failed; load average {load}"
            )
        print(
            f"{plane}: vcjobs created twice {len(found['created_twice'])}, errors "
            f"{len(found['errors'])}, operator log warnings {found['operator_log_warning_count']}"
            + (f", denied {found['operator_denied']}" if plane == "real" else "")
        )
    head = [f"{plane} {label} ({report[plane][label]['flows']})" for plane, label in columns]
    print()
    print("| | " + " | ".join(head) + " |")
    print("| --- |" + " ---: |" * len(columns))

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        cells = [cell(report[plane][phase]) for plane, phase in columns]
        print(f"| {label} | " + " | ".join(cells) + " |")

    row("dependency met → vcjob created, p50", lambda f: _ms(f["wait_p50"]))
    row("dependency met → vcjob created, p99", lambda f: _ms(f["wait_p99"]))
    row("  inside the operator (its histogram), mean", lambda f: _ms(f["operator_wait_mean"]))
    row("vcjob created → Running (Volcano), p50", lambda f: _ms(f["running_p50"]))
    row("vcjob created → Completed (Volcano), p50", lambda f: _ms(f["volcano_p50"]))
    row("vcjob created → Completed (Volcano), p99", lambda f: _ms(f["volcano_p99"]))
    row("last vcjob Completed → flow Succeed, p50", lambda f: _ms(f["final_p50"]))
    row("last vcjob Completed → flow Succeed, p99", lambda f: _ms(f["final_p99"]))
    row("a flow's time: operator's share, mean", lambda f: _ms(f["operator_share_mean"]))
    row("a flow's time: Volcano's share, mean", lambda f: _ms(f["volcano_share_mean"]))
    row("all flows Succeed after", lambda f: f"{f['wall_s']:.1f} s")
    row("  flows created (by the bench, one at a time) in", lambda f: f"{f['posted_s']:.1f} s")
    row("flows per minute", lambda f: f"{f['flows_per_minute']:.0f}")
    row("operator API requests per flow", lambda f: f"{f['requests_per_flow']:.2f}")
    row("operator API requests per vcjob", lambda f: f"{f['requests_per_job']:.2f}")

    def rate(f: dict[str, Any]) -> str:
        mean, busiest = f.get("requests_per_second_mean"), f.get("requests_per_second_busiest_10s")
        return f"{mean:.0f}/s, busiest 10 s {busiest:.0f}/s" if mean else "-"

    row("operator API requests a second (real: audit log)", rate)
    row("all clients' API requests per vcjob", lambda f: f"{f['all_requests_per_job']:.1f}")
    row("operator CPU per vcjob", lambda f: _ms(f["cpu_s"]["operator"] / f["jobs"]))
    for verb, resource in TIMED:
        key = f"{verb} {resource}"
        row(
            f"API server's time for the operator's {key}, mean",
            lambda f, key=key: _ms(f["server_seconds_mean"].get(key)),
        )
    for actor in ("vc-controller-manager", "vc-scheduler"):

        def volcano(f: dict[str, Any], actor: str = actor) -> str:
            found = f.get("volcano_requests", {}).get(actor)
            if not found:
                return "-"
            return (
                f"{found['requests_per_job']:.1f} ({found['per_second_mean']:.0f}/s, "
                f"busiest 10 s {found['per_second_busiest_10s']:.0f}/s)"
            )

        row(f"{actor} API requests per vcjob (a second)", volcano)
    verbs = sorted(
        {v for plane, phase in columns for v in report[plane][phase]["by_verb"]},
        key=lambda v: -sum(report[p][ph]["by_verb"].get(v, 0) for p, ph in columns),
    )
    for verb in verbs:
        row(
            f"  {verb} per vcjob",
            lambda f, verb=verb: f"{f['by_verb'].get(verb, 0) / f['jobs']:.2f}",
        )
    for plane in planes:
        one = report[plane]["load"]
        parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(one["cpu_s"].items(), key=_by_cpu))
        print(f"\n{plane}, load phase, CPU seconds: {parts}")
        for actor, found in one.get("volcano_requests", {}).items():
            top = list(found["by_verb"].items())[:10]
            parts = ", ".join(f"{verb} {n / one['jobs']:.2f}" for verb, n in top)
            print(f"{plane}, load phase, {actor} requests per vcjob: {parts}")


def _by_cpu(item: tuple[str, float]) -> float:
    return -item[1]


if __name__ == "__main__":
    main()
