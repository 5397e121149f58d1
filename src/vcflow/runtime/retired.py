"""The finished vcjobs the runtime shell no longer keeps whole (`executor.Executor`): a job
that ended (`FINISHED_JOB_PHASES`), with no timer, nothing to create or write, and every pod
ended, is dropped from the caches — a 10,000-item sweep would otherwise hold every vcjob and
pod it ran. What stays is what tells the shell's watch that an event is its own past write
(the resourceVersion last cached, per job and per pod) and which job a pod belongs to.

Any newer event about a retired job or one of its pods, or a Command naming it, revives it:
the shell reads the job and its pods from the store again and syncs it, as a restarted
runtime does every job (`Executor.start`). No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcflow.api import names

Key = names.ObjectKey


@dataclass(frozen=True, slots=True)
class RetiredJob:
    uid: str
    rv: int  # the resourceVersion last cached
    pods: tuple[Key, ...]


@dataclass(frozen=True, slots=True)
class RetiredPod:
    job: Key
    rv: int


class Retired:
    def __init__(self) -> None:
        self._jobs: dict[Key, RetiredJob] = {}
        self._pods: dict[Key, RetiredPod] = {}

    def __len__(self) -> int:
        return len(self._jobs)

    def __contains__(self, job_key: object) -> bool:
        return job_key in self._jobs

    def add(self, job_key: Key, uid: str, rv: int, pods: dict[Key, int]) -> None:
        """Remember a job dropped from the caches, with each of its pods' resourceVersion."""
        self._jobs[job_key] = RetiredJob(uid, rv, tuple(pods))
        for key, pod_rv in pods.items():
            self._pods[key] = RetiredPod(job_key, pod_rv)

    def job(self, job_key: Key) -> RetiredJob | None:
        return self._jobs.get(job_key)

    def owner(self, pod_key: Key) -> Key | None:
        """The retired job a pod belongs to, None if the pod is not retired."""
        found = self._pods.get(pod_key)
        return found.job if found is not None else None

    def is_past(self, key: Key, rv: int, *, pod: bool) -> bool:
        """Is an event at `rv` about this retired job (or pod) one the cache had seen?"""
        found = self._pods.get(key) if pod else self._jobs.get(key)
        return found is not None and rv <= found.rv

    def pop(self, job_key: Key) -> RetiredJob | None:
        """Forget a retired job and its pods (it is being revived, or it is gone)."""
        found = self._jobs.pop(job_key, None)
        if found is not None:
            for key in found.pods:
                self._pods.pop(key, None)
        return found

    def clear(self) -> None:
        self._jobs.clear()
        self._pods.clear()
