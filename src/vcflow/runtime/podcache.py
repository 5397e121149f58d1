"""The runtime shell's cache of the store's pods (`executor.Executor` keeps one; `node.Node`
reads it): pods by key and by job (a `podset.PodSet` each, which keeps the counts the pure
runtime reads), the resources that placed pods hold, the Terminating pods, and what changed
for the gang scheduler since its last pass. No I/O; the shell writes every pod it sees here
(`put`) and takes out every pod that is gone (`remove`).
"""

from __future__ import annotations

from fractions import Fraction

from vcflow.api import names
from vcflow.api.pod import Pod
from vcflow.api.scheduling import DEFAULT_QUEUE
from vcflow.reconcile.vcjob import kubelet, pods
from vcflow.reconcile.vcjob import resources as jobres
from vcflow.reconcile.vcjob.podset import PodSet

Key = names.ObjectKey
_NONE = PodSet()  # (never changed)


def _queue(pod: Pod) -> str:
    """The pod's queue (its `volcano.sh/queue-name` label, as the job controller sets it)."""
    return pod.metadata.labels.get(pods.QUEUE_NAME) or DEFAULT_QUEUE


def job_key_of(pod: Pod) -> Key:
    return names.object_key(pod.namespace, pods.job_of(pod))


class PodCache:
    def __init__(self) -> None:
        self._pods: dict[Key, Pod] = {}
        self._by_job: dict[Key, PodSet] = {}  # job key → its pods
        self.live: set[Key] = set()  # placed pods holding resources
        self.held: dict[Key, jobres.Resources] = {}  # what each live pod holds
        self.used: dict[str, Fraction] = {}  # their sum, kept as pods come and go
        self.used_by_queue: dict[str, dict[str, Fraction]] = {}  # the same, by pods' queue
        self.held_in: dict[Key, str] = {}  # each live pod's queue
        self.deleting: set[Key] = set()  # Terminating pods
        self.touched: set[Key] = set()  # jobs whose pods changed since the scheduler's pass
        self.dirty = True  # the scheduler has something new to look at

    def reset(self) -> None:
        """Forget every pod (the shell then lists the store again)."""
        self._pods.clear()
        self._by_job.clear()
        self.live.clear()
        self.held.clear()
        self.used = {}
        self.used_by_queue = {}
        self.held_in.clear()
        self.deleting.clear()
        self.touched.clear()
        self.dirty = True

    def get(self, key: Key) -> Pod | None:
        return self._pods.get(key)

    def every(self) -> list[Pod]:
        """Every cached pod, in the order they were first cached."""
        return list(self._pods.values())

    def of_job(self, job_key: Key) -> PodSet:
        """The job's pods by name, as cached now (read it, do not keep it, never change it)."""
        return self._by_job.get(job_key, _NONE)

    def put(self, pod: Pod) -> Pod | None:
        """Cache `pod` (new, or a newer state of a cached one); the state it replaced."""
        key = pod.key
        job_key = job_key_of(pod)
        old = self._pods.get(key)
        self._pods[key] = pod
        self._by_job.setdefault(job_key, PodSet()).put(pod)
        self.touched.add(job_key)
        holds = pod.placed and (pod.deleting or pod.phase in kubelet.ALIVE)
        if holds != (key in self.live):
            self.dirty = True  # resources taken or freed
            if holds:
                self.live.add(key)
                self.held[key] = jobres.pod_request(pod.spec)
                self.used = jobres.add(self.used, self.held[key])
                queue = self.held_in[key] = _queue(pod)
                self.used_by_queue[queue] = jobres.add(
                    self.used_by_queue.get(queue, {}), self.held[key]
                )
            else:
                self._release(key)
        if old is None or pod.phase != old.phase or pod.deleting != old.deleting:
            self.dirty = True  # a new pod to place, or the gang's count changed
        if pod.deleting:
            self.deleting.add(key)
        return old

    def remove(self, key: Key) -> Pod | None:
        """Forget the pod of `key` (gone from the store); the state it had."""
        pod = self._pods.pop(key, None)
        if pod is None:
            return None
        self._release(key)
        self.deleting.discard(key)
        self.dirty = True
        job_key = job_key_of(pod)
        self.touched.add(job_key)
        siblings = self._by_job.get(job_key)
        if siblings is not None:
            siblings.remove(pod.name)
            if not siblings:
                del self._by_job[job_key]
        return pod

    def _release(self, key: Key) -> None:
        self.live.discard(key)
        held = self.held.pop(key, None)
        if held is not None:
            self.used = jobres.subtract(self.used, held)
            queue = self.held_in.pop(key, DEFAULT_QUEUE)
            left = jobres.subtract(self.used_by_queue.get(queue, {}), held)
            self.used_by_queue[queue] = left
