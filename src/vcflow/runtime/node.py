"""This machine as the runtime shell's one node — the kubelet's part (`executor.Executor` is
the job controller's and the scheduler's): binding a placed pod and launching it through a
`runner.Runner`, writing its processes' status into the store, deleting a pod (out-of-sync
mark, then the deletion, which the pod's finalizer holds back), terminating a Terminating
pod's processes and removing the pod once they ended. Its `devicemanager.DeviceManager`
gives each pod launched its share of the machine's GPUs.

It reads the executor's `podcache.PodCache` and tells the executor every pod it wrote and
every pod that went (`PodEvents`); the executor caches them and turns them into job requests.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from typing import Generic, Protocol

from vcflow.api import clock as clocks
from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.podserver.oserrors import describe
from vcflow.reconcile.vcjob import kubelet, pods
from vcflow.runtime import kubelet_bridge as bridge
from vcflow.runtime.devicemanager import DeviceManager
from vcflow.runtime.launch import LaunchError
from vcflow.runtime.podcache import PodCache
from vcflow.runtime.runner import H, Runner
from vcflow.store.base import Store, batched
from vcflow.store.events import Recorder

Key = names.ObjectKey
#: How long `reconcile` waits for the processes of a pod replaced by another of its name.
RECONCILE_PATIENCE = 10.0


class PodEvents(Protocol):
    """What the node tells the job side of the shell."""

    def pod_written(self, pod: Pod) -> None:
        """The pod as the node just wrote it to the store."""

    def pod_gone(self, key: Key, pod: Pod) -> None:
        """The pod (last cached as `pod`) is no longer in the store."""


class Node(Generic[H]):
    def __init__(
        self,
        store: Store,
        runner: Runner[H],
        clock: clocks.Clock,
        cache: PodCache,
        events: PodEvents,
        *,
        gpus: Sequence[str] = (),
    ) -> None:
        self.store, self.runner, self.clock = store, runner, clock
        self.cache, self.events = cache, events
        self.devices = DeviceManager(gpus, cache, runner.pod_dir)
        self.recorder = Recorder(store, clock)
        self.handles: dict[Key, H] = {}  # launched pods
        self.active: dict[Key, H] = {}  # processes not known to have ended
        # changed processes `wait` saw, written by the next `poll` (by id: no __eq__)
        self.seen: dict[int, H] = {}
        self.asked_to_stop: set[Key] = set()

    # -- launching ------------------------------------------------------------------------

    def bind(self, pod: Pod) -> Pod:
        """Bind the pod (`spec.nodeName`); `launch` it once that is committed (a pod is
        launched only if the store has it placed). The status `kubelet.place` would write
        is left to the pod's supervisor, whose first status follows at once."""
        written = self.store.bind(
            pod.namespace, pod.name, kubelet.NODE, uid=pod.metadata.uid, base=pod
        )
        self.events.pod_written(written)
        return written

    def launch(self, pod: Pod, job: VCJob | None) -> None:
        pod_dir = self.runner.pod_dir(pod.namespace, pod.name)
        try:
            request = bridge.pod_request(pod, job, pod_dir, self.store)
            handle = self.runner.launch(self.devices.prepare(pod, request))
        except (LaunchError, OSError) as exc:  # (a full disk: `no space left on device: ...`)
            error = exc if isinstance(exc, LaunchError) else LaunchError(describe(exc, pod_dir))
            if job is not None:
                self.recorder.record(job, "Warning", "FailedCreatePodSandBox", str(error))
            self._write_status(pod, bridge.launch_failed(pod, error, self.clock.now()))
            return
        self._track(pod.key, handle)
        self._sync_status(pod.key, handle)

    def resume(self, pod: Pod, job: VCJob | None) -> None:
        """A placed pod found at start: go on with its run (tracked already, or adopted),
        or launch it if it never was."""
        handle = self.handles.get(pod.key) or self.runner.adopt(pod.namespace, pod.name)
        if handle is not None and handle.uid == pod.metadata.uid:
            self._track(pod.key, handle)
            # written by the first `poll`, after the jobs' syncs of the store's state: what
            # a process did while no runtime ran is then handled as of when it did it
            # (`Request.at`), not as of now
            self.seen[id(handle)] = handle
        elif not pod.deleting:
            self.launch(pod, job)

    def _track(self, key: Key, handle: H) -> None:
        self.handles[key] = handle
        self.active[key] = handle

    def forget(self, key: Key) -> None:
        """The pod is gone from the store: kill what it runs, drop its handle."""
        self.asked_to_stop.discard(key)
        self.devices.forget(key)
        handle = self.active.pop(key, None)
        launched = self.handles.pop(key, None)
        if launched is not None:
            self.seen.pop(id(launched), None)
        if handle is not None:
            self.runner.terminate(handle, 0)

    def release(self, key: Key) -> None:
        """The pod's processes ended and its job was retired: its handle is no longer kept
        (a later deletion adopts the pod's directory again to remove it, `_remove`)."""
        assert key not in self.active
        self.asked_to_stop.discard(key)
        self.devices.forget(key)
        launched = self.handles.pop(key, None)
        if launched is not None:
            self.seen.pop(id(launched), None)

    def reconcile(self, patience: float = RECONCILE_PATIENCE) -> None:
        """After the cache was listed again (the watch expired): kill and forget the runs
        whose pod is gone from the store meanwhile, or is now another pod of that name (its
        uid differs); the rest stay tracked. Waits up to `patience` s for the killed runs
        to end, so that new pods of their names can launch in their directories."""
        stale = []
        for key, handle in self.handles.items():
            pod = self.cache.get(key)
            if pod is None or pod.metadata.uid != handle.uid:
                stale.append((key, handle))
        # (a pod gone from the store is created again, by its name, as soon as its job
        # syncs: its old run must be gone by then too)
        replaced = []
        for key, handle in stale:
            if key in self.active:
                replaced.append(handle)
            self.forget(key)
        end = time.monotonic() + patience
        while replaced and time.monotonic() < end:
            self.runner.wait(replaced, end - time.monotonic())
            replaced = [h for h in replaced if h.last is None or not h.last.finished]

    # -- status ---------------------------------------------------------------------------

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
            with batched(self.store):
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

    def _sync_status(self, key: Key, handle: H) -> None:
        run = handle.last
        pod = self.cache.get(key)
        if run is None or pod is None or self.handles.get(key) is not handle:
            return
        if run.lost and key not in self.asked_to_stop:
            self.asked_to_stop.add(key)
            self.runner.terminate(handle, 0)  # kill what it may have left running
        elif run.finished and not run.lost:
            self.active.pop(key, None)
        data = bridge.status_data(pod, run, self.clock.now())
        if data is not None:
            self._write_status(pod, data)

    def _write_status(self, pod: Pod, data: dict[str, object]) -> None:
        with contextlib.suppress(NotFound):
            written = self.store.update_status_data(
                Pod, pod.namespace, pod.name, data, uid=pod.metadata.uid, base=pod
            )
            self.events.pod_written(written)

    # -- deleting -------------------------------------------------------------------------

    def delete(self, pod: Pod) -> None:
        """The job controller's deletion: the out-of-sync mark, then the delete."""
        doomed = pods.marked_out_of_sync(pod)
        doomed.metadata.resource_version = ""
        try:
            with batched(self.store):
                self.store.update(doomed, admit=False)
                last = self.store.delete(Pod, pod.namespace, pod.name, force=True)
        except NotFound:
            self.events.pod_gone(pod.key, pod)
            return
        if last.deleting:
            self.events.pod_written(last)
        else:
            self.events.pod_gone(pod.key, pod)

    def reap_terminating(self) -> bool:
        """Stop the processes of Terminating pods; remove those whose processes ended."""
        worked = False
        for key in sorted(self.cache.deleting):
            pod = self.cache.get(key)
            if pod is None:
                self.cache.deleting.discard(key)
                continue
            handle = self.active.get(key)
            if handle is not None:
                if key not in self.asked_to_stop:
                    self.asked_to_stop.add(key)
                    self.runner.terminate(handle, bridge.grace_seconds(pod))
                continue
            worked |= self._remove(pod)
        return worked

    def _remove(self, pod: Pod) -> bool:
        """A Terminating pod whose processes ended: release it, drop its finalizer; False
        while the runner is not done with it."""
        key = pod.key
        handle = self.handles.get(key) or self.runner.adopt(pod.namespace, pod.name)
        if handle is not None and handle.uid == pod.metadata.uid:
            with contextlib.suppress(LaunchError):
                if not self.runner.remove(handle):
                    return False
        gone = pod.clone()
        gone.metadata.finalizers = [f for f in gone.metadata.finalizers if f != bridge.FINALIZER]
        gone.metadata.resource_version = ""
        with contextlib.suppress(NotFound):
            self.store.update(gone, admit=False)
        self.events.pod_gone(key, pod)
        return True

    # -- stopping everything --------------------------------------------------------------

    def terminate_all(self, grace: float, patience: float, *, evict: bool = False) -> int:
        """Stop every running pod (SIGTERM, SIGKILL after `grace`) and wait up to
        `patience` s for them to end; no request is handled. Each pod's final status is
        written — or, with `evict`, the pod is removed from the store (its directory stays
        until the name runs again, its logs kept then), so the job controller of a later
        run creates it again, as after an eviction. The count of pods stopped."""
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
                pod = self.cache.get(key)
                data = bridge.status_data(pod, run, self.clock.now()) if pod and run else None
                if pod is not None and data is not None and not evict:
                    with contextlib.suppress(NotFound):
                        self.store.update_status_data(
                            Pod, pod.namespace, pod.name, data, uid=pod.metadata.uid, base=pod
                        )
        if evict:
            for key, _handle in running:
                pod = self.cache.get(key)
                if pod is not None and key not in self.active:
                    self._evict(pod)
        return len(running)

    def _evict(self, pod: Pod) -> None:
        gone = pod.model_copy(update={"metadata": pod.metadata.model_copy()})
        gone.metadata.finalizers = [f for f in gone.metadata.finalizers if f != bridge.FINALIZER]
        gone.metadata.resource_version = ""
        with contextlib.suppress(NotFound), batched(self.store):
            self.store.update(gone, admit=False)
            self.store.delete(Pod, pod.namespace, pod.name, force=True)
