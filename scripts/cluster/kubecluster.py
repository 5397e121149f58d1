"""A real Kubernetes + Volcano control plane for tests, benchmarks and demos, built from the Go
module proxy and run as plain processes on 127.0.0.1: no containers, no kubelet, no images.

- etcd, kube-apiserver and kube-controller-manager (Kubernetes v1.37.2);
- Volcano v1.10.0's vc-controller-manager (its jobflow and jobtemplate controllers off: vcflow is
  the JobFlow controller) and vc-scheduler (its default configuration, in a file it watches and
  in ConfigMap volcano-system/volcano-scheduler-configmap; `set_scheduler_conf` changes both),
  with Volcano's CRDs for Job, PodGroup, Queue, Command and Numatopology;
- kwok, which stands in for the kubelets: it keeps fake nodes Ready and moves the pods bound to
  them Pending → Running → Succeeded (or Failed, with the exit code a test chooses) through the
  Stage objects in scripts/cluster/kwok/.

`build()` builds every binary once into a cache outside the repository; `Cluster.start(workdir)`
starts everything and returns when the cluster can run a Volcano Job; `Cluster.stop()` ends it.
Standard library only (plus `cryptography` for the certificates). docs/test-cluster.md has the
versions, figures, and how to start it by hand:

    python scripts/cluster/kubecluster.py build
    python scripts/cluster/kubecluster.py up [--dir D]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import functools
import hashlib
import http.client
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
GO_DIR = HERE / "go"
CRD_DIR = HERE / "crds"
KWOK_DIR = HERE / "kwok"

Log = Callable[[str], None]

# The service range of the cluster, and the pod range kwok hands pod IPs out of.
SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/16"
# The annotation kwok manages its nodes by (the one kwok's docs use).
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
# Pod annotations the kwok stages read (scripts/cluster/kwok/pod-complete.yaml, pod-fail.yaml).
RUN_SECONDS = "vcflow.test/run-seconds"
EXIT_CODE = "vcflow.test/exit-code"


def _say(line: str) -> None:
    print(f"[kubecluster] {line}", file=sys.stderr, flush=True)


class ClusterUnavailable(RuntimeError):
    """A piece of the cluster could not be had (Go missing or too old, the Go module proxy
    refused or could not be reached, a build failed): tests skip with `str(error)`."""


class ClusterError(RuntimeError):
    """The cluster did not come up, or a wait ran past its deadline; the message names what
    was waited for and ends with the tail of the component's log."""


# --------------------------------------------------------------------------------------------
# Building


@dataclass(frozen=True)
class Component:
    """One Go module directory under scripts/cluster/go/ and the binaries built from it."""

    name: str
    module: str  # the module whose version names the build (required in go.mod)
    binaries: Mapping[str, str]  # binary name → package to build
    ldflags: tuple[str, ...] = ()  # -X flags; "{version}" is replaced

    @property
    def directory(self) -> Path:
        return GO_DIR / self.name

    @property
    def version(self) -> str:
        """The version go.mod requires of `module`."""
        text = (self.directory / "go.mod").read_text(encoding="utf-8")
        found = re.search(rf"^\s*(?:require\s+)?{re.escape(self.module)}\s+(v\S+)", text, re.M)
        if found is None:
            raise ClusterUnavailable(f"{self.directory}/go.mod does not require {self.module}")
        return found.group(1)

    def flags(self) -> str:
        version = self.version
        major, minor = version.lstrip("v").split(".")[:2]
        extra = [
            f.format(version=version, major=major, minor=minor, bare=version.lstrip("v"))
            for f in self.ldflags
        ]
        return " ".join(["-s", "-w", *extra])

    def key(self) -> str:
        """`<name>-<version>-<hash>`: the hash covers go.mod, go.sum, the Go files and the
        linker flags, so any change to what is built builds anew."""
        digest = hashlib.sha256()
        for path in sorted(self.directory.iterdir()):
            if path.is_file() and (path.name in ("go.mod", "go.sum") or path.suffix == ".go"):
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        digest.update(self.flags().encode())
        return f"{self.name}-{self.version}-{digest.hexdigest()[:12]}"


_KUBE_VERSION_FLAGS = tuple(
    f"-X {package}.{var}={value}"
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
    for var, value in (
        ("gitVersion", "{version}"),
        ("gitMajor", "{major}"),
        ("gitMinor", "{minor}"),
        ("gitTreeState", "clean"),
    )
)

COMPONENTS: tuple[Component, ...] = (
    Component("etcd", "go.etcd.io/etcd/server/v3", {"etcd": "."}),
    Component(
        "kube",
        "k8s.io/kubernetes",
        {
            "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
            "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
        },
        _KUBE_VERSION_FLAGS,
    ),
    Component(
        "volcano",
        "volcano.sh/volcano",
        {
            "vc-controller-manager": "volcano.sh/volcano/cmd/controller-manager",
            "vc-scheduler": "volcano.sh/volcano/cmd/scheduler",
        },
        (
            "-X volcano.sh/volcano/pkg/version.Version={version}",
            # the commit the proxy gives for the tag (its .info Origin.Hash)
            "-X volcano.sh/volcano/pkg/version.GitSHA=c601aed1f0bbedc254eaafed5dc57b0cc90fb60c",
        ),
    ),
    Component("kwok", "sigs.k8s.io/kwok", {"kwok": "sigs.k8s.io/kwok/cmd/kwok"}),
)


def cache_root() -> Path:
    """`$VCFLOW_CLUSTER_CACHE`, else ~/.cache/vcflow-cluster."""
    given = os.environ.get("VCFLOW_CLUSTER_CACHE")
    return Path(given).expanduser() if given else Path.home() / ".cache" / "vcflow-cluster"


def versions() -> dict[str, str]:
    """Each component's version, as go.mod requires it: {"kube": "v1.37.2", ...}."""
    return {c.name: c.version for c in COMPONENTS}


def _go() -> str:
    found = shutil.which("go")
    if found is None:
        raise ClusterUnavailable(
            "Go is not installed (no `go` on PATH): the test cluster is built from the Go "
            "module proxy and needs Go 1.26 or later"
        )
    return found


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    env["CGO_ENABLED"] = "0"
    env.setdefault("GOTOOLCHAIN", "local")  # never download a toolchain behind the user's back
    # go.sum is committed: a build must not change it, and must fail when it is incomplete.
    env["GOFLAGS"] = " ".join([*env.get("GOFLAGS", "").split(), "-mod=readonly"])
    return env


# What go prints when a module cannot be had: the proxy's refusal (403/404/410 with its
# "server response"), no network, GOPROXY=off, a go.mod asking for a newer Go.
_REFUSED = re.compile(
    r"^.*(?:\b40[34] |\b410 |server response:|not available|module lookup disabled|"
    r"dial tcp|no such host|i/o timeout|connection refused|TLS handshake|"
    r"requires go >=).*$",
    re.M,
)


def _explain_failure(component: Component, output: str, code: int, proxy: str) -> str:
    tail = "\n".join(output.strip().splitlines()[-15:])
    reasons = list(dict.fromkeys(m.group(0).strip() for m in _REFUSED.finditer(output)))[:4]
    what = f"{component.name} {component.version} (scripts/cluster/go/{component.name})"
    if any("requires go >=" in r for r in reasons):
        return f"{what}: this Go is too old: {reasons[0]}"
    if reasons:
        return (
            f"{what}: a module could not be had from the Go module proxy (GOPROXY={proxy}): "
            + " | ".join(reasons)
        )
    return f"{what}: go build exited {code}:\n{tail}"


def _build_component(component: Component, root: Path, log: Log) -> dict[str, Path]:
    final = root / component.key()
    wanted = {name: final / "bin" / name for name in component.binaries}
    if all(path.is_file() for path in wanted.values()):
        return wanted
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{component.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building the same thing
        if all(path.is_file() for path in wanted.values()):
            return wanted
        go = _go()
        staging = Path(tempfile.mkdtemp(prefix=f".{component.key()}-", dir=root))
        try:
            started = time.monotonic()
            log(f"building {component.name} {component.version} into {final}")
            for name, package in component.binaries.items():
                one = time.monotonic()
                command = [
                    go,
                    "build",
                    "-trimpath",
                    "-ldflags",
                    component.flags(),
                    "-o",
                    str(staging / "bin" / name),
                    package,
                ]
                done = subprocess.run(
                    command,
                    cwd=component.directory,
                    env=_go_env(),
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode != 0:
                    proxy = subprocess.run(
                        [go, "env", "GOPROXY"], capture_output=True, text=True, check=False
                    ).stdout.strip()
                    output = done.stdout + done.stderr
                    raise ClusterUnavailable(
                        _explain_failure(component, output, done.returncode, proxy)
                    )
                log(f"  {name}: {time.monotonic() - one:.0f} s")
            seconds = time.monotonic() - started
            go_version = subprocess.run(
                [go, "env", "GOVERSION"], capture_output=True, text=True, check=False
            ).stdout.strip()
            (staging / "build.json").write_text(
                json.dumps(
                    {
                        "component": component.name,
                        "module": component.module,
                        "version": component.version,
                        "binaries": dict(component.binaries),
                        "go": go_version,
                        "seconds": round(seconds, 1),
                        "built": datetime.datetime.now(datetime.UTC).isoformat(),
                    },
                    indent=2,
                )
                + "\n"
            )
            if final.exists():
                shutil.rmtree(final)
            staging.rename(final)
            log(f"built {component.name} {component.version} in {seconds:.0f} s")
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return wanted


def build(*, cache: Path | None = None, log: Log = _say) -> dict[str, Path]:
    """Build every binary once (what is in the cache is reused) and return binary name → path:
    etcd, kube-apiserver, kube-controller-manager, vc-controller-manager, vc-scheduler, kwok.

    The cache is `cache` or `cache_root()`, one directory per `<component>-<version>-<hash>`.
    Raises ClusterUnavailable naming what could not be had."""
    root = cache or cache_root()
    found: dict[str, Path] = {}
    started = time.monotonic()
    for component in COMPONENTS:
        found.update(_build_component(component, root, log))
    log(f"binaries ready in {time.monotonic() - started:.1f} s ({root})")
    return found


# --------------------------------------------------------------------------------------------
# Certificates, tokens, kubeconfigs


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _make_certificates(directory: Path) -> None:
    """ca.crt/ca.key, apiserver.crt/.key (localhost, 127.0.0.1, the kubernetes Service's
    names and IP), sa.key/sa.pub (service-account token signing)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    def pem_key(key: Any) -> bytes:
        return bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )

    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    later = now + datetime.timedelta(days=30)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vcflow-test-cluster-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    service_ip = next(iter(ipaddress.IPv4Network(SERVICE_CIDR).hosts()))
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [
        x509.DNSName(name)
        for name in (
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        )
    ]
    names += [x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")), x509.IPAddress(service_ip)]
    serving = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    (directory / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    _write_private(directory / "ca.key", pem_key(ca_key))
    (directory / "apiserver.crt").write_bytes(serving.public_bytes(serialization.Encoding.PEM))
    _write_private(directory / "apiserver.key", pem_key(key))
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_private(directory / "sa.key", pem_key(sa_key))
    (directory / "sa.pub").write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


@dataclass(frozen=True)
class User:
    """An actor of the static token file: `name` is what RBAC sees."""

    name: str
    groups: tuple[str, ...] = ()


def _service_account(namespace: str, name: str) -> User:
    """A static-token user named as the service account is, with its groups: deploy/rbac's
    bindings (subjects: ServiceAccount) apply to it as they are."""
    return User(
        f"system:serviceaccount:{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}"),
    )


USERS: Mapping[str, User] = {
    "admin": User("admin", ("system:masters",)),
    # the bootstrap policy binds this name (system:kube-controller-manager ClusterRole)
    "kube-controller-manager": User("system:kube-controller-manager"),
    "volcano": User("volcano"),  # bound to cluster-admin by start()
    "kwok": User("kwok"),  # bound to cluster-admin by start()
    # spare: nothing binds these; tests apply deploy/rbac/*.yaml (subjects in vcflow-system)
    "vcflow-operator": _service_account("vcflow-system", "vcflow-operator"),
    "vcflow-webhook": _service_account("vcflow-system", "vcflow-webhook"),
}


def _kubeconfig(url: str, ca: Path, user: str, token: str) -> str:
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        "- name: vcflow-test\n"
        "  cluster:\n"
        f"    server: {url}\n"
        f"    certificate-authority: {json.dumps(str(ca))}\n"
        "users:\n"
        f"- name: {user}\n"
        "  user:\n"
        f"    token: {token}\n"
        "contexts:\n"
        f"- name: {user}@vcflow-test\n"
        "  context:\n"
        "    cluster: vcflow-test\n"
        f"    user: {user}\n"
        f"current-context: {user}@vcflow-test\n"
    )


def _free_ports(count: int) -> list[int]:
    """`count` distinct free TCP ports on 127.0.0.1 (held together so they differ)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


# --------------------------------------------------------------------------------------------
# Processes and waiting


def kill_with_parent() -> None:  # pragma: no cover - runs in the child
    """In the child before exec: SIGKILL when the process that started it dies, so a test run
    that is killed does not leave a control plane behind (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


@dataclass
class Process:
    name: str
    command: list[str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = None

    def start(self, env: Mapping[str, str] | None = None, *, die_with_parent: bool = True) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed by stop()
        self._log.write(f"$ {' '.join(self.command)}\n".encode())
        self._log.flush()
        self.popen = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() signals the group
            preexec_fn=kill_with_parent if die_with_parent and sys.platform == "linux" else None,
            cwd=self.log_path.parent,
            env={**os.environ, **(env or {})},
        )

    def exited(self) -> int | None:
        return None if self.popen is None else self.popen.poll()

    def signal_group(self, signum: int) -> None:
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signum)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())


def _wait(
    what: str,
    check: Callable[[], Any],
    *,
    timeout: float,
    process: Process | None = None,
    interval: float = 0.2,
) -> Any:
    """Poll `check` until it returns something truthy and return that. On the deadline, or if
    `process` exits, raise ClusterError naming `what`, the last error, and the log's tail."""
    end = time.monotonic() + timeout
    last = ""
    while True:
        try:
            found = check()
        except (OSError, http.client.HTTPException, ValueError, KeyError) as error:
            found, last = None, f"{type(error).__name__}: {error}"
        if found:
            return found
        code = process.exited() if process else None
        if process is not None and code is not None:
            raise ClusterError(
                f"{process.name} exited with {code} while waiting for {what}\n"
                f"--- tail of {process.log_path} ---\n{process.tail()}"
            )
        if time.monotonic() > end:
            message = f"timed out after {timeout:.0f} s waiting for {what}"
            if last:
                message += f" (last error: {last})"
            if process is not None:
                message += f"\n--- tail of {process.log_path} ---\n{process.tail()}"
            raise ClusterError(message)
        time.sleep(interval)


def wait_until(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll `check` every 0.2 s until it returns something truthy (returned), else raise
    ClusterError("timed out after N s waiting for <what>")."""
    return _wait(what, check, timeout=timeout)


# --------------------------------------------------------------------------------------------
# The cluster


@dataclass(frozen=True)
class NodeSpec:
    """A fake node kwok keeps Ready (capacity = allocatable)."""

    name: str
    cpu: str = "32"
    memory: str = "128Gi"
    pods: str = "110"
    gpus: int = 8  # nvidia.com/gpu; 0: none
    labels: Mapping[str, str] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        resources = {"cpu": self.cpu, "memory": self.memory, "pods": self.pods}
        if self.gpus:
            resources["nvidia.com/gpu"] = str(self.gpus)
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "annotations": {
                    KWOK_NODE_ANNOTATION: "fake",
                    "node.alpha.kubernetes.io/ttl": "0",
                },
                "labels": {
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/hostname": self.name,
                    "kubernetes.io/os": "linux",
                    "node-role.kubernetes.io/agent": "",
                    "type": "kwok",
                    **self.labels,
                },
            },
            "status": {"capacity": resources, "allocatable": dict(resources)},
        }


DEFAULT_NODES: tuple[NodeSpec, ...] = (NodeSpec("kwok-node-0"), NodeSpec("kwok-node-1"))

# vc-scheduler v1.10.0's built-in configuration (pkg/scheduler/util.go DefaultSchedulerConf),
# which the cluster writes to a file vc-scheduler watches (--scheduler-conf) and, as
# Volcano's installer does, to ConfigMap volcano-system/volcano-scheduler-configmap.
SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
SCHEDULER_NAMESPACE = "volcano-system"
SCHEDULER_CONFIGMAP = "volcano-scheduler-configmap"
SCHEDULER_CONF_KEY = "volcano-scheduler.conf"
# the line vc-scheduler logs (at -v=2) each time it has loaded its configuration
_CONF_LOADED = re.compile(
    r"Successfully loaded Scheduler conf, actions: \[[^]]*\], plugins: \[([^]]*)\]"
)

# What start() runs, as build() names the binaries.
BINARIES = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "vc-controller-manager",
    "vc-scheduler",
    "kwok",
)
# The loopback ports start() takes (all free ones, chosen at start).
_PORTS = (
    "etcd",
    "etcd-peer",
    "apiserver",
    "kube-controller-manager",
    "vc-controller-manager",
    "vc-scheduler",
    "vc-scheduler-metrics",
    "kwok",
)

# vc-controller-manager's controllers in v1.10.0 but jobflow-controller and
# jobtemplate-controller (its --controllers cannot combine "*" with "-name").
VOLCANO_CONTROLLERS = ("job-controller", "pg-controller", "queue-controller", "gc-controller")
# kube-controller-manager: its on-by-default set, as a real cluster runs it (among them
# garbage-collector-controller, namespace-controller, serviceaccount-controller).
KUBE_CONTROLLERS = ("*",)


class Cluster:
    """A running control plane. `Cluster.start(workdir)` makes one; `stop()` ends it.

    Attributes: `url` (https://127.0.0.1:PORT), `ca_path` (the CA of the serving certificate),
    `admin_token`, `kubeconfig` (the admin's), `workdir`, `versions`, `timings` (seconds per
    start phase), `processes` (name → Process, whose `log_path` is in workdir/logs)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.url = ""
        self.ca_path = workdir / "pki" / "ca.crt"
        self.kubeconfig = workdir / "kubeconfig"
        self.tokens: dict[str, str] = {}
        self.processes: dict[str, Process] = {}
        self.timings: dict[str, float] = {}
        self.versions = versions()
        self._ssl: ssl.SSLContext | None = None
        self._stopped = False
        self._die_with_parent = True

    # ---- public API

    @classmethod
    def start(
        cls,
        workdir: Path | str,
        *,
        binaries: Mapping[str, Path] | None = None,
        nodes: Sequence[NodeSpec] = DEFAULT_NODES,
        timeout: float = 180.0,
        etcd_fsync: bool = True,
        die_with_parent: bool = True,
        log: Log = _say,
    ) -> Cluster:
        """Start etcd, kube-apiserver, the Volcano CRDs, kube-controller-manager,
        vc-controller-manager, vc-scheduler and kwok (with `nodes`) on 127.0.0.1, and return
        once nodes are Ready, the `default` Queue is Open and the `default` ServiceAccount
        exists. `binaries` defaults to `build()`. Everything is written under `workdir`
        (certificates, tokens, kubeconfigs, etcd's data, logs/<component>.log). Raises
        ClusterError (everything started is stopped first).

        `die_with_parent`: the components get SIGKILL when the thread that started them
        ends (Linux PR_SET_PDEATHSIG), so a killed test run leaves nothing behind; start from
        a thread that outlives the cluster, or pass False (then only stop() ends them).
        `etcd_fsync=False` runs etcd with --unsafe-no-fsync."""
        workdir = Path(workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        found = dict(binaries) if binaries is not None else build(log=log)
        cluster = cls(workdir)
        cluster._die_with_parent = die_with_parent
        try:
            cluster._start(found, tuple(nodes), timeout, etcd_fsync, log)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    @property
    def admin_token(self) -> str:
        return self.tokens["admin"]

    def token_for(self, user: str) -> str:
        """The bearer token of one of USERS' keys: admin, kube-controller-manager, volcano,
        kwok, vcflow-operator, vcflow-webhook."""
        if user not in self.tokens:
            raise KeyError(f"no user {user!r}; known: {', '.join(self.tokens)}")
        return self.tokens[user]

    def kubeconfig_for(self, user: str) -> Path:
        """A kubeconfig file for `user` (a key of USERS); written on first use."""
        path = self.workdir / "kubeconfigs" / f"{user}.yaml"
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            _write_private(
                path,
                _kubeconfig(
                    self.url, self.ca_path, USERS[user].name, self.token_for(user)
                ).encode(),
            )
        return path

    def username(self, user: str) -> str:
        """The name RBAC sees for `user` (a key of USERS), e.g. vcflow-operator →
        system:serviceaccount:vcflow-system:vcflow-operator."""
        return USERS[user].name

    def ssl_context(self) -> ssl.SSLContext:
        """An SSL context that trusts the cluster's CA."""
        if self._ssl is None:
            self._ssl = ssl.create_default_context(cafile=str(self.ca_path))
        return self._ssl

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        user: str = "admin",
        content_type: str = "application/json",
        timeout: float = 30.0,
    ) -> tuple[int, Any]:
        """One API request as `user`; (status, decoded JSON body or text). `body`: a dict/list
        (sent as JSON), str or bytes (sent as is, with `content_type`)."""
        parsed = urllib.parse.urlsplit(self.url)
        connection = http.client.HTTPSConnection(
            parsed.hostname or "127.0.0.1",
            parsed.port,
            context=self.ssl_context(),
            timeout=timeout,
        )
        headers = {
            "Authorization": f"Bearer {self.token_for(user)}",
            "Accept": "application/json",
        }
        data: bytes | None = None
        if body is not None:
            if isinstance(body, bytes):
                data = body
            elif isinstance(body, str):
                data = body.encode()
            else:
                data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        text = raw.decode(errors="replace")
        try:
            return response.status, json.loads(text) if text else None
        except ValueError:
            return response.status, text

    @property
    def scheduler_conf_path(self) -> Path:
        return self.workdir / "scheduler" / SCHEDULER_CONF_KEY

    def set_scheduler_conf(self, conf: str, timeout: float = 30.0) -> None:
        """Give vc-scheduler another configuration, as an admin editing Volcano's ConfigMap
        would: the ConfigMap updated, the file vc-scheduler watches replaced (it reloads it
        at once, no restart); returns once vc-scheduler logged the new plugin list."""
        path = f"/api/v1/namespaces/{SCHEDULER_NAMESPACE}/configmaps/{SCHEDULER_CONFIGMAP}"
        status, answer = self.request(
            "PATCH",
            path,
            {"data": {SCHEDULER_CONF_KEY: conf}},
            content_type="application/merge-patch+json",
        )
        if status != 200:
            raise ClusterError(f"PATCH {path}: {status} {answer}")
        log = self.log_path("vc-scheduler")
        before = len(_CONF_LOADED.findall(log.read_text(errors="replace")))
        wanted = " ".join(_plugin_names(conf))  # (Go's %v of a []string)
        self._write_scheduler_conf(conf)

        def reloaded() -> bool:
            found = _CONF_LOADED.findall(log.read_text(errors="replace"))
            return len(found) > before and found[-1] == wanted

        _wait(
            "vc-scheduler: its configuration reloaded",
            reloaded,
            timeout=timeout,
            process=self.processes["vc-scheduler"],
        )

    def _write_scheduler_conf(self, conf: str) -> None:
        """Replace the file at once (a rename: vc-scheduler never reads half of it)."""
        path = self.scheduler_conf_path
        path.parent.mkdir(exist_ok=True)
        staged = path.with_name(f".{path.name}.new")
        staged.write_text(conf)
        os.replace(staged, path)

    def log_path(self, component: str) -> Path:
        return self.workdir / "logs" / f"{component}.log"

    def log_tail(self, component: str, lines: int = 40) -> str:
        return self.processes[component].tail(lines)

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM every component's process group (the last started first), SIGKILL what is
        left after `grace` seconds. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        end = time.monotonic() + grace
        # the clients first, then kube-apiserver, then etcd: none logs its server vanishing
        waves = [
            [p for n, p in self.processes.items() if n not in ("kube-apiserver", "etcd")],
            [p for n, p in self.processes.items() if n == "kube-apiserver"],
            [p for n, p in self.processes.items() if n == "etcd"],
        ]
        for wave in waves:
            running = [p for p in wave if p.exited() is None]
            for process in running:
                process.signal_group(signal.SIGTERM)
            for process in running:
                assert process.popen is not None
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.popen.wait(timeout=max(0.1, end - time.monotonic()))
        for process in self.processes.values():
            process.signal_group(signal.SIGKILL)  # what the group still holds, if anything
            if process.popen is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.popen.wait(timeout=5)
            process.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- starting

    def _spawn(self, name: str, command: list[str], kubeconfig: Path | None = None) -> Process:
        process = Process(name, command, self.log_path(name))
        self.processes[name] = process
        # KUBECONFIG too: Volcano's vGPU device code builds a client of its own from it
        # (else it logs a failure to read ~/.kube/config).
        process.start(
            {"KUBECONFIG": str(kubeconfig)} if kubeconfig else None,
            die_with_parent=self._die_with_parent,
        )
        return process

    def _ok(self, path: str) -> bool:
        status, _ = self.request("GET", path, timeout=5)
        return status == 200

    def _has_condition(self, path: str, kind: str) -> bool:
        """Whether the object at `path` has the condition `kind` with status True."""
        return _condition(self.request("GET", path, timeout=5)[1], kind)

    def _start(
        self,
        binaries: dict[str, Path],
        nodes: tuple[NodeSpec, ...],
        timeout: float,
        etcd_fsync: bool,
        log: Log,
    ) -> None:
        missing = [n for n in BINARIES if not Path(binaries.get(n, "")).is_file()]
        if missing:
            raise ClusterUnavailable(f"binaries missing: {', '.join(missing)}")
        deadline = _Deadline(timeout)
        began = mark = time.monotonic()

        def phase(name: str) -> None:
            nonlocal mark
            now = time.monotonic()
            self.timings[name] = round(now - mark, 2)
            log(f"{name}: {now - mark:.1f} s")
            mark = now

        ports = dict(zip(_PORTS, _free_ports(len(_PORTS)), strict=True))
        self.url = f"https://127.0.0.1:{ports['apiserver']}"
        self._write_credentials()
        phase("certificates")
        etcd_url = self._start_etcd(binaries, ports, etcd_fsync, deadline)
        phase("etcd")
        self._start_apiserver(binaries, ports, etcd_url, deadline)
        phase("kube-apiserver")
        self._bootstrap(nodes, deadline)
        phase("crds-rbac-nodes")
        self._start_controllers(binaries, ports)
        self._wait_controllers(ports, nodes, deadline)
        phase("controllers-nodes-ready")
        self._wait_queue_and_account(deadline, log)
        phase("queue-serviceaccount")
        self.timings["total"] = round(time.monotonic() - began, 2)
        log(f"cluster up in {self.timings['total']:.1f} s: {self.url} ({self.kubeconfig})")

    @property
    def _pki(self) -> Path:
        return self.workdir / "pki"

    def _write_credentials(self) -> None:
        for sub in ("pki", "logs", "kubeconfigs"):
            (self.workdir / sub).mkdir(exist_ok=True)
        _make_certificates(self._pki)
        self.tokens = {user: secrets.token_hex(24) for user in USERS}
        _write_private(
            self._pki / "tokens.csv",
            "".join(
                f'{self.tokens[key]},{u.name},{u.name},"{",".join(u.groups)}"\n'
                for key, u in USERS.items()
            ).encode(),
        )
        _write_private(
            self.kubeconfig,
            _kubeconfig(self.url, self.ca_path, "admin", self.admin_token).encode(),
        )
        for user in USERS:
            (self.workdir / "kubeconfigs" / f"{user}.yaml").unlink(missing_ok=True)

    def _start_etcd(
        self, binaries: dict[str, Path], ports: dict[str, int], fsync: bool, deadline: _Deadline
    ) -> str:
        data = self.workdir / "etcd"
        data.mkdir(mode=0o700, exist_ok=True)
        client = f"http://127.0.0.1:{ports['etcd']}"
        peer = f"http://127.0.0.1:{ports['etcd-peer']}"
        etcd = self._spawn(
            "etcd",
            [
                str(binaries["etcd"]),
                "--name=default",
                f"--data-dir={data}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--log-level=warn",
                *([] if fsync else ["--unsafe-no-fsync"]),
            ],
        )
        _wait(
            f"etcd {client}/health",
            lambda: _http_json(f"{client}/health").get("health") == "true",
            timeout=deadline.left(),
            process=etcd,
        )
        return client

    def _start_apiserver(
        self, binaries: dict[str, Path], ports: dict[str, int], etcd: str, deadline: _Deadline
    ) -> None:
        pki = self._pki
        api = self._spawn(
            "kube-apiserver",
            [
                str(binaries["kube-apiserver"]),
                f"--etcd-servers={etcd}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={ports['apiserver']}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                # as kubeadm sets it; else kube-controller-manager logs an error a second
                # about a missing requestheader CA (nothing proxies requests here)
                f"--requestheader-client-ca-file={pki / 'ca.crt'}",
                "--requestheader-allowed-names=front-proxy-client",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--token-auth-file={pki / 'tokens.csv'}",
                "--authorization-mode=Node,RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                # 127.0.0.1 cannot be an Endpoints address: no reconciler, no error every 10 s
                "--endpoint-reconciler-type=none",
                "--allow-privileged=true",
                "--profiling=false",
                f"--cert-dir={pki / 'apiserver-generated'}",
            ],
        )
        _wait(
            f"kube-apiserver {self.url}/readyz",
            lambda: self._ok("/readyz"),
            timeout=deadline.left(),
            process=api,
        )

    def _bootstrap(self, nodes: tuple[NodeSpec, ...], deadline: _Deadline) -> None:
        """Volcano's CRDs (Established and served), cluster-admin for volcano and kwok, the
        nodes (kwok makes them Ready once it runs)."""
        api = self.processes["kube-apiserver"]
        names = []
        for path in sorted(CRD_DIR.glob("*.yaml")):
            group, plural = path.stem.split("_", 1)
            names.append(f"{plural}.{group}")
            self._create(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                _strip_comments(path.read_text(encoding="utf-8")),
                content_type="application/yaml",
            )
        for user in ("volcano", "kwok"):
            self._create(
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": f"vcflow-test:{user}"},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": "cluster-admin",
                    },
                    "subjects": [
                        {
                            "apiGroup": "rbac.authorization.k8s.io",
                            "kind": "User",
                            "name": USERS[user].name,
                        }
                    ],
                },
            )
        for name in names:
            crd = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
            _wait(
                f"CRD {name} Established",
                functools.partial(self._has_condition, crd, "Established"),
                timeout=deadline.left(),
                process=api,
            )
        for group_version in ("batch.volcano.sh/v1alpha1", "scheduling.volcano.sh/v1beta1"):
            _wait(
                f"/apis/{group_version} served",
                functools.partial(self._ok, f"/apis/{group_version}"),
                timeout=deadline.left(),
                process=api,
            )
        for node in nodes:
            self._create("/api/v1/nodes", node.manifest())
        self._create("/api/v1/namespaces", {"metadata": {"name": SCHEDULER_NAMESPACE}})
        self._create(
            f"/api/v1/namespaces/{SCHEDULER_NAMESPACE}/configmaps",
            {
                "metadata": {"name": SCHEDULER_CONFIGMAP},
                "data": {SCHEDULER_CONF_KEY: SCHEDULER_CONF},
            },
        )

    def _start_controllers(self, binaries: dict[str, Path], ports: dict[str, int]) -> None:
        """kube-controller-manager, vc-controller-manager, vc-scheduler and kwok, at once."""
        work, pki = self.workdir, self._pki
        kcm = self.kubeconfig_for("kube-controller-manager")
        self._spawn(
            "kube-controller-manager",
            [
                str(binaries["kube-controller-manager"]),
                f"--kubeconfig={kcm}",
                f"--authentication-kubeconfig={kcm}",
                f"--authorization-kubeconfig={kcm}",
                "--bind-address=127.0.0.1",
                f"--secure-port={ports['kube-controller-manager']}",
                f"--cert-dir={work / 'kcm-certs'}",
                "--leader-elect=false",
                # each controller as its own service account, as kubeadm runs it
                "--use-service-account-credentials=true",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                f"--controllers={','.join(KUBE_CONTROLLERS)}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--profiling=false",
            ],
            kcm,
        )
        volcano = self.kubeconfig_for("volcano")
        self._spawn(
            "vc-controller-manager",
            [
                str(binaries["vc-controller-manager"]),
                f"--kubeconfig={volcano}",
                f"--controllers={','.join(VOLCANO_CONTROLLERS)}",
                "--leader-elect=false",
                "--enable-healthz=true",
                f"--healthz-address=127.0.0.1:{ports['vc-controller-manager']}",
                "--scheduler-name=volcano",
                "--logtostderr",
            ],
            volcano,
        )
        self._write_scheduler_conf(SCHEDULER_CONF)
        self._spawn(
            "vc-scheduler",
            [
                str(binaries["vc-scheduler"]),
                f"--kubeconfig={volcano}",
                f"--scheduler-conf={self.scheduler_conf_path}",
                "-v=2",  # (its one line a load of its configuration: set_scheduler_conf)
                "--scheduler-name=volcano",
                "--leader-elect=false",
                "--enable-healthz=true",
                f"--healthz-address=127.0.0.1:{ports['vc-scheduler']}",
                f"--listen-address=127.0.0.1:{ports['vc-scheduler-metrics']}",
                f"--cache-dump-dir={work / 'logs'}",
                "--logtostderr",
            ],
            volcano,
        )
        stages = work / "kwok.yaml"
        stages.write_text(
            "\n---\n".join(
                _strip_comments(p.read_text(encoding="utf-8")).strip()
                for p in sorted(KWOK_DIR.glob("*.yaml"))
            )
            + "\n"
        )
        kwok = self.kubeconfig_for("kwok")
        self._spawn(
            "kwok",
            [
                str(binaries["kwok"]),
                f"--kubeconfig={kwok}",
                f"--config={stages}",
                f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}=fake",
                f"--cidr={POD_CIDR}",
                f"--server-address=127.0.0.1:{ports['kwok']}",
                # the node leases its heartbeat stage relies on (it writes the nodes' status
                # only every 10-20 min): without them (kwok's default, 0) the nodes turned
                # NotReady every ~55 s, kube-controller-manager's grace period, for seconds
                "--node-lease-duration-seconds=40",
            ],
            kwok,
        )

    def _wait_controllers(
        self, ports: dict[str, int], nodes: tuple[NodeSpec, ...], deadline: _Deadline
    ) -> None:
        insecure = ssl.create_default_context()  # its own self-signed serving certificate
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        checks: list[tuple[str, str, Callable[[], bool]]] = [
            (
                "kube-controller-manager",
                "/healthz",
                lambda: (
                    _http_status(
                        f"https://127.0.0.1:{ports['kube-controller-manager']}/healthz", insecure
                    )
                    == 200
                ),
            ),
            (
                "vc-controller-manager",
                "/healthz",
                lambda: (
                    _http_status(f"http://127.0.0.1:{ports['vc-controller-manager']}/healthz")
                    == 200
                ),
            ),
            (
                "vc-scheduler",
                "/healthz",
                lambda: _http_status(f"http://127.0.0.1:{ports['vc-scheduler']}/healthz") == 200,
            ),
        ]
        checks.append(
            (
                "kwok",
                "/healthz (served once its controllers run)",
                lambda: _http_status(f"http://127.0.0.1:{ports['kwok']}/healthz") == 200,
            )
        )
        for node in nodes:
            path = f"/api/v1/nodes/{node.name}"
            checks.append(
                (
                    "kwok",
                    f"node {node.name} Ready",
                    functools.partial(self._has_condition, path, "Ready"),
                )
            )
        for name, what, check in checks:
            _wait(
                f"{name}: {what}",
                check,
                timeout=deadline.left(),
                process=self.processes[name],
            )

    def _wait_queue_and_account(self, deadline: _Deadline, log: Log) -> None:
        """The default Queue Open (vc-scheduler makes it at start; made here if nothing did)
        and the default ServiceAccount (pods cannot be created in `default` before it)."""
        queue = "/apis/scheduling.volcano.sh/v1beta1/queues/default"
        with contextlib.suppress(ClusterError):
            _wait("the default Queue", lambda: self._ok(queue), timeout=min(15, deadline.left()))
        if not self._ok(queue):
            log("no default Queue after 15 s: creating it")
            self._create(
                "/apis/scheduling.volcano.sh/v1beta1/queues",
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "Queue",
                    "metadata": {"name": "default"},
                    "spec": {"reclaimable": True, "weight": 1},
                },
            )
        _wait(
            "vc-controller-manager: the default Queue Open",
            lambda: (self.request("GET", queue)[1].get("status") or {}).get("state") == "Open",
            timeout=deadline.left(),
            process=self.processes["vc-controller-manager"],
        )
        _wait(
            "kube-controller-manager: ServiceAccount default/default",
            lambda: self._ok("/api/v1/namespaces/default/serviceaccounts/default"),
            timeout=deadline.left(),
            process=self.processes["kube-controller-manager"],
        )

    def _create(self, path: str, body: Any, *, content_type: str = "application/json") -> Any:
        status, answer = self.request("POST", path, body, content_type=content_type)
        if status not in (200, 201, 202, 409):
            raise ClusterError(f"POST {path}: {status} {answer}")
        return answer


def _plugin_names(conf: str) -> list[str]:
    """The `- name: X` entries of a scheduler configuration, in order (no YAML parser in
    this standard-library-only script: the configurations written here are that simple)."""
    return re.findall(r"^\s*- name:\s*(\S+)\s*$", conf, flags=re.MULTILINE)


def _strip_comments(text: str) -> str:
    """A one-document YAML file without its leading comment lines and `---`."""
    lines = text.splitlines()
    while lines and (lines[0].startswith("#") or lines[0].strip() in ("", "---")):
        lines.pop(0)
    return "\n".join(lines) + "\n"


def _condition(obj: Any, kind: str) -> bool:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def _http_status(url: str, context: ssl.SSLContext | None = None) -> int:
    parsed = urllib.parse.urlsplit(url)
    connection: http.client.HTTPConnection
    if parsed.scheme == "https":
        connection = http.client.HTTPSConnection(
            parsed.hostname or "", parsed.port, timeout=5, context=context
        )
    else:
        connection = http.client.HTTPConnection(parsed.hostname or "", parsed.port, timeout=5)
    try:
        connection.request("GET", parsed.path or "/")
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _http_json(url: str) -> Any:
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname or "", parsed.port, timeout=5)
    try:
        connection.request("GET", parsed.path or "/")
        return json.loads(connection.getresponse().read() or b"{}")
    finally:
        connection.close()


# --------------------------------------------------------------------------------------------
# The command line


@contextlib.contextmanager
def _signals_stop() -> Iterator[None]:
    """SIGINT/SIGTERM end the `with` body (KeyboardInterrupt)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kubecluster.py", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="build (or find in the cache) every binary")
    commands.add_parser("versions", help="print the components' versions")
    up = commands.add_parser("up", help="start a cluster; run until Ctrl-C or SIGTERM")
    up.add_argument("--dir", type=Path, help="working directory (default: a new temp dir)")
    up.add_argument("--nodes", type=int, default=len(DEFAULT_NODES), help="kwok nodes")
    up.add_argument("--timeout", type=float, default=180.0, help="start deadline, seconds")
    args = parser.parse_args(argv)
    try:
        if args.command == "versions":
            for name, version in versions().items():
                print(f"{name} {version}")
            return 0
        if args.command == "build":
            for name, path in build().items():
                print(f"{name} {path}")
            return 0
        workdir = args.dir or Path(tempfile.mkdtemp(prefix="vcflow-cluster-"))
        nodes = [NodeSpec(f"kwok-node-{i}") for i in range(args.nodes)]
        with _signals_stop():
            cluster = Cluster.start(workdir, nodes=nodes, timeout=args.timeout)
            try:
                print(f"kubeconfig: {cluster.kubeconfig}")
                print(f"export KUBECONFIG={cluster.kubeconfig}")
                print(f"API server: {cluster.url} (logs: {workdir / 'logs'})", flush=True)
                while True:
                    signal.pause()
            except KeyboardInterrupt:
                _say("stopping")
            finally:
                cluster.stop()
        return 0
    except (ClusterUnavailable, ClusterError) as error:
        print(f"kubecluster: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
