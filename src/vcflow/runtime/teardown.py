"""Finishing the deletion of pods while no runtime runs on the state directory.

A pod the runtime created carries its finalizer (`kubelet_bridge.FINALIZER`): deleted, it
stays `Terminating` until its processes ended, and the runtime then removes it. When a
writer deletes pods (`vcflow delete pod`, a flow deleted or stopped, whose vcjobs and pods
go with it) and no `vcflow run` holds the state directory, nothing would: the writer, which
holds the controller lock, finishes them here — it terminates the processes still running
(SIGTERM, SIGKILL after the pod's grace period), waits for them, then drops each pod's
directory and finalizer, and the store removes the pod.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vcflow.api.errors import NotFound
from vcflow.api.pod import Pod
from vcflow.runtime import kubelet_bridge as bridge
from vcflow.runtime.launch import LaunchError
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.status import PodHandle
from vcflow.store.base import Store

#: seconds waited beyond a pod's grace period for its processes to be gone
SLACK = 5.0


@dataclass(frozen=True)
class Finished:
    removed: list[str]  # "namespace/name" of the pods removed
    left: list[str]  # of those whose processes did not end in time (still Terminating)


def finish_deletions(
    store: Store,
    runner: PodRunner,
    pods: Iterable[Pod],
    *,
    note: Callable[[str], None] | None = None,
) -> Finished:
    """Remove the given Terminating pods once their processes ended (see the module
    docstring); pods that are not Terminating, or not the runtime's, are left alone."""
    doomed = [p for p in pods if p.deleting and bridge.FINALIZER in p.metadata.finalizers]
    running: dict[str, tuple[Pod, PodHandle]] = {}
    removed: list[str] = []
    for pod in doomed:
        handle = runner.adopt(pod.namespace, pod.name)
        if handle is None or handle.uid != pod.metadata.uid:
            handle = None  # never launched (or the directory is another pod's)
        elif handle.last is not None and (handle.last.lost or not handle.last.finished):
            runner.terminate(handle, bridge.grace_seconds(pod))
            running[pod.key] = (pod, handle)
            continue
        _remove(store, runner, pod, handle)
        removed.append(pod.key)
    if running and note is not None:
        note(f"waiting for the processes of {len(running)} deleted pod(s) to end")
    patience = max((bridge.grace_seconds(p) for p, _ in running.values()), default=0.0)
    end = time.monotonic() + patience + SLACK
    while running and time.monotonic() < end:
        for handle in runner.wait([h for _, h in running.values()], end - time.monotonic()):
            run = handle.last
            if run is not None and run.finished and not run.lost:
                key = f"{handle.namespace}/{handle.name}"
                pod, _ = running.pop(key)
                _remove(store, runner, pod, handle)
                removed.append(key)
    return Finished(removed, sorted(running))


def _remove(store: Store, runner: PodRunner, pod: Pod, handle: PodHandle | None) -> None:
    if handle is not None:
        with contextlib.suppress(LaunchError):
            runner.remove(handle)
    gone = pod.clone()
    gone.metadata.finalizers = [f for f in gone.metadata.finalizers if f != bridge.FINALIZER]
    gone.metadata.resource_version = ""
    with contextlib.suppress(NotFound):
        store.update(gone, admit=False)
