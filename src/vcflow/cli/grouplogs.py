"""`vcflow logs jobflow/NAME` and `vcflow logs vcjob/NAME`: the logs of every pod of a flow
or job, as kubectl prints a workload's (`kubectl logs -l ... --prefix`). Called by `logs.py`.

Pods are those the store has whose controller reference is one of the owner's vcjobs (by
uid), in flow order: the flow's entries as listed (a `for` entry's items after it, by
index), each job's pods by task and index. Each
line is prefixed `[pod/NAME/CONTAINER] ` when more than one pod is read (or `--prefix`).
Without `-f` each pod's log is printed whole, one pod after another; a pod with no log yet
(not started) is skipped. A started pod whose log the server does not give — on a cluster
the API server reads it from the kubelet of the pod's node, which may be unreachable — is
said on stderr (`error: pod/NAME: ...`) and the command exits 1 once the others are printed.
With `-f` every pod's log is followed at once (a thread each: lines of different pods
interleave as they come, never within a line), the owner is looked at again every half
second for new pods, and it ends once the flow (job) has finished and every log has been
read to its end. Embedded logs are read from the state directory (`podlog`);
remote ones through the server's `pods/NAME/log`, one connection per pod. `--timestamps`,
`--since` and `--since-time` apply to each pod's log (`times`; the prefix goes before the
time, as kubectl prints it: `[pod/NAME/CONTAINER] 2026-12-01T23:00:00.123456789Z line`).

A finished flow none of whose pods is left (`jobRetainPolicy: delete` deleted its vcjobs)
shows the latest kept attempt of each pod it ran, as `vcflow logs POD` shows a deleted
pod's (`kept_pods`; from the state directory, not through a server the command names: the
API lists no attempts).
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import typer

from vcflow.api import names, phases
from vcflow.api.errors import NotFound, VcflowError
from vcflow.api.jobflow import JobFlow
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.cli import kinds, options, remote
from vcflow.kubeapi import logrefusal
from vcflow.podserver import logtimes
from vcflow.reconcile.vcjob.pods import JOB_NAME as JOB_NAME_LABEL
from vcflow.runtime import loghistory, podlog
from vcflow.runtime import logs as podlogs
from vcflow.store.base import Store

RESCAN = 0.5
#: A pod's log: (the container read, its chunks, whether they may still grow)
Source = Callable[["Pod", bool], tuple[str, Iterator[bytes], bool]]
FLOW_DONE = frozenset({phases.FlowPhase.SUCCEED, phases.FlowPhase.FAILED})
JOB_DONE = frozenset({*phases.FINISHED_JOB_PHASES, phases.JobPhase.ABORTED})


@dataclass(frozen=True)
class Owner:
    kind: kinds.Kind  # JOBFLOW or VCJOB
    name: str


def times(timestamps: bool, since: str | None, since_time: str | None) -> podlog.Times:
    """kubectl's `--timestamps`, `--since DURATION` and `--since-time RFC3339`; a usage
    error for a value that is none, or both since flags."""
    if since is not None and since_time is not None:
        raise typer.BadParameter("give --since or --since-time, not both", param_hint="--since")
    seconds = options.duration(since, "--since") if since is not None else None
    if seconds is not None and seconds < 0:
        raise typer.BadParameter(f'"{since}": must be greater than 0', param_hint="--since")
    moment = None
    if since_time is not None:
        try:
            moment = logtimes.parse_rfc3339(since_time)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--since-time") from None
    return podlog.Times(timestamps, seconds or None, moment)


def query(times: podlog.Times) -> dict[str, Any]:
    """`times` as the log route takes them (`KubeStore.pod_log`): `--since` in whole
    seconds, at least 1, as kubectl rounds it; `--since-time` to the nanosecond."""
    seconds = times.since_seconds
    return {
        "timestamps": times.timestamps,
        "since_seconds": None if seconds is None else max(1, int(seconds + 0.5)),
        "since_time": None if times.since_time is None else logtimes.rfc3339(times.since_time),
    }


def _owner_uid(pod: Pod) -> str:
    ref = pod.metadata.controller_ref()
    return ref.uid if ref is not None else ""


def _natural(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.*)-(\d+)", name)
    return (match.group(1), int(match.group(2))) if match else (name, -1)


def _flow_rank(flow: JobFlow, job: str) -> tuple[int, int, str]:
    """Where vcjob `job` goes in flow order: at its entry, a `for` entry's items
    (`<flow>-<entry>-<index>`) right after it by index; any other last."""
    entries = [str(names.job_name(flow.name, entry.name)) for entry in flow.flows]
    if job in entries:
        return entries.index(job), -1, ""
    for place, (entry, name) in enumerate(zip(flow.flows, entries, strict=True)):
        index = job[len(name) + 1 :] if job.startswith(name + "-") else ""
        if entry.for_each is not None and index.isdigit():
            return place, int(index), ""
    return len(entries), 0, job


def pods_of(store: Store, namespace: str, owner: Owner) -> tuple[list[Pod], bool]:
    """The owner's pods in flow order, and whether the owner has finished (or is gone)."""
    if owner.kind is kinds.JOBFLOW:
        try:
            flow = store.get(JobFlow, namespace, owner.name)
        except NotFound:
            raise owner.kind.not_found(owner.name) from None
        jobs = [
            j
            for j in store.list(VCJob, namespace)
            if (ref := j.metadata.controller_ref()) is not None and ref.uid == flow.metadata.uid
        ]
        jobs.sort(key=lambda j: _flow_rank(flow, j.name))
        done = flow.phase in FLOW_DONE
    else:
        try:
            job = store.get(VCJob, namespace, owner.name)
        except NotFound:
            raise owner.kind.not_found(owner.name) from None
        jobs, done = [job], job.phase in JOB_DONE
    rank = {j.metadata.uid: i for i, j in enumerate(jobs)}
    pods = [
        p
        for p in store.list(Pod, namespace)
        if (ref := p.metadata.controller_ref()) is not None and ref.uid in rank
    ]
    pods.sort(key=lambda p: (rank.get(_owner_uid(p), 0), _natural(p.name)))
    return pods, done


def kept_pods(state_dir: Path, store: Store, namespace: str, owner: Owner) -> list[str]:
    """The pods of a flow that are no longer in the store but whose logs are kept, in flow
    order (`_flow_rank`, as its live pods): those whose latest kept attempt is labelled
    with the flow and was kept since the flow was created (not an earlier flow's of the
    same name)."""
    if owner.kind is not kinds.JOBFLOW:
        return []
    flow = store.get(JobFlow, namespace, owner.name)
    value = names.created_by_value(namespace, flow.name)
    since = flow.metadata.creation_timestamp or ""
    root = state_dir / loghistory.LOGS / namespace
    found = []
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return []
    for name in entries:
        last = loghistory.kept(root / name)[-1:]
        record = last[0].record if last else {}
        labels = record.get("labels") or {}
        if not isinstance(labels, dict) or labels.get(names.LABEL_CREATED_BY_FLOW) != value:
            continue
        if str(record.get("keptAt") or "") < since:  # (RFC 3339 in UTC: ordered as text)
            continue
        job = str(labels.get(JOB_NAME_LABEL) or "")
        found.append((_flow_rank(flow, job), _natural(name), name))
    return [name for *_, name in sorted(found)]


def _kept_log(
    state_dir: Path,
    namespace: str,
    name: str,
    container: str | None,
    tail: int | None,
    times: podlog.Times,
) -> tuple[str, bytes]:
    """The container read and the log of a deleted pod's latest kept attempt."""
    request = podlog.LogRequest(namespace, name, container, False, tail, None, times)
    try:
        chosen = podlog.choose(state_dir, request, None)
        return chosen.container, podlog.read(state_dir, request, chosen)
    except (VcflowError, podlogs.LogsError):
        return container or "", b""


def group_logs(
    ctx: typer.Context,
    owner: Owner,
    namespace: str,
    container: str | None,
    follow: bool,
    tail: int | None,
    prefix: bool | None,
    times: podlog.Times,
) -> None:
    server = remote.remote_of(ctx)
    state_dir = options.state_dir(ctx).absolute()

    def source(pod: Pod, live: bool) -> tuple[str, Iterator[bytes], bool]:
        """The container read, its log's chunks (nothing for a pod with no log) and whether
        they are followed as written (`live` asked, and the pod still runs)."""
        if server is not None:
            picked = container or _first_container(pod)
            phase = (pod.to_dict().get("status") or {}).get("phase")
            live = live and phase not in (phases.PodPhase.SUCCEEDED, phases.PodPhase.FAILED)

            def chunks() -> Iterator[bytes]:
                with server.connect() as kube:
                    try:
                        yield from kube.pod_log(
                            namespace,
                            pod.name,
                            container=picked,
                            follow=live,
                            tail=tail,
                            **query(times),
                        )
                    except VcflowError as exc:
                        if started(pod):  # (one not started has no log yet: skipped)
                            failed.say(pod, str(exc))
                        return

            return picked, chunks(), live
        request = podlog.LogRequest(namespace, pod.name, container, False, tail, None, times)
        try:
            chosen = podlog.choose(state_dir, request, pod)
        except (VcflowError, podlogs.LogsError):
            return container or _first_container(pod), iter(()), False
        if live and chosen.live:
            return chosen.container, podlog.stream(state_dir, chosen, tail, times=times), True
        return chosen.container, iter((podlog.read(state_dir, request, chosen),)), False

    out = sys.stdout.buffer
    failed = Failures()
    with remote.reading(ctx) as store:
        pods, done = pods_of(store, namespace, owner)
        if container is not None and pods:
            _check_container(container, pods, owner)
        # its pods gone with its vcjobs; their kept attempts are in the state directory, here
        # or its own server's (not a server the command names: its files are not here)
        here = server is None or not remote.names_a_server(ctx)
        ended = done and not pods and here
        gone = kept_pods(state_dir, store, namespace, owner) if ended else []
        prefixed = prefix if prefix is not None else (len(pods) + len(gone) > 1 or follow)
        if not follow or gone:
            for pod in pods:
                picked, chunks, _ = source(pod, False)
                _write(out, b"".join(chunks), _label(pod, picked) if prefixed else b"")
            for name in gone:
                picked, data = _kept_log(state_dir, namespace, name, container, tail, times)
                _write(out, data, f"[pod/{name}/{picked}] ".encode() if prefixed else b"")
        else:
            try:
                _follow(store, namespace, owner, source, pods, done, prefix, out)
            except KeyboardInterrupt:
                raise typer.Exit(130) from None
    if failed.pods:
        raise typer.Exit(1)


def started(pod: Pod) -> bool:
    """Whether a container of the pod has started (so it has a log to give)."""
    status = pod.to_dict().get("status") or {}
    if status.get("phase") in ("Running", "Succeeded", "Failed"):
        return True
    return any(
        "running" in (c.get("state") or {}) or "terminated" in (c.get("state") or {})
        for c in status.get("containerStatuses") or []
    )


class Failures:
    """The pods whose logs could not be read, each said on stderr once."""

    def __init__(self) -> None:
        self.pods: set[str] = set()
        self._lock = threading.Lock()

    def say(self, pod: Pod, message: str) -> None:
        with self._lock:
            if pod.name in self.pods:
                return
            self.pods.add(pod.name)
        typer.echo(f"error: pod/{pod.name}: {logrefusal.explained(message, pod)}", err=True)


def _check_container(container: str, pods: list[Pod], owner: Owner) -> None:
    """VcflowError unless some pod of the owner has the container `-c` names (a pod
    without it is left out, as a flow's templates name their containers each their own)."""
    known: dict[str, None] = {}
    for pod in pods:
        spec = pod.spec
        for each in [*(spec.init_containers or []), *(spec.containers or [])] if spec else []:
            known.setdefault(each.name or "", None)
    if container not in known:
        raise VcflowError(
            f'container "{container}" is not valid for any pod of '
            f"{owner.kind.singular}/{owner.name}; choose one of: {', '.join(known)}"
        )


def _first_container(pod: Pod) -> str:
    spec = pod.spec
    found = spec.containers if spec is not None and spec.containers else []
    return (found[0].name or "") if found else ""


def _label(pod: Pod, container: str) -> bytes:
    return f"[pod/{pod.name}/{container}] ".encode()


def _write(out: BinaryIO, data: bytes, label: bytes) -> None:
    if not data:
        return
    if label:
        lines = data.splitlines(keepends=True)
        data = b"".join(label + line for line in lines)
        if not data.endswith(b"\n"):
            data += b"\n"
    out.write(data)
    out.flush()


def _follow(
    store: Store,
    namespace: str,
    owner: Owner,
    source: Source,
    pods: list[Pod],
    done: bool,
    prefix: bool | None,
    out: BinaryIO,
) -> None:
    lines: queue.Queue[tuple[bytes, bytes] | None] = queue.Queue()
    read: set[str] = set()  # the pods whose log is read (whole, or followed)
    running: list[threading.Thread] = []

    def pump(label: bytes, chunks: Iterator[bytes]) -> None:
        rest = b""
        try:
            for chunk in chunks:
                rest += chunk
                *whole, rest = rest.split(b"\n")
                for line in whole:
                    lines.put((label, line + b"\n"))
        finally:
            if rest:
                lines.put((label, rest + b"\n"))
            lines.put(None)

    while True:
        for pod in pods:
            # a pod none of whose containers started has no log yet: looked at again at the
            # next scan (a short job's pod, seen Pending, may have ended by then)
            if pod.metadata.uid not in read and started(pod):
                read.add(pod.metadata.uid)
                picked, chunks, live = source(pod, True)
                label = _label(pod, picked) if prefix is not False else b""
                if not live:  # ended: whole, in flow order
                    _write(out, b"".join(chunks), label)
                    continue
                thread = threading.Thread(target=pump, args=(label, chunks), daemon=True)
                thread.start()
                running.append(thread)
        deadline = time.monotonic() + RESCAN
        while (left := deadline - time.monotonic()) > 0:
            try:
                item = lines.get(timeout=left)
            except queue.Empty:
                break
            if item is not None:
                out.write(item[0] + item[1])
                out.flush()
        if done and not any(t.is_alive() for t in running):
            while not lines.empty():
                item = lines.get()
                if item is not None:
                    out.write(item[0] + item[1])
            out.flush()
            return
        try:
            pods, done = pods_of(store, namespace, owner)
        except NotFound:
            done = True
