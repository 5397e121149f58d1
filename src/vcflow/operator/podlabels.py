"""The operator's pod labeller: the two labels the JobFlow controller puts on a flow's vcjobs
(`volcano.sh/createdByJobFlow: <ns>.<flow>`, `volcano.sh/createdByJobTemplate:
<ns>.<template>`) put on the vcjobs' pods too, so that `kubectl logs -l
volcano.sh/createdByJobFlow=<ns>.<flow> --prefix` finds a flow's pods on a cluster as it
does embedded, where vcflow's own job controller copies them (`reconcile.vcjob.pods`).
Volcano's job controller keeps only the pod template's labels, and the vcjobs' pod templates
stay what the flow's templates say, so the operator labels the pods once Volcano made them.

- Watched: the pods with Volcano's `volcano.sh/job-name` label and without the flow label
  (`SELECTOR`: one list and watch of all namespaces, filtered by the API server). A pod,
  once labelled, is not sent again: labelled pods cost nothing, after a restart too.
- Labelled (`decide`, pure): a pod whose controller ownerReference is its vcjob — the same
  namespace, the name its `volcano.sh/job-name` says, the vcjob's uid — when that vcjob
  carries the flow label: one JSON merge patch of `metadata.labels` with the vcjob's two
  labels, nothing else, pinned to the pod's resourceVersion (a pod changed meanwhile is
  refused with 409 and comes again with its watch event).
- Left alone: the pods of vcjobs no flow created, pods their vcjob does not own, and a pod
  carrying one of the labels with another value: a `createdByJobTemplate` is logged once
  per pod; one with any `createdByJobFlow` is not even sent (the selector).
- The vcjob is read from the operator's informer cache (`find_job`); one not there yet — or
  there with another uid, the cache behind a vcjob created again — is looked for again a
  few times (`RETRY_DELAYS`), as is a patch the API server could not take (5xx, 429, down).
- Writes go through the store's client (its QPS limit), only on the leader (`process`
  starts this once the Lease is won) and none after `stop()` returns.

`decide`, `patch_body` and `Backlog` are pure; `PodLabeler` is the I/O: a watch thread
feeding a worker thread through an inbox that keeps one state per pod.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from vcflow.api import names
from vcflow.api.errors import NotFound, VcflowError
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi import resources
from vcflow.kubeapi.status import Forbidden
from vcflow.kubestore import status as statuses
from vcflow.kubestore.client import MERGE_PATCH, KubeClient, Unreachable
from vcflow.kubestore.selectorwatch import SelectorWatch
from vcflow.reconcile.vcjob.pods import COPIED_FLOW_LABELS, JOB_NAME
from vcflow.store.base import Store

log = logging.getLogger("vcflow.operator.podlabels")

FLOW_LABEL = names.LABEL_CREATED_BY_FLOW
#: the labels put on a pod, as the vcjob has them (the local job controller copies the same)
LABELS = COPIED_FLOW_LABELS
#: the pods watched: Volcano's (a job-name label) that lack the flow label
SELECTOR = f"{JOB_NAME},!{FLOW_LABEL}"
#: seconds before the next look at a pod whose vcjob was not found (or a failed patch);
#: given up after the last (a later event of the pod brings it back)
RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: pods whose conflict was logged, remembered by uid (the oldest forgotten past it)
WARNED_MAX = 10_000
VOLCANO_JOB_GROUP = names.GROUP_BATCH

Key = tuple[str, str]
Pod = Mapping[str, Any]


# --- the decision (pure) ---------------------------------------------------------------


@dataclass(frozen=True)
class JobView:
    """What the decision needs of a vcjob: its uid and labels."""

    uid: str
    labels: Mapping[str, str]


class Action(Enum):
    SKIP = "skip"  # nothing to do, now or later
    WAIT = "wait"  # the vcjob is not (yet) the pod's owner as the cache has it: look again
    CONFLICT = "conflict"  # the pod has a label with another value: left alone
    PATCH = "patch"  # add `labels`


@dataclass(frozen=True)
class Decision:
    action: Action
    why: str = ""
    #: PATCH: the labels to add; CONFLICT: the pod's labels that differ from the vcjob's
    labels: Mapping[str, str] = field(default_factory=dict)


def key_of(pod: Pod) -> Key:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _labels(pod: Pod) -> Mapping[str, str]:
    labels = (pod.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def job_name_of(pod: Pod) -> str:
    """The vcjob the pod says it belongs to (its `volcano.sh/job-name` label), or ""."""
    return str(_labels(pod).get(JOB_NAME) or "")


def controller_of(pod: Pod) -> Mapping[str, Any] | None:
    """The pod's controller ownerReference, if it has one."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def decide(pod: Pod, job: JobView | None) -> Decision:
    """What to do with `pod`, given its vcjob as the cache has it (None: not found)."""
    name = job_name_of(pod)
    if not name:
        return Decision(Action.SKIP, f"no {JOB_NAME} label")
    owner = controller_of(pod)
    group = str((owner or {}).get("apiVersion") or "").partition("/")[0]
    if owner is None or (group, owner.get("kind"), owner.get("name")) != (
        VOLCANO_JOB_GROUP,
        "Job",
        name,
    ):
        return Decision(Action.SKIP, f"its controller is not vcjob {name}")
    if job is None:
        return Decision(Action.WAIT, f"vcjob {name} not found")
    if not owner.get("uid") or owner.get("uid") != job.uid:
        return Decision(Action.WAIT, f"vcjob {name} has another uid than its owner's")
    wanted = {k: job.labels[k] for k in LABELS if job.labels.get(k)}
    if FLOW_LABEL not in wanted:
        return Decision(Action.SKIP, f"vcjob {name} was not created by a JobFlow")
    have = _labels(pod)
    differ = {k: str(have[k]) for k in wanted if k in have and have[k] != wanted[k]}
    if differ:
        return Decision(Action.CONFLICT, "a label has another value", differ)
    missing = {k: v for k, v in wanted.items() if k not in have}
    if not missing:
        return Decision(Action.SKIP, "labelled")
    return Decision(Action.PATCH, "", missing)


def patch_body(pod: Pod, labels: Mapping[str, str]) -> dict[str, Any]:
    """The JSON merge patch adding `labels`, pinned to the pod's resourceVersion."""
    meta: dict[str, Any] = {"labels": dict(labels)}
    rv = (pod.get("metadata") or {}).get("resourceVersion")
    if rv:
        meta["resourceVersion"] = str(rv)
    return {"metadata": meta}


@dataclass
class _Held:
    uid: str
    pod: Pod
    tries: int  # looks so far
    due: float


class Backlog:
    """The pods to look at again (`hold`, `due`), and the pods whose conflict was logged
    (`first_warning`). Pure: the caller gives the time."""

    def __init__(self, delays: Sequence[float] = RETRY_DELAYS) -> None:
        self.delays = tuple(delays)
        self._held: dict[Key, _Held] = {}
        self._warned: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, pod: Pod, now: float, tries: int = 0) -> bool:
        """Look at `pod` again later: the `tries`-th look failed (0: an event's). An event
        of a pod held already only updates what is held. False when given up."""
        key, uid = key_of(pod), _uid(pod)
        held = self._held.get(key)
        if tries == 0 and held is not None and held.uid == uid:
            held.pod = pod
            return True
        if tries >= len(self.delays):
            self._held.pop(key, None)
            return False
        self._held[key] = _Held(uid, pod, tries + 1, now + self.delays[tries])
        return True

    def forget(self, key: Key) -> None:
        self._held.pop(key, None)

    def due(self, now: float) -> list[tuple[Pod, int]]:
        """The held pods due by `now`, each with its tries so far, out of the backlog."""
        found = [(k, h) for k, h in self._held.items() if h.due <= now]
        for key, _ in found:
            del self._held[key]
        return [(h.pod, h.tries) for _, h in found]

    def next_due(self) -> float | None:
        return min((h.due for h in self._held.values()), default=None)

    def first_warning(self, uid: str) -> bool:
        """True the first time `uid` is asked about (until `forget_warning`)."""
        if uid in self._warned:
            return False
        self._warned[uid] = None
        while len(self._warned) > WARNED_MAX:
            self._warned.popitem(last=False)
        return True

    def forget_warning(self, uid: str) -> None:
        self._warned.pop(uid, None)


def _uid(pod: Pod) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


# --- the I/O ---------------------------------------------------------------------------


FindJob = Callable[[str, str], JobView | None]


def jobs_of(store: Store) -> FindJob:
    """The vcjob lookup over the operator's store (its informer cache); None when the
    vcjob is not found or cannot be read now."""

    def find(namespace: str, name: str) -> JobView | None:
        try:
            job = store.get(VCJob, namespace, name)
        except NotFound:
            return None
        except VcflowError as exc:
            log.debug("pod labels: reading vcjob %s/%s: %s", namespace, name, exc)
            return None
        return JobView(job.metadata.uid or "", dict(job.metadata.labels))

    return find


class _Inbox:
    """The watch's events for the worker, one per pod (a newer one replaces the held one,
    keeping its place): as many entries at most as pods, however slow the worker."""

    def __init__(self) -> None:
        self._events: dict[Key, tuple[str, Pod]] = {}
        self._ready = threading.Condition()
        self._closed = False

    def put(self, type_: str, pod: Pod) -> None:
        with self._ready:
            self._events[key_of(pod)] = (type_, pod)
            self._ready.notify()

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()

    def get(self, timeout: float | None) -> tuple[str, Pod] | None:
        """The oldest event, waiting up to `timeout` (None: until one or close)."""
        with self._ready:
            self._ready.wait_for(lambda: self._events or self._closed, timeout)
            if self._closed or not self._events:
                return None
            key = next(iter(self._events))
            return self._events.pop(key)


class PodLabeler:
    """Labels the pods of flows' vcjobs (see the module docstring) from `start` to `stop`,
    through `client` (the store's: its rate limit), in `namespaces` (empty: all)."""

    def __init__(
        self,
        client: KubeClient,
        find_job: FindJob,
        namespaces: Sequence[str] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.find_job = find_job
        self.namespaces = frozenset(namespaces)
        self.clock = clock
        self.backlog = Backlog()
        self.labelled = 0  # pods patched
        self._inbox = _Inbox()
        self._stopped = threading.Event()
        self._writing = threading.Lock()  # held by a patch in flight; `stop` waits for it
        self._refused_said = False
        self.watch = SelectorWatch(
            client, resources.PODS.path(None), SELECTOR, "Pod", log, "pod labels: watching pods"
        )
        self._watcher = threading.Thread(target=self._watch, name="vcflow-podlabels-watch")
        self._worker = threading.Thread(target=self._work, name="vcflow-podlabels")
        self._watcher.daemon = self._worker.daemon = True

    def start(self) -> None:
        where = ", ".join(sorted(self.namespaces)) or "all namespaces"
        log.info("pod labels: labelling flows' pods (pods -l %s, %s)", SELECTOR, where)
        self._worker.start()
        self._watcher.start()

    def stop(self, timeout: float = 5.0) -> None:
        """No patch is sent once this returns (one in flight is waited for); the watch
        ends at its next frame."""
        self._stopped.set()
        self._inbox.close()
        with self._writing:
            pass
        if self._worker.ident is not None:
            self._worker.join(timeout)

    # --- the watch ------------------------------------------------------------------------

    def _watch(self) -> None:
        self.watch.run(self._inbox.put, self._stopped)

    # --- the worker -----------------------------------------------------------------------

    def _work(self) -> None:
        while not self._stopped.is_set():
            due = self.backlog.next_due()
            wait = None if due is None else max(0.0, due - self.clock())
            event = self._inbox.get(wait)
            looks = [(event[0], event[1], 0)] if event is not None else []
            looks += [("RETRY", pod, tries) for pod, tries in self.backlog.due(self.clock())]
            for type_, pod, tries in looks:
                try:
                    self._look(type_, pod, tries)
                except Exception:  # (one pod's surprise must not end the labelling)
                    log.exception("pod labels: pod %s/%s", *key_of(pod))

    def _look(self, type_: str, pod: Pod, tries: int) -> None:
        """One pod's event (or its `tries`-th look again): decided, and patched if so."""
        key = key_of(pod)
        if self.namespaces and key[0] not in self.namespaces:
            return
        if type_ == "DELETED":
            self.backlog.forget(key)
            self.backlog.forget_warning(_uid(pod))
            return
        name = job_name_of(pod)
        decision = decide(pod, self.find_job(key[0], name) if name else None)
        if decision.action is not Action.WAIT:
            self.backlog.forget(key)
        if decision.action is Action.WAIT:
            if not self.backlog.hold(pod, self.clock(), tries):
                log.debug("pod labels: pod %s/%s left unlabelled: %s", *key, decision.why)
        elif decision.action is Action.CONFLICT:
            if self.backlog.first_warning(_uid(pod)):
                shown = ", ".join(f"{k}={v}" for k, v in sorted(decision.labels.items()))
                log.warning(
                    "pod labels: pod %s/%s left as it is: it carries %s, not its vcjob's",
                    *key,
                    shown,
                )
        elif decision.action is Action.PATCH:
            self._patch(pod, decision.labels, tries)

    def _patch(self, pod: Pod, labels: Mapping[str, str], tries: int) -> None:
        namespace, name = key_of(pod)
        path = resources.PODS.path(namespace, name)
        with self._writing:
            if self._stopped.is_set():
                return
            try:
                response = self.client.request(
                    "PATCH", path, body=patch_body(pod, labels), content_type=MERGE_PATCH
                )
            except Unreachable as exc:
                log.debug("pod labels: patching pod %s/%s: %s", namespace, name, exc)
                self.backlog.hold(pod, self.clock(), max(tries, 1))
                return
        if response.ok:
            self.labelled += 1
            log.debug("pod labels: labelled pod %s/%s %s", namespace, name, dict(labels))
            return
        error = statuses.error_for(response, kind="Pod", namespace=namespace, name=name)
        if isinstance(error, NotFound) or response.status == 409:
            return  # gone, or changed since: its next event brings it again
        if isinstance(error, Forbidden):
            level = logging.DEBUG if self._refused_said else logging.ERROR
            self._refused_said = True
            log.log(
                level,
                "pod labels: may not patch pod %s/%s (the operator's role needs `patch` on "
                "pods; --no-label-pods turns labelling off): %s",
                namespace,
                name,
                error,
            )
            return
        if response.status == 429 or response.status >= 500:
            log.debug("pod labels: patching pod %s/%s: %s", namespace, name, error)
            self.backlog.hold(pod, self.clock(), max(tries, 1))
            return
        if self.backlog.first_warning(_uid(pod)):
            log.warning("pod labels: pod %s/%s not labelled: %s", namespace, name, error)
