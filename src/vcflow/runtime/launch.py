"""What a pod runs, resolved once at launch: the `spec.json` its supervisor reads.

Input is plain (`PodRequest`): the pod template spec (`vcjob.PodSpec`), the metadata the env
refers to, and two hooks for the plugins (env/svc/ssh): `env`, variables every container and
init container gets, and `files`, written under the pod directory before anything starts.

Environment of a container process, later entries winning:
1. the host's: the launching process's environment less vcflow's own and the shell's
   bookkeeping (`hostenv`), and `HOSTNAME` = the pod's hostname (`spec.hostname`, else
   the pod name);
2. the request's `env` (what plugins add; Kubernetes' "service" variables);
3. the container's `env`, in order: `value` with `$(VAR)` expanded against 2 and the entries
   before it; `valueFrom.fieldRef` with `metadata.name`, `metadata.namespace`,
   `metadata.uid`, `metadata.labels['k']`, `metadata.annotations['k']` (`""` when missing),
   `spec.nodeName` (the request's `node_name`), `spec.serviceAccountName` (`default`),
   `status.podIP` (the pod's address, `jobnet`), `status.hostIP` (and the plural forms:
   `127.0.0.1`). `configMapKeyRef` and `secretKeyRef` arrive resolved (`configdata`); every
   other source (`resourceFieldRef`, other field paths) is a `LaunchError`.

Outputs (docs/flow-features.md §12): every container has a termination message file in the
pod directory, `<container>.termination-log`, which the supervisor makes empty before each
run and copies into the run's `state.terminated.message` as the kubelet copies the file at
`terminationMessagePath` (`supervisor`). The controller sets `VCFLOW_OUTPUTS` to that path
in the image, which does not exist here: a container whose `env` has `VCFLOW_OUTPUTS` gets
the absolute path of its local file instead, whatever the value given (`$(VCFLOW_OUTPUTS)`
after it expands to that too). No other variable changes, and a container without it gets
nothing. `terminationMessagePolicy: FallbackToLogsOnError` is passed on as `fallbackToLogs`.

`command` and `args` are `$(VAR)`-expanded against 2 and 3 (not the base), as the kubelet
does: `$(NAME)` of a defined variable is replaced, an undefined one stays as written, `$$`
is a literal `$`. `workingDir` defaults to the request's `working_dir` (the directory the
objects were applied from, `api.workdir`), else to the pod directory's `work/`; a relative
one is taken from there. The image is never pulled: it is ignored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vcflow.api.errors import RuntimeFailure
from vcflow.api.vcjob import Container, PodSpec
from vcflow.podserver import isolation, podfs
from vcflow.reconcile.outputs import ENV_OUTPUTS
from vcflow.runtime import hostenv, volumes

RESTART_POLICIES = ("Always", "OnFailure", "Never")
FALLBACK_TO_LOGS = "FallbackToLogsOnError"
LOCAL_IP = "127.0.0.1"
_LABEL_REF = re.compile(r"^metadata\.(labels|annotations)\['([^']*)'\]$")
_CONTAINER_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


class LaunchError(RuntimeFailure):
    """The pod cannot be launched as given; nothing was started."""


@dataclass(frozen=True)
class PodFile:
    content: bytes | str
    mode: int = 0o644


@dataclass(frozen=True)
class PodRequest:
    """A pod to run. `files` maps paths relative to the pod directory to their content."""

    namespace: str
    name: str
    spec: PodSpec
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, PodFile] = field(default_factory=dict)
    node_name: str = "localhost"
    #: Where a container without `workingDir` starts (and a relative one is taken from);
    #: None: the pod directory's `work/`.
    working_dir: str | None = None
    #: The job's network namespace (`jobnet`); None: the host's network.
    network: str | None = None
    #: A hosts file (path in the pod directory) to mount over /etc/hosts.
    hosts_file: str | None = None
    pod_ip: str = LOCAL_IP


def expand(text: str, defined: Mapping[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion (third_party/forked/golang/expansion)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char != "$" or i + 1 == n:
            out.append(char)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close == -1:
                out.append("$(")
                i += 2
                continue
            name = text[i + 2 : close]
            out.append(defined.get(name, f"$({name})"))
            i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def build_spec(
    request: PodRequest,
    pod_dir: Path,
    *,
    fsync: bool = False,
    notify: str | None = None,
    base_env: Mapping[str, str] | None = None,
    isolated: bool | None = None,
) -> dict[str, Any]:
    """The resolved spec.json of `request` (see the module docstring); LaunchError if it
    cannot run locally. `isolated`: may containers get private namespaces (`volumes`,
    `jobnet`)? None: as this machine allows (`isolation.usable`)."""
    spec = request.spec
    where = f"pod {request.namespace}/{request.name}"
    if not spec.containers:
        raise LaunchError(f"{where}: the pod has no containers")
    policy = spec.restart_policy or "Always"
    if policy not in RESTART_POLICIES:
        raise LaunchError(f"{where}: unsupported restartPolicy {policy!r}")
    base = hostenv.of_process() if base_env is None else hostenv.passed(base_env)
    base["HOSTNAME"] = spec.hostname or request.name
    work = request.working_dir or str(pod_dir / podfs.WORK)
    seen: set[str] = set()
    site = _Site(request, pod_dir, isolated, where)
    built = {
        kind: [
            site.place(_container(c, i, kind, request, base, work, seen, where, pod_dir), c)
            for i, c in enumerate(containers or [])
        ]
        for kind, containers in (
            ("initContainers", spec.init_containers),
            ("containers", spec.containers),
        )
    }
    grace = (spec.model_extra or {}).get("terminationGracePeriodSeconds")
    return {
        "version": 1,
        "namespace": request.namespace,
        "name": request.name,
        "uid": request.uid,
        "labels": dict(request.labels),  # (what `loghistory` records of an attempt)
        "annotations": dict(request.annotations),
        "restartPolicy": policy,
        "activeDeadlineSeconds": spec.active_deadline_seconds,
        "terminationGracePeriodSeconds": grace if isinstance(grace, int | float) else None,
        "fsync": fsync,
        "notify": notify,
        **built,
    }


def _container(
    c: Container,
    index: int,
    kind: str,
    request: PodRequest,
    base: dict[str, str],
    work: str,
    seen: set[str],
    where: str,
    pod_dir: Path,
) -> dict[str, Any]:
    name = c.name or ""
    at = f"{where}: {kind}[{index}]"
    if not _CONTAINER_NAME.fullmatch(name) or name in seen:
        problem = "a duplicate" if name in seen else "an invalid"
        raise LaunchError(f"{at}: {problem} container name {name!r}")
    seen.add(name)
    defined = dict(request.env)
    for var in c.env or []:
        if var.name == ENV_OUTPUTS:  # the image's path, here the pod dir's file (`podfs`)
            defined[var.name] = os.path.abspath(pod_dir / podfs.termination_name(name))
        elif var.value_from is not None:
            defined[var.name] = _value_from(var.name, var.value_from, request, at)
        else:
            defined[var.name] = expand(var.value or "", defined)
    argv = None
    if c.command:
        argv = [expand(arg, defined) for arg in [*c.command, *(c.args or [])]]
    cwd = os.path.join(work, c.working_dir) if c.working_dir else work
    built: dict[str, Any] = {
        "name": name,
        "argv": argv,
        "env": {**base, **defined},
        "workingDir": cwd,
    }
    if (c.model_extra or {}).get("terminationMessagePolicy") == FALLBACK_TO_LOGS:
        built["fallbackToLogs"] = True
    return built


class _Site:
    """Where a pod's containers run on this machine: their volumes, hosts file and network
    (`volumes`, `jobnet`), planned once per pod."""

    def __init__(
        self, request: PodRequest, pod_dir: Path, isolated: bool | None, where: str
    ) -> None:
        self.request, self.pod_dir, self.where = request, pod_dir, where
        self.volumes = volumes.pod_volumes(request.spec, pod_dir)
        needs = bool(self.volumes) or request.network is not None or request.hosts_file
        self.isolated = bool(needs) and (isolation.usable() if isolated is None else isolated)

    def place(self, built: dict[str, Any], container: Container) -> dict[str, Any]:
        try:
            plan = volumes.container_plan(container, self.volumes, self.where)
        except ValueError as exc:
            raise LaunchError(str(exc)) from None
        built["env"] = {**plan.env, **built["env"]} if plan.env else built["env"]
        mounts = list(plan.mounts)
        if self.request.hosts_file:
            mounts.append((str(self.pod_dir / self.request.hosts_file), "/etc/hosts", True))
        if not self.isolated:
            built["workingDir"] = volumes.real_dir(built["workingDir"], plan.mounts)
        elif mounts or self.request.network:
            built["isolation"] = {
                "user": os.geteuid() != 0,
                "network": self.request.network,
                "hostname": self.request.spec.hostname or self.request.name,
                "mounts": mounts,
                "shadow": str(self.pod_dir / volumes.SHADOW),
            }
        return built


def _value_from(name: str, source: dict[str, Any], request: PodRequest, at: str) -> str:
    ref = source.get("fieldRef")
    kinds = ", ".join(sorted(source)) or "nothing"
    if set(source) != {"fieldRef"} or not isinstance(ref, dict):
        raise LaunchError(
            f"{at}: env {name}: valueFrom {kinds} is not supported locally (fieldRef, "
            "configMapKeyRef and secretKeyRef are)"
        )
    path = str(ref.get("fieldPath") or "")
    simple = {
        "metadata.name": request.name,
        "metadata.namespace": request.namespace,
        "metadata.uid": request.uid,
        "spec.nodeName": request.node_name,
        "spec.serviceAccountName": "default",
        "status.podIP": request.pod_ip,
        "status.podIPs": request.pod_ip,
        "status.hostIP": LOCAL_IP,
        "status.hostIPs": LOCAL_IP,
    }
    if path in simple:
        return simple[path]
    match = _LABEL_REF.fullmatch(path)
    if match is None:
        raise LaunchError(f"{at}: env {name}: unsupported fieldRef.fieldPath {path!r}")
    values = request.labels if match.group(1) == "labels" else request.annotations
    return values.get(match.group(2), "")


def prepare_pod_dir(pod_dir: Path, request: PodRequest) -> None:
    """Create the pod directory and the request's files in it (spec.json comes last, from
    `PodRunner.launch`; `work/` from the supervisor)."""
    pod_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # (`PodRunner` made it, checked)
    try:
        volumes.prepare(request.spec, pod_dir, f"pod {request.namespace}/{request.name}")
    except (ValueError, OSError) as exc:
        raise LaunchError(str(exc)) from None
    for rel, pod_file in request.files.items():
        target = _inside(pod_dir, rel, request)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = pod_file.content
        target.write_bytes(data.encode() if isinstance(data, str) else data)
        target.chmod(pod_file.mode)


def _inside(pod_dir: Path, rel: str, request: PodRequest) -> Path:
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise LaunchError(
            f"pod {request.namespace}/{request.name}: file path {rel!r} must be relative "
            "to the pod directory and stay inside it"
        )
    return pod_dir.joinpath(*path.parts)
