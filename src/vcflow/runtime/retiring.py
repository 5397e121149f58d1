"""The executor's finished jobs on their way out of its caches and back (`retired` says
what stays of one): which finished since the runtime was last idle (`finishing`), when one
may go — nothing held for it and every pod ended — what going drops (its job record, its
pods from the cache and the node, its spec's shape), and bringing one back, read from the
store again, when a newer event or a Command names it. The executor decides when; the
caches are the executor's, shared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vcflow.api import names
from vcflow.api.errors import NotFound
from vcflow.api.phases import FINISHED_JOB_PHASES
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import kubelet
from vcflow.reconcile.vcjob.spec import forget_shape
from vcflow.runtime.gangpass import GangPass
from vcflow.runtime.jobrecord import JobRecord, rv
from vcflow.runtime.node import Node
from vcflow.runtime.podcache import PodCache
from vcflow.runtime.retired import Retired
from vcflow.store.base import Store, WatchEvent

Key = names.ObjectKey


class Retiring:
    def __init__(
        self,
        store: Store,
        jobs: dict[Key, JobRecord],
        pods: PodCache,
        node: Node[Any],
        gang: GangPass,
    ) -> None:
        self.store, self.jobs, self.pods, self.node, self.gang = store, jobs, pods, node, gang
        self.retired = Retired()
        self.finishing: set[Key] = set()  # jobs finished since the runtime was last idle
        #: jobs found gone as they were revived: their deletion is still to be told
        self.vanished: dict[Key, str] = {}

    def clear(self) -> None:
        self.retired.clear()
        self.finishing.clear()
        self.vanished.clear()

    def retire_finished(self, held: Callable[[Key, JobRecord], bool]) -> None:
        """Retire the jobs that finished since the last call, but those `held` (a timer,
        pods to create, a status to write) or with a pod not ended: those are looked at
        again when they next change."""
        finishing, self.finishing = self.finishing, set()
        for key in finishing:
            record = self.jobs.get(key)
            if record is None or record.job.phase not in FINISHED_JOB_PHASES:
                continue
            if not held(key, record) and all(
                not p.deleting and p.phase not in kubelet.ALIVE and p.key not in self.node.active
                for p in self.pods.of_job(key).values()
            ):
                self._retire(key, record)

    def _retire(self, key: Key, record: JobRecord) -> None:
        kept = {pod.key: rv(pod) for pod in self.pods.of_job(key).values()}
        for pod_key in kept:
            self.pods.remove(pod_key)
            self.node.release(pod_key)
        del self.jobs[key]
        forget_shape(record.job)
        self.gang.forget(key)
        self.retired.add(key, record.job.metadata.uid, rv(record.job), kept)

    def reviving(self, event: WatchEvent, deleted: bool) -> tuple[bool, Key | None]:
        """(skip it, the job to revive first) for `event`: one about a retired job (or one
        of its pods) that it had seen is skipped; a newer one revives the job."""
        pod = event.model is Pod
        job_key = self.retired.owner(event.key) if pod else event.key
        if job_key is None or (not pod and event.model is not VCJob) or job_key not in self.retired:
            return False, None
        if not deleted and self.retired.is_past(event.key, event.resource_version, pod=pod):
            return True, None
        return False, job_key

    def revive(self, key: Key) -> VCJob | None:
        """Read a retired job's pods into the cache and the job from the store again: the
        job to sync, None when it is gone (its deletion then told when its event comes)."""
        found = self.retired.pop(key)
        if found is None:
            return None
        for pod_key in found.pods:
            try:
                self.pods.put(self.store.get(Pod, *names.split_key(pod_key)))
            except NotFound:
                self.node.forget(pod_key)
        try:
            job: VCJob | None = self.store.get(VCJob, *names.split_key(key))
        except NotFound:
            job = None
        if job is None or job.metadata.uid != found.uid:
            self.vanished[key] = found.uid
        return job
