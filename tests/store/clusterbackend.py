"""vcflow on the session's real control plane (the `cluster` fixture, tests/cluster/fixtures.py:
kube-apiserver v1.37 on etcd 3.7, kube-controller-manager, Volcano v1.10's controllers and
scheduler, kwok), installed as a cluster runs it, for the store contract suite's "cluster"
backend (`ClusterBackend`: a `KubeStore` on it) and the controller conformance cases on it
(tests/conformance/test_conformance_cluster.py). `VcflowOnCluster` sets up, for a set of
namespaces the tests name:

- the CRDs of deploy/crds (JobFlow, JobTemplate: the cluster installs only Volcano's), once
  per session (`vcflow_crds`, a session fixture tests/conftest.py registers): created if
  missing, waited for until Established and until kube-controller-manager's garbage
  collector collects a JobFlow's dependents (it learns of a CRD installed after its start
  at its next discovery sync, every 30 s: 30-45 s here, once), removed at the session's end
  if it made them;
- `vcflow webhook` as a process of its own, over HTTPS with a test CA, reading the cluster as
  its admin, and deploy/webhook's ValidatingWebhookConfiguration with its `service` turned
  into the process's URL and a namespaceSelector of those namespaces: vcflow's admission
  as a cluster runs it (the API server calls it after the CRDs' schema validation);
- a fence for Volcano (`FENCE`): Volcano's job controller acts on every vcjob it sees (the
  status, a PodGroup, pods), its pod group controller and scheduler on pods with
  `schedulerName: volcano`. A ValidatingAdmissionPolicy refuses every write of the `volcano`
  user in those namespaces, so their objects change by the tests' writes alone (and by
  kube-controller-manager's garbage collector): a real refusal by the server, which Volcano
  logs and retries with backoff;
- the namespaces themselves (but `default`), each with its `default` ServiceAccount (pods
  need it), deleted at `stop`;
- and it waits until no object of the kinds the tests read is left in a namespace being
  deleted (another test's): the contract tests list some kinds across namespaces.

`clean` empties the namespaces of every kind the tests write (a flow unfinished is first
marked Succeed, finalizers are dropped) and waits until the lists are empty: each test
starts from an empty store, as on the other backends. Everything is undone by `stop`.
"""

from __future__ import annotations

import base64
import contextlib
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
import yaml

from vcflow.kubeapi import resources
from vcflow.kubestore import KubeClient, KubeStore

REPO = Path(__file__).resolve().parents[2]
CRDS = sorted((REPO / "deploy" / "crds").glob("*.yaml"))
WEBHOOK_CONFIGURATION = REPO / "deploy" / "webhook" / "validatingwebhookconfiguration.yaml"
#: seconds to wait for the cluster to take a setting (a CRD, a policy, a webhook), for a
#: clean namespace, for the webhook process to listen
DEADLINE = 60.0
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
SERVING = re.compile(r"vcflow webhook: serving (https://\S+) ")
#: what the namespaces are emptied of before each test: the kinds the tests write, flows
#: first (their templates and vcjobs may only go once they are finished or gone)
CLEANED = (
    resources.JOBFLOWS,
    resources.JOBTEMPLATES,
    resources.VCJOBS,
    resources.COMMANDS,
    resources.PODS,
    resources.EVENTS,
)
_BY_PLURAL = {resource.plural: resource for resource in CLEANED}
#: seconds to empty the namespaces (2,000 vcjobs take kube-apiserver ~10 s to delete: its
#: deletecollection removes one object at a time)
CLEAN_DEADLINE = 180.0
FENCE = "vcflow-test-fence-volcano"
MERGE = {"Content-Type": "application/merge-patch+json"}


class SetupError(RuntimeError):
    """The cluster did not take a setting within DEADLINE."""


def wait_for(check: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    """Poll `check` until it returns something truthy (returned); SetupError naming `what`."""
    end = time.monotonic() + deadline
    delay = 0.02
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > end:
            raise SetupError(f"timed out after {deadline:.0f} s waiting for {what}")
        time.sleep(delay)
        delay = min(0.2, delay * 2)


class Admin:
    """An admin (system:masters) httpx client of the cluster, kept for the whole setup."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.http = httpx.Client(
            base_url=cluster.url,
            headers={"Authorization": f"Bearer {cluster.admin_token}"},
            verify=cluster.ssl_context(),
            timeout=30,
        )

    def send(self, method: str, path: str, body: Any = None, **options: Any) -> httpx.Response:
        return self.http.request(method, path, json=body, **options)

    def ok(self, method: str, path: str, body: Any = None, **options: Any) -> Any:
        """The answer's JSON; AssertionError with the server's text unless 2xx."""
        answer = self.send(method, path, body, **options)
        assert answer.is_success, f"{method} {path}: {answer.status_code} {answer.text}"
        return answer.json()

    def get(self, path: str) -> dict[str, Any] | None:
        answer = self.send("GET", path)
        if answer.status_code == 404:
            return None
        assert answer.is_success, f"GET {path}: {answer.status_code} {answer.text}"
        return dict(answer.json())

    def gone(self, path: str) -> bool:
        return self.send("GET", path).status_code == 404

    def close(self) -> None:
        self.http.close()


def _established(admin: Admin, name: str) -> bool:
    found = admin.get(f"{CRD_PATH}/{name}") or {}
    conditions = (found.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def install_crds(admin: Admin) -> list[str]:
    """deploy/crds' CRDs in the cluster, Established; the names of those this created (a
    CRD another test installed is left as it is; one being deleted is waited for first)."""
    made = []
    for path in CRDS:
        crd = yaml.safe_load(path.read_text(encoding="utf-8"))
        name = crd["metadata"]["name"]
        found = admin.get(f"{CRD_PATH}/{name}")
        if found is not None and found["metadata"].get("deletionTimestamp"):
            wait_for(lambda n=name: admin.gone(f"{CRD_PATH}/{n}"), f"CRD {name} deleted")
            found = None
        if found is None:
            answer = admin.send("POST", CRD_PATH, crd)
            if answer.status_code != 409:  # (409: another test made it meanwhile)
                assert answer.status_code == 201, answer.text
                made.append(name)
        wait_for(lambda n=name: _established(admin, n), f"CRD {name} Established")
    for resource in (resources.JOBFLOWS, resources.JOBTEMPLATES):
        wait_for(
            lambda r=resource: admin.send("GET", r.path(None)).status_code == 200,
            f"{resource.plural} served",
        )
    return made


@pytest.fixture(scope="session")
def vcflow_crds(cluster: Any) -> Iterator[list[str]]:
    """deploy/crds installed in the session's cluster, once, and known to its garbage
    collector (`wait_collector`); the names of those made here, deleted at the session's
    end."""
    admin = Admin(cluster)
    made = install_crds(admin)
    try:
        wait_collector(admin)
        yield made
    finally:
        for name in made:
            admin.send("DELETE", f"{CRD_PATH}/{name}")
        admin.close()


def _names(namespaces: Sequence[str]) -> dict[str, Any]:
    return {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "In",
                "values": sorted(namespaces),
            }
        ]
    }


def fence_volcano(admin: Admin, namespaces: Sequence[str], name: str) -> None:
    """A ValidatingAdmissionPolicy (and its binding, both `name`) refusing every write of
    the `volcano` user in `namespaces`; returns once the server enforces it."""
    user = admin.cluster.username("volcano")
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "namespaceSelector": _names(namespaces),
                "resourceRules": [
                    {
                        "apiGroups": ["*"],
                        "apiVersions": ["*"],
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "resources": ["*/*"],  # (every resource and subresource)
                    }
                ],
            },
            "matchConditions": [
                {"name": "volcano", "expression": f"request.userInfo.username == {user!r}"}
            ],
            "validations": [
                {
                    "expression": "false",
                    "message": "Volcano is fenced off from this namespace by the test",
                }
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    admin.ok("POST", f"{ADMISSION}/validatingadmissionpolicies", policy)
    admin.ok("POST", f"{ADMISSION}/validatingadmissionpolicybindings", binding)

    def refused(namespace: str) -> bool:
        probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fence-probe"}}
        answer = admin.send(
            "POST",
            f"/api/v1/namespaces/{namespace}/configmaps",
            probe,
            params={"dryRun": "All"},
            headers={"Impersonate-User": user},
        )
        return answer.status_code in (403, 422) and "fenced off" in answer.text

    for namespace in namespaces:
        wait_for(lambda n=namespace: refused(n), f"the Volcano fence in {namespace}")


def unfence(admin: Admin, name: str) -> None:
    admin.send("DELETE", f"{ADMISSION}/validatingadmissionpolicybindings/{name}")
    admin.send("DELETE", f"{ADMISSION}/validatingadmissionpolicies/{name}")


class Webhook:
    """`vcflow webhook` as a process reading the cluster as its admin, over HTTPS with a
    certificate of a test CA for 127.0.0.1; its output in `workdir`."""

    def __init__(self, cluster: Any, workdir: Path) -> None:
        self.ca = trustme.CA()
        issued = self.ca.issue_cert("127.0.0.1")
        cert, key = workdir / "webhook.crt", workdir / "webhook.key"
        issued.cert_chain_pems[0].write_to_path(str(cert))
        issued.private_key_pem.write_to_path(str(key))
        self.out, self.err = workdir / "webhook.out", workdir / "webhook.err"
        command = [
            sys.executable, "-m", "vcflow", "webhook", "--tls-cert", str(cert),
            "--tls-key", str(key), "--host", "127.0.0.1", "--port", "0",
            "--kubeconfig", str(cluster.kubeconfig), "--log-level", "warning",
        ]  # fmt: skip
        with self.out.open("wb") as stdout, self.err.open("wb") as stderr:
            self.proc = subprocess.Popen(command, stdout=stdout, stderr=stderr)
        try:
            self.url = wait_for(self._serving, "vcflow webhook to listen")
        except BaseException:
            self.stop()
            raise

    def _serving(self) -> str | None:
        if self.proc.poll() is not None:
            raise SetupError(f"vcflow webhook exited: {self.output()}")
        match = SERVING.search(self.out.read_text())
        return match.group(1) if match else None

    def output(self) -> str:
        return self.out.read_text() + self.err.read_text()

    def configuration(self, name: str, namespaces: Sequence[str]) -> dict[str, Any]:
        """deploy/webhook's ValidatingWebhookConfiguration, named `name`, calling this
        process (its URL and CA) for objects in `namespaces` only."""
        found: dict[str, Any] = yaml.safe_load(WEBHOOK_CONFIGURATION.read_text())
        found["metadata"] = {"name": name}
        bundle = self.ca.cert_pem.bytes()
        for webhook in found["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {
                "url": f"{self.url}{path}",
                "caBundle": base64.b64encode(bundle).decode(),
            }
            webhook["namespaceSelector"] = _names(namespaces)
        return found

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def _cyclic_flow() -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "webhook-probe"},
        "spec": {
            "flows": [
                {"name": "a", "dependsOn": {"targets": ["b"]}},
                {"name": "b", "dependsOn": {"targets": ["a"]}},
            ]
        },
    }


def wait_collector(admin: Admin, namespace: str = "default") -> None:
    """Return once kube-controller-manager's garbage collector collects the dependents of
    a JobFlow: it learns of a CRD installed after its start at its next discovery sync
    (every 30 s; 30-45 s seen here), and until then leaves a deleted flow's vcjobs in place."""
    flows = resources.JOBFLOWS.path(namespace)
    owner = admin.ok("POST", flows, _probe_flow())
    name = owner["metadata"]["name"]
    dependent = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "generateName": "vcflow-test-gc-probe-",
            "ownerReferences": [
                {
                    "apiVersion": "flow.volcano.sh/v1alpha1",
                    "kind": "JobFlow",
                    "name": name,
                    "uid": owner["metadata"]["uid"],
                }
            ],
        },
    }
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    made = admin.ok("POST", path, dependent)["metadata"]["name"]
    admin.ok("DELETE", f"{flows}/{name}")
    try:
        wait_for(lambda: admin.gone(f"{path}/{made}"), "the garbage collector", 120.0)
    finally:
        admin.send("DELETE", f"{path}/{made}")


def _probe_flow() -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"generateName": "vcflow-test-gc-probe-"},
        "spec": {"flows": [{"name": "a"}]},
    }


class VcflowOnCluster:
    """vcflow installed in `cluster` for `namespaces` (the module docstring); `start()`
    once, `clean()` before each test, `stop()` at the end."""

    def __init__(self, cluster: Any, namespaces: Sequence[str], workdir: Path) -> None:
        self.cluster = cluster
        self.namespaces = tuple(namespaces)
        self.workdir = workdir
        self.admin = Admin(cluster)
        self.suffix = secrets.token_hex(3)
        self.fence = f"{FENCE}-{self.suffix}"
        self.hook_name = f"vcflow-test-webhook-{self.suffix}"
        self.webhook: Webhook | None = None
        self.made_namespaces: list[str] = []
        self.timings: dict[str, float] = {}

    def start(self) -> VcflowOnCluster:
        try:
            self._timed("namespaces", self._make_namespaces)
            self._timed("fence", lambda: fence_volcano(self.admin, self.namespaces, self.fence))
            self._timed("webhook", self._start_webhook)
            self._timed("others", self._wait_others)
            self._timed("clean", self.clean)
        except BaseException:
            self.stop()
            raise
        return self

    def _timed(self, name: str, step: Callable[[], object]) -> None:
        began = time.monotonic()
        step()
        self.timings[name] = round(time.monotonic() - began, 2)

    def _make_namespaces(self) -> None:
        for namespace in self.namespaces:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            answer = self.admin.send("POST", "/api/v1/namespaces", body)
            if answer.status_code == 201:
                self.made_namespaces.append(namespace)
            else:
                assert answer.status_code == 409, answer.text
        for namespace in self.namespaces:
            wait_for(
                lambda n=namespace: self.admin.get(
                    f"/api/v1/namespaces/{n}/serviceaccounts/default"
                ),
                f"ServiceAccount {namespace}/default",
            )

    def _wait_others(self) -> None:
        """Wait until no object of CLEANED's kinds is left in a namespace being deleted."""

        def left() -> list[str]:
            spaces = self.admin.ok("GET", "/api/v1/namespaces")["items"]
            ending = {
                n["metadata"]["name"] for n in spaces if n["metadata"].get("deletionTimestamp")
            }
            return [
                f"{resource.plural} {item['metadata']['namespace']}/{item['metadata']['name']}"
                for resource in CLEANED
                for item in self.admin.ok("GET", resource.path(None))["items"]
                if item["metadata"].get("namespace") in ending
            ]

        wait_for(lambda: not left(), "the namespaces being deleted to empty", CLEAN_DEADLINE)

    def _start_webhook(self) -> None:
        self.webhook = Webhook(self.cluster, self.workdir)
        configuration = self.webhook.configuration(self.hook_name, self.namespaces)
        self.admin.ok("POST", f"{ADMISSION}/validatingwebhookconfigurations", configuration)

        def refused(namespace: str) -> bool:
            answer = self.admin.send(
                "POST",
                resources.JOBFLOWS.path(namespace),
                _cyclic_flow(),
                params={"dryRun": "All"},
            )
            return answer.status_code == 422 and "is not DAG" in answer.text

        for namespace in self.namespaces:
            wait_for(lambda n=namespace: refused(n), f"vcflow webhook's reviews in {namespace}")

    # --- per test ---------------------------------------------------------------------

    def client(self) -> KubeClient:
        """A new client of the cluster as its admin, its CA trusted."""
        return KubeClient.for_url(
            self.cluster.url,
            token=self.cluster.admin_token,
            ca_file=str(self.cluster.ca_path),
            timeout=30,
            qps=0,  # (no client-side limit: the tests make bursts of writes)
        )

    def store(self, **options: Any) -> KubeStore:
        """A new KubeStore on the cluster as its admin (`options`: KubeStore's)."""
        return KubeStore(self.client(), **options)

    def _left(self) -> list[tuple[resources.APIResource, dict[str, Any]]]:
        """The objects of CLEANED in the namespaces (one list of each kind)."""
        found = []
        for resource in CLEANED:
            items = self.admin.ok("GET", resource.path(None))["items"]
            found += [
                (resource, item)
                for item in items
                if item["metadata"].get("namespace") in self.namespaces
            ]
        return found

    def clean(self) -> None:
        """Empty the namespaces of CLEANED's kinds; return once every list is empty."""
        left = self._left()
        for resource, item in left:
            meta = item["metadata"]
            path = resource.path(meta["namespace"], meta["name"])
            if resource is resources.JOBFLOWS and _unfinished(item):
                self.admin.send(
                    "PATCH",
                    f"{path}/status",
                    {"status": {"state": {"phase": "Succeed"}}},
                    headers=MERGE,
                )
            if meta.get("finalizers"):
                self.admin.send("PATCH", path, {"metadata": {"finalizers": None}}, headers=MERGE)
        held = sorted({(r.plural, i["metadata"]["namespace"]) for r, i in left})
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
        for resource in CLEANED:  # (in order: flows first)
            for namespace in self.namespaces:
                if (resource.plural, namespace) in held:
                    self.admin.send("DELETE", resource.path(namespace), options)
        paths = [_BY_PLURAL[plural].path(namespace) for plural, namespace in held]

        def emptied() -> bool:
            return not any(self.admin.ok("GET", p, params={"limit": "1"})["items"] for p in paths)

        try:
            wait_for(emptied, f"{', '.join(self.namespaces)} emptied", CLEAN_DEADLINE)
        except SetupError as exc:
            still = [
                f"{r.plural} {i['metadata']['namespace']}/{i['metadata']['name']}"
                for r, i in self._left()
            ]
            raise SetupError(f"{exc}: {len(still)} left, {', '.join(still[:10])}") from None

    # --- the end ------------------------------------------------------------------------

    def stop(self) -> None:
        """Undo `start`: the webhook's configuration and process, the fence, what is left in
        the namespaces, the namespaces this made."""
        admin = self.admin
        with contextlib.suppress(Exception):
            admin.send("DELETE", f"{ADMISSION}/validatingwebhookconfigurations/{self.hook_name}")
        if self.webhook is not None:
            self.webhook.stop()
        with contextlib.suppress(Exception):
            self.clean()
        unfence(admin, self.fence)
        for namespace in self.made_namespaces:
            admin.send("DELETE", f"/api/v1/namespaces/{namespace}")
        admin.close()


def _unfinished(flow: dict[str, Any]) -> bool:
    """Whether vcflow's admission refuses to delete the flow (compatibility row 11)."""
    phase = ((flow.get("status") or {}).get("state") or {}).get("phase")
    return phase in ("Pending", "Running")


class ClusterBackend:
    """A context manager: a new KubeStore on `on_cluster`'s cluster (the contract suite's
    "cluster" backend)."""

    def __init__(self, on_cluster: VcflowOnCluster) -> None:
        self.store = on_cluster.store()

    def __enter__(self) -> KubeStore:
        return self.store

    def __exit__(self, *exc_info: object) -> None:
        self.store.close()


@contextlib.contextmanager
def started(cluster: Any, namespaces: Sequence[str], workdir: Path) -> Iterator[VcflowOnCluster]:
    on_cluster = VcflowOnCluster(cluster, namespaces, workdir).start()
    try:
        yield on_cluster
    finally:
        on_cluster.stop()
