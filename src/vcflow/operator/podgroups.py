"""The operator's PodGroup notes: why vc-scheduler cannot place a flow's waiting vcjob,
in the flow's status. Volcano's scheduler writes it on the vcjob's PodGroup (its latest
condition, `Unschedulable`, e.g. `NotEnoughResources: 1/0 tasks in gang unschedulable:
pod group is not ready, 1 minAvailable`); the operator copies it onto the vcjob as the
annotation `vcflow.io/unschedulable` (`reason: message`), which the flow controller shows
as that job's condition in the flow's status (`reconcile.entries.condition_of`), where
`vcflow describe` and `kubectl get jf -o yaml` read it — as the local runtime's reason.

- Watched: the PodGroups of the flows' vcjobs only (`SELECTOR`: Volcano's job controller
  copies the vcjob's labels onto its PodGroup), one list and watch of all namespaces.
- Written: one merge patch of the vcjob's annotation when the note changes, and one to
  drop it when the PodGroup is no longer waiting with one; nothing for PodGroups that
  never waited. Through the store's client (its QPS limit), on the leader only.

`note_of` is pure; `PodGroupNotes` is the I/O, one thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from vcflow.api import names
from vcflow.api.errors import NotFound, VcflowError
from vcflow.kubestore.client import MERGE_PATCH, KubeClient
from vcflow.kubestore.selectorwatch import SelectorWatch
from vcflow.reconcile.entries import UNSCHEDULABLE, UNSCHEDULABLE_ANNOTATION

log = logging.getLogger("vcflow.operator.podgroups")

PATH = "/apis/scheduling.volcano.sh/v1beta1/podgroups"
JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{name}"
SELECTOR = names.LABEL_CREATED_BY_FLOW
#: the PodGroup phases in which its vcjob waits (Volcano: Pending, then Inqueue)
WAITING = ("Pending", "Inqueue")

Key = tuple[str, str]  # the vcjob's namespace and name


def note_of(group: Mapping[str, Any]) -> tuple[Key | None, str | None]:
    """The vcjob a PodGroup is of (None: no vcjob controls it) and why it waits (None:
    it does not: its phase is past waiting, or its latest condition is not Unschedulable)."""
    meta = group.get("metadata") or {}
    owner = next(
        (
            r
            for r in meta.get("ownerReferences") or []
            if r.get("controller") and r.get("kind") == "Job"
        ),
        None,
    )
    if owner is None:
        return None, None
    key = (str(meta.get("namespace") or ""), str(owner.get("name") or ""))
    status = group.get("status") or {}
    conditions = status.get("conditions") or []
    if status.get("phase") not in WAITING or not conditions:
        return key, None
    last = conditions[-1]
    if last.get("type") != UNSCHEDULABLE or last.get("status") != "True":
        return key, None
    reason, message = last.get("reason") or "", last.get("message") or ""
    return key, f"{reason}: {message}" if reason and message else (reason or message or None)


class PodGroupNotes:
    """Copies PodGroups' Unschedulable notes onto their vcjobs from `start` to `stop`,
    through `client`, in `namespaces` (empty: all)."""

    def __init__(self, client: KubeClient, namespaces: Sequence[str] = ()) -> None:
        self.client = client
        self.namespaces = frozenset(namespaces)
        #: the note last written on each waiting vcjob (None: dropped)
        self.written: dict[Key, str | None] = {}
        self._stopped = threading.Event()
        self._refused_said = False
        self._thread = threading.Thread(target=self._watch, name="vcflow-podgroups", daemon=True)

    def start(self) -> None:
        log.info("podgroups: copying Unschedulable notes (podgroups -l %s)", SELECTOR)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """No patch is sent once this returns (but one in flight); the watch ends at its
        next frame."""
        self._stopped.set()
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def look(self, type_: str, group: Mapping[str, Any]) -> None:
        """One PodGroup event: the vcjob's note patched if it changed."""
        key, note = note_of(group)
        if key is None or (self.namespaces and key[0] not in self.namespaces):
            return
        if type_ == "DELETED":
            self.written.pop(key, None)
            return
        if self.written.get(key) == note:
            return  # (never noted and not waiting: nothing to write)
        if self._patch(key, note):
            if note is None:
                self.written.pop(key, None)
            else:
                self.written[key] = note

    def _patch(self, key: Key, note: str | None) -> bool:
        if self._stopped.is_set():
            return False
        path = JOBS.format(namespace=key[0], name=key[1])
        body = {"metadata": {"annotations": {UNSCHEDULABLE_ANNOTATION: note}}}
        try:
            response = self.client.request("PATCH", path, body=body, content_type=MERGE_PATCH)
        except VcflowError as exc:
            log.debug("podgroups: patching vcjob %s/%s: %s", *key, exc)
            return False
        if response.ok or response.status == 404:
            return True
        if response.status == 403 and not self._refused_said:
            self._refused_said = True
            log.error("podgroups: may not patch vcjob %s/%s (HTTP 403)", *key)
        return False

    def _watch(self) -> None:
        watch = SelectorWatch(
            self.client, PATH, SELECTOR, "PodGroup", log, "podgroups: watching podgroups"
        )
        try:
            watch.run(self.look, self._stopped, missing_ends=True)
        except NotFound:  # (no Volcano scheduling API here, e.g. `vcflow server`)
            log.info("podgroups: the API server serves no PodGroups: no notes")
