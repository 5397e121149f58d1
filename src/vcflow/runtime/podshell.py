"""The kubelet's side of the runtime shell (`executor.Executor` is the rest): the cache of
the store's pods (by key and by job), the processes that run them (`pods.PodRunner`), and
what connects the two — binding and launching a placed pod, writing its process status into
the store, deleting a pod (out-of-sync mark, then the deletion, which the pod's finalizer
holds back), terminating a Terminating pod's processes and removing the pod once they ended.

Every change to a pod is observed at once (`_observe_pod`): the pod request it causes for
its job (`reconcile.vcjob.events`) goes to `_enqueue`, the job's runtime.
"""

from __future__ import annotations

import contextlib
import time
from fractions import Fraction
from typing import TypeVar

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import events, kubelet, pods
from vcflow.reconcile.vcjob import resources as jobres
from vcflow.reconcile.vcjob.model import Request as JobRequest
from vcflow.runtime import kubelet_bridge as bridge
from vcflow.runtime import podfs
from vcflow.runtime.launch import LaunchError
from vcflow.runtime.pods import PodRunner
from vcflow.runtime.status import PodHandle
from vcflow.store.base import Store
from vcflow.store.events import Recorder

Key = names.ObjectKey
W = TypeVar("W", bound=Resource)


class PodShell:
    def __init__(self, store: Store, runner: PodRunner, clock: clocks.Clock) -> None:
        self.store, self.runner, self.clock = store, runner, clock
        self.recorder = Recorder(store, clock)
        self.pods: dict[Key, Pod] = {}
        self.by_job: dict[Key, dict[str, Pod]] = {}  # pods by job key, then pod name
        self.handles: dict[Key, PodHandle] = {}  # launched pods
        self.active: dict[Key, PodHandle] = {}  # processes not known to have ended
        # changed processes `wait` saw, written by the next `poll` (by id: no __eq__)
        self.seen: dict[int, PodHandle] = {}
        self.live: set[Key] = set()  # placed pods holding resources
        self.held: dict[Key, jobres.Resources] = {}  # what each live pod holds
        self.used: dict[str, Fraction] = {}  # their sum, kept as pods come and go
        self.touched: set[Key] = set()  # jobs whose pods changed since the last pass
        self.deleting: set[Key] = set()
        self.asked_to_stop: set[Key] = set()
        self.dirty = True  # the scheduler has something new to look at

    # -- what the job side provides ---------------------------------------------------------

    def _job(self, key: Key) -> VCJob | None:
        """The vcjob of that key, None if it is not (or no longer) known."""
        raise NotImplementedError

    def _enqueue(self, key: Key, request: JobRequest) -> None:
        raise NotImplementedError

    def _wrote(self, obj: W) -> W:
        """Called with the result of each of this shell's own single-object writes."""
        return obj

    # -- the pod cache ------------------------------------------------------------------------

    def _cache_pod(self, pod: Pod) -> Pod | None:
        key = pod.key
        old = self.pods.get(key)
        self.pods[key] = pod
        self.by_job.setdefault(job_key_of(pod), {})[pod.name] = pod
        self.touched.add(job_key_of(pod))
        holds = pod.placed and (pod.deleting or pod.phase in kubelet.ALIVE)
        if holds != (key in self.live):
            self.dirty = True  # resources taken or freed
            if holds:
                self.live.add(key)
                self.held[key] = jobres.pod_request(pod.spec)
                self.used = jobres.add(self.used, self.held[key])
            else:
                self._release(key)
        if old is None or pod.phase != old.phase or pod.deleting != old.deleting:
            self.dirty = True  # a new pod to place, or the gang's count changed
        if pod.deleting:
            self.deleting.add(key)
        return old

    def _observe_pod(self, pod: Pod) -> None:
        old = self._cache_pod(pod)
        job_key = job_key_of(pod)
        job = self._job(job_key)
        if job is None:
            return
        if old is None:
            request = events.pod_created(pod)
        else:
            request = events.pod_updated(job, old, pod, self.by_job[job_key].values())
        self._enqueue(job_key, request)

    def _release(self, key: Key) -> None:
        self.live.discard(key)
        held = self.held.pop(key, None)
        if held is not None:
            self.used = jobres.subtract(self.used, held)

    def _pod_gone(self, key: Key, pod: Pod) -> None:
        del self.pods[key]
        self._release(key)
        self.touched.add(job_key_of(pod))
        self.deleting.discard(key)
        self.asked_to_stop.discard(key)
        self.dirty = True
        handle = self.active.pop(key, None)
        self.handles.pop(key, None)
        if handle is not None:
            self.runner.terminate(handle, 0)
        job_key = job_key_of(pod)
        siblings = self.by_job.get(job_key)
        if siblings is not None:
            siblings.pop(pod.name, None)
            if not siblings and self._job(job_key) is None:
                del self.by_job[job_key]
        if self._job(job_key) is not None:
            self._enqueue(job_key, events.pod_deleted(pod))

    # -- processes ------------------------------------------------------------------------

    def _delete_pod(self, pod: Pod) -> None:
        doomed = pods.marked_out_of_sync(pod)
        doomed.metadata.resource_version = ""
        try:
            with self.store.transaction():
                self.store.update(doomed, admit=False)
                last = self.store.delete(Pod, pod.namespace, pod.name, force=True)
        except NotFound:
            self._pod_gone(pod.key, pod)
            return
        if last.deleting:
            self._observe_pod(last)
        else:
            self._pod_gone(pod.key, pod)

    def _reap_terminating(self) -> bool:
        worked = False
        for key in sorted(self.deleting):
            pod = self.pods.get(key)
            if pod is None:
                self.deleting.discard(key)
                continue
            handle = self.active.get(key)
            if handle is not None:
                if key not in self.asked_to_stop:
                    self.asked_to_stop.add(key)
                    self.runner.terminate(handle, bridge.grace_seconds(pod))
                continue
            self._remove(pod)
            worked = True
        return worked

    def _remove(self, pod: Pod) -> None:
        """A Terminating pod whose processes ended: drop its directory and finalizer."""
        key = pod.key
        handle = self.handles.pop(key, None) or self.runner.adopt(pod.namespace, pod.name)
        if handle is not None and launched_uid(handle) == pod.metadata.uid:
            with contextlib.suppress(LaunchError):
                self.runner.remove(handle)
        gone = pod.clone()
        gone.metadata.finalizers = [f for f in gone.metadata.finalizers if f != bridge.FINALIZER]
        gone.metadata.resource_version = ""
        with contextlib.suppress(NotFound):
            self.store.update(gone, admit=False)
        self._pod_gone(key, pod)

    def poll(self, timeout: float) -> bool:
        """Wait up to `timeout` s for process changes and write them to the pods' status,
        with those `wait` saw."""
        changed, self.seen = self.seen, {}
        if self.active:
            found = self.runner.wait(list(self.active.values()), 0 if changed else timeout)
            changed.update((id(h), h) for h in found)
        elif timeout > 0 and not changed:
            time.sleep(timeout)
        if changed:
            with self.store.transaction():
                for handle in changed.values():
                    self._sync_status(names.object_key(handle.namespace, handle.name), handle)
        return bool(changed)

    def wait(self, timeout: float) -> bool:
        """Block until a process changes (True) or `timeout` passes. The changes are written
        by the next `poll` — in the runtime's next burst, which then commits them with the
        job statuses they change: one commit, not two, per pod that ends."""
        if not self.active:
            self.runner.wait([], timeout)
            return False
        changed = self.runner.wait(list(self.active.values()), timeout)
        self.seen.update((id(h), h) for h in changed)
        return bool(changed)

    def _track(self, key: Key, handle: PodHandle) -> None:
        self.handles[key] = handle
        self.active[key] = handle

    def _sync_status(self, key: Key, handle: PodHandle) -> None:
        run = handle.last
        pod = self.pods.get(key)
        if run is None or pod is None:
            return
        if run.lost and key not in self.asked_to_stop:
            self.asked_to_stop.add(key)
            self.runner.terminate(handle, 0)  # kill what it may have left running
        elif run.finished and not run.lost:
            self.active.pop(key, None)
        data = bridge.status_data(pod, run, self.clock.now())
        if data is not None:
            self._write_pod_status(pod, data)

    def _write_pod_status(self, pod: Pod, data: dict[str, object]) -> None:
        with contextlib.suppress(NotFound):
            written = self.store.update_status_data(
                Pod, pod.namespace, pod.name, data, uid=pod.metadata.uid, base=pod
            )
            self._observe_pod(self._wrote(written))

    def _launch(self, pod: Pod) -> None:
        job = self._job(job_key_of(pod))
        try:
            pod_dir = self.runner.pod_dir(pod.namespace, pod.name)
            handle = self.runner.launch(bridge.pod_request(pod, job, pod_dir, self.store))
        except LaunchError as exc:
            if job is not None:
                self.recorder.record(job, "Warning", "FailedCreatePodSandBox", str(exc))
            self._write_pod_status(pod, bridge.launch_failed(pod, exc, self.clock.now()))
            return
        self._track(pod.key, handle)
        self._sync_status(pod.key, handle)

    def terminate_all(self, grace: float, patience: float, *, evict: bool = False) -> int:
        """Stop every running pod (SIGTERM, SIGKILL after `grace`) and wait up to
        `patience` s for them to end; no request is handled. Each pod's final status is
        written — or, with `evict`, the pod is removed from the store (its directory and
        logs stay until the name runs again), so the job controller of a later run creates
        it again, as after an eviction. The count of pods stopped."""
        if self.seen:  # ended while the loop waited: written now, and no longer active
            self.poll(0)
        running = list(self.active.items())
        for _key, handle in running:
            self.runner.terminate(handle, grace)
        end = time.monotonic() + patience
        while self.active and time.monotonic() < end:
            for handle in self.runner.wait(list(self.active.values()), end - time.monotonic()):
                key = names.object_key(handle.namespace, handle.name)
                run = handle.last
                if run is not None and run.finished and not run.lost:
                    self.active.pop(key, None)
                pod = self.pods.get(key)
                data = bridge.status_data(pod, run, self.clock.now()) if pod and run else None
                if pod is not None and data is not None and not evict:
                    with contextlib.suppress(NotFound):
                        self.store.update_status_data(
                            Pod, pod.namespace, pod.name, data, uid=pod.metadata.uid, base=pod
                        )
        if evict:
            for key, _handle in running:
                pod = self.pods.get(key)
                if pod is not None and key not in self.active:
                    self._evict(pod)
        return len(running)

    def _evict(self, pod: Pod) -> None:
        gone = pod.model_copy(update={"metadata": pod.metadata.model_copy()})
        gone.metadata.finalizers = [f for f in gone.metadata.finalizers if f != bridge.FINALIZER]
        gone.metadata.resource_version = ""
        with contextlib.suppress(NotFound), self.store.transaction():
            self.store.update(gone, admit=False)
            self.store.delete(Pod, pod.namespace, pod.name, force=True)

    def _bind(self, pod: Pod) -> Pod:
        """Bind the pod (`spec.nodeName`); `_launch` it once that is committed (a pod is
        launched only if the store has it placed). The status `kubelet.place` would write
        is left to the pod's supervisor, whose first status follows at once."""
        written = self.store.bind(
            pod.namespace, pod.name, kubelet.NODE, uid=pod.metadata.uid, base=pod
        )
        self._observe_pod(self._wrote(written))
        return written


def job_key_of(pod: Pod) -> Key:
    return names.object_key(pod.namespace, pods.job_of(pod))


def launched_uid(handle: PodHandle) -> str:
    spec = podfs.read_json(str(handle.pod_dir / podfs.SPEC))
    return str(spec.get("uid") or "") if isinstance(spec, dict) else ""
