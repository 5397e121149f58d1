"""`KubeStore`: the `Store` protocol over any Kubernetes API server — `vcflow server`, or a
real cluster (the Kubernetes mode) — so the CLI, the controllers and the runtime run
against either unchanged. Built on the official `kubernetes` package at its ApiClient /
REST level (`client.KubeClient`): its configuration loaders (kubeconfig, in-cluster, URL +
token + CA) and TLS are the ones every Kubernetes Python tool trusts, while the generated
models and the dynamic client are skipped — the first do not know Volcano's kinds and
drop fields they do not know, the second needs a discovery round trip per process — so the
objects go straight from JSON into vcflow's own models, and the `Warning` headers are read.
Its requests and reads (direct and cached) are in `calls`, `apply` in `applying`, the
events side in `feed` (its base class).

The API server owns the semantics (admission, resourceVersions, generation, garbage
collection); where the protocol promises more than the Kubernetes API gives:
- no `transaction()` (`base.Transactional`): the API has no multi-object transaction.
  Each write is atomic on its own; `apply` dry-runs every object (`dryRun=All`) before
  writing any, so an object admission refuses fails the batch before anything is written
  (a flow judged against the input's own templates too: the server judges it against the
  stored ones).
  An object another writer created, changed or deleted since `apply` read it is read and
  planned again (an identical one is `unchanged`), a bounded number of times; a write
  that still fails undoes the writes before it — the objects created deleted, the ones
  updated written back — but for what another writer relies on or changed meanwhile.
- `admit=False` cannot skip the server's admission; it is ignored.
- resourceVersions are the server's: increasing, not gap-free (etcd revisions).
- Events (core v1 `Event`s, as the controllers' Recorder makes them) go through the
  events API, `events.k8s.io/v1`, converted both ways (`eventsapi`).
- events come from one persistent watch stream per kind (`informer`), started when the
  kind is first read, answering `events_since`, `poll_events` and `wait` from what has
  arrived (the store's own writes waited for); a watch from resourceVersion 0 starts with
  the current objects as ADDED, as Kubernetes' does.
Writes without a resourceVersion ("unconditional") read the object and write with its
resourceVersion, re-reading and retrying up to `RETRIES` times on 409 Conflict — but for
status writes: a JSON merge patch of the status subresource (`statuspatch`), from the
status the caller's `base` holds (else the stored one), with the caller's resourceVersion
as its precondition if it gives one; a concurrent spec write does not make it fail. An
unconditional one over a status another writer changed since `base` merges into theirs.

Opt-ins of the operator (client-go's informer caches and EventBroadcaster):
- `cached_reads`: get/list/names/phase of the watched kinds (`CACHED`) answered from the
  informer's cache (`cache`), listed once and kept by the watch; the answer to every
  write of this store goes into it at once (if newer), so the caller reads its own writes.
  A write refused with 409 (AlreadyExists, Conflict: the caller's view was stale) re-reads
  the object directly into the cache, so the caller's next read is fresh. Other reads are
  direct. `poll_events` then does not wait for the watches to bring the store's own writes
  back (the cache has them): their events come at a later poll.
- `async_events`: Events are queued to a sender thread (`eventsender`): `create` of an
  Event returns at once, the Event as given. The sender has a client of its own
  (`KubeClient.sibling`: its own connections and rate limit), as kube-scheduler and
  kube-controller-manager send theirs: a burst's Events do not slow the controllers.
- `namespaces` (`vcflow operator --namespace NS ...`; none: all): a list of all namespaces
  is one list per namespace, and events of other namespaces are dropped (`events_since`,
  `poll_events`, `watch`); other calls are as without. The informer still watches each
  kind in all namespaces, so the operator's RBAC needs list and watch cluster-wide.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from vcflow.api import clusterscope
from vcflow.api import names as apinames
from vcflow.api.errors import Conflict, StoreError, ValidationFailed
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi import resources
from vcflow.kubeapi.fieldvalidation import Validation
from vcflow.kubestore import applying, calls, eventsapi, feed, statuspatch
from vcflow.kubestore import status as statuses
from vcflow.kubestore.client import MERGE_PATCH, KubeClient, Response
from vcflow.kubestore.eventsender import EventSender
from vcflow.kubestore.informer import Informer
from vcflow.store import wire
from vcflow.store.base import (
    ApplyResult,
    Defaulter,
    KindInfo,
    KindRegistry,
    R,
    SelectorLike,
    Written,
    default_kinds,
)

#: tries of an unconditional write (read, write with that resourceVersion) on 409 Conflict
RETRIES = 5
#: the kinds `cached_reads` answers from the informer's cache (what the controllers read)
CACHED: tuple[type[Resource], ...] = (JobFlow, JobTemplate, VCJob)


class KubeStore(feed.Feed):
    """The Store protocol over the Kubernetes API (see the module docstring): its reads and
    writes here, its events those of its base class, `feed.Feed`."""

    def __init__(
        self,
        client: KubeClient,
        *,
        kinds: KindRegistry | None = None,
        reporting_instance: str | None = None,
        cached_reads: bool = False,
        async_events: bool = False,
        namespaces: Sequence[str] = (),
    ) -> None:
        """`reporting_instance`: the Events' `reportingInstance` (default: vcflow-<host>);
        `cached_reads`, `async_events`, `namespaces`: see the module docstring."""
        self.client = client
        self.reporting_instance = reporting_instance or eventsapi.default_instance()
        self.kinds = kinds.copy() if kinds is not None else default_kinds()
        self.informer = Informer(client)
        self.cached: frozenset[type[Resource]] = frozenset(CACHED if cached_reads else ())
        super().__init__(calls.Calls(client, self.kinds, self.informer, self.cached), namespaces)
        self.events: EventSender | None = None
        self._event_client: KubeClient | None = None
        if async_events:  # (through a client of their own: `KubeClient.sibling`)
            self._event_client = client.sibling()
            via = calls.Calls(self._event_client, self.kinds, self.informer, self.cached)
            self.events = EventSender(lambda event: self._create(event, via=via).object)

    def __enter__(self) -> KubeStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self.events is not None:
            self.events.close()
        if self._event_client is not None:
            self._event_client.close()
        self.informer.stop()
        self.client.close()

    @property
    def url(self) -> str:
        return self.client.url

    # --- kinds --------------------------------------------------------------------------

    def register_kind(self, model: type[Resource], *, defaulter: Defaulter | None = None) -> None:
        self.kinds.register(model, defaulter=defaulter)

    # --- reads --------------------------------------------------------------------------

    def get(self, kind: type[R], namespace: str, name: str) -> R:
        info, resource = self.calls.kind(kind)
        if kind in self.cached:
            return kind.model_validate_json(self.calls.cached_get(info, namespace, name))
        path = resource.path(namespace, name)
        return cast(R, self.calls.model(info, self.calls.call(info, "GET", path, name=name).json()))

    def list(
        self, kind: type[R], namespace: str | None = None, label_selector: SelectorLike = None
    ) -> builtins.list[R]:
        """Objects sorted by (namespace, name); with `namespaces`, of those only (a
        cluster-scoped kind's all: its objects are of no namespace)."""
        if not self.namespaces or clusterscope.is_cluster_scoped(kind):
            return self._list(kind, namespace, label_selector)
        wanted = self.namespaces if namespace is None else (namespace,)
        return [
            obj
            for each in wanted
            if each in self.namespaces
            for obj in self._list(kind, each, label_selector)
        ]

    def _list(
        self, kind: type[R], namespace: str | None, label_selector: SelectorLike
    ) -> builtins.list[R]:
        info, _ = self.calls.kind(kind)
        if kind in self.cached:
            found = self.calls.cached_list(info, namespace, label_selector)
            return [kind.model_validate_json(data) for _, data in found]
        items, _ = self.calls.list_data(info, namespace, label_selector)
        return [cast(R, self.calls.model(info, item)) for item in items]

    def names(
        self, kind: type[Resource], namespace: str, label_selector: SelectorLike = None
    ) -> builtins.list[str]:
        info, _ = self.calls.kind(kind)
        if kind in self.cached:
            return [key[1] for key, _ in self.calls.cached_list(info, namespace, label_selector)]
        items, _ = self.calls.list_data(info, namespace, label_selector)
        return [str((item.get("metadata") or {}).get("name") or "") for item in items]

    def phase(self, kind: type[Resource], namespace: str, name: str) -> str:
        info, _ = self.calls.kind(kind)
        if kind in self.cached:
            data = json.loads(self.calls.cached_get(info, namespace, name))
        else:
            data = self.calls.get_data(info, namespace, name)
        status = data.get("status")
        state = status.get("state") if isinstance(status, dict) else None
        phase = state.get("phase") if isinstance(state, dict) else None
        return phase if isinstance(phase, str) else ""

    # --- writes -------------------------------------------------------------------------

    def create(self, obj: R, *, admit: bool = True) -> R:
        """POST the object; admission always runs on the server (`admit` is ignored). A
        status given is written after (the status subresource drops it on create). With
        `async_events`, an Event is queued and returned as given."""
        if self.events is not None and isinstance(obj, Event):
            self.events.submit(obj)
            return obj
        created = self._create(obj).object
        if "status" in obj.model_fields_set and obj.to_dict().get("status"):
            wanted = wire.status_of(obj).get("status")
            if created.to_dict().get("status") != wanted:
                meta = created.metadata
                written = self._write_status(
                    self.kinds.of(obj),
                    meta.namespace,
                    meta.name,
                    wanted,
                    meta.resource_version,
                    meta.uid,
                    created,
                )
                return cast(R, written)
        return created

    def create_reviewed(self, obj: R, *, validation: Validation = Validation.WARN) -> Written[R]:
        """POST the object with `fieldValidation`; the server's admission warnings (its
        `Warning` headers) returned. A status given is dropped, as for a client."""
        return self._create(obj, [("fieldValidation", validation.api)])

    def _create(
        self, obj: R, query: Sequence[tuple[str, str]] = (), *, via: calls.Calls | None = None
    ) -> Written[R]:
        info = self.kinds.of(obj)
        namespace = obj.namespace or apinames.DEFAULT_NAMESPACE
        body = self._outgoing(info, wire.incoming(obj))
        body.setdefault("metadata", {})["namespace"] = namespace
        for key in wire.SERVER_FIELDS:
            body["metadata"].pop(key, None)
        through = via or self.calls
        path = through.resource(info).path(namespace)
        response = through.call(
            info, "POST", path, namespace=namespace, name=obj.name, query=query, body=body
        )
        created = cast(R, through.model(info, response.json()))
        return Written(created, calls.warnings(info, response, namespace, created.name))

    def update(self, obj: R, *, admit: bool = True) -> R:
        """PUT the object (its status is the server's to keep); without a resourceVersion,
        against the stored one (`RETRIES`)."""
        return self._update(obj).object

    def update_reviewed(self, obj: R, *, validation: Validation = Validation.WARN) -> Written[R]:
        """`update` with `fieldValidation`, the server's admission warnings returned."""
        return self._update(obj, [("fieldValidation", validation.api)])

    def _update(self, obj: R, query: Sequence[tuple[str, str]] = ()) -> Written[R]:
        info = self.kinds.of(obj)
        body = self._outgoing(info, wire.incoming(obj))
        meta = obj.metadata
        return cast(Written[R], self._put(info, body, meta.resource_version, meta.uid, query))

    def _outgoing(self, info: KindInfo, body: dict[str, Any]) -> dict[str, Any]:
        """The body of a write: an Event in the events API's shape (`eventsapi`)."""
        if info.model is Event:
            return eventsapi.outgoing(body, instance=self.reporting_instance)
        return body

    def _put(
        self,
        info: KindInfo,
        body: dict[str, Any],
        resource_version: str,
        uid: str,
        query: Sequence[tuple[str, str]] = (),
    ) -> Written[Resource]:
        meta = body.setdefault("metadata", {})
        namespace = meta.get("namespace") or apinames.DEFAULT_NAMESPACE
        name = str(meta.get("name") or "")
        path = self.calls.resource(info).path(namespace, name)
        for attempt in range(RETRIES):
            rv = resource_version
            if not rv:
                stored = self.calls.get_data(info, namespace, name)["metadata"]
                if uid and stored.get("uid") != uid:
                    raise Conflict(
                        f"{info.describe(namespace, name)}: uid {uid} is not the stored "
                        f"object's ({stored.get('uid')}): it was deleted and created again"
                    )
                rv = str(stored.get("resourceVersion") or "")
            meta["resourceVersion"] = rv
            if uid:
                meta["uid"] = uid
            try:
                response = self.calls.call(
                    info, "PUT", path, namespace=namespace, name=name, query=query, body=body
                )
            except Conflict:
                if resource_version or attempt == RETRIES - 1:
                    raise
                continue
            return Written(
                self.calls.model(info, response.json()),
                calls.warnings(info, response, namespace, name),
            )
        raise AssertionError("unreachable")

    def update_status(self, obj: R) -> R:
        """A merge patch of the status subresource from the stored status to `obj`'s (read
        first: `obj` is not known to be the stored object); `obj`'s resourceVersion, if
        any, is sent as the precondition."""
        info = self.kinds.of(obj)
        meta = obj.metadata
        status = wire.status_of(obj).get("status")
        return cast(
            R,
            self._write_status(
                info, obj.namespace, obj.name, status, meta.resource_version, meta.uid
            ),
        )

    def update_status_data(
        self,
        kind: type[R],
        namespace: str,
        name: str,
        status: Mapping[str, Any] | None,
        *,
        resource_version: str = "",
        uid: str = "",
        base: R | None = None,
    ) -> R:
        """A merge patch of the status subresource from `base`'s status (the caller's copy
        of the object: nothing is read first) or, without `base`, the stored status."""
        info, _ = self.calls.kind(kind)
        value = None if status is None else dict(status)
        return cast(
            R, self._write_status(info, namespace, name, value, resource_version, uid, base)
        )

    def _write_status(
        self,
        info: KindInfo,
        namespace: str,
        name: str,
        status: Any,
        resource_version: str,
        uid: str,
        base: Resource | None = None,
    ) -> Resource:
        """PATCH `.../status` with a JSON merge patch (`statuspatch`): only the status goes,
        so a concurrent write of the spec or metadata is no conflict, and nothing else of
        the object can be overwritten. `resource_version` and `uid`, when given, go in the
        patch's metadata as preconditions (409 Conflict when stale)."""
        namespace = namespace or apinames.DEFAULT_NAMESPACE
        if base is not None and (base.namespace or namespace, base.name) == (namespace, name):
            old = wire.status_of(base).get("status")
        else:
            stored = self.calls.get_data(info, namespace, name)
            meta = stored["metadata"]
            if uid and meta.get("uid") != uid:
                raise self._recreated(info, namespace, name, uid, str(meta.get("uid")))
            old = stored.get("status")
            same_rv = resource_version in ("", meta.get("resourceVersion"))
            if old == status and same_rv:
                return self.calls.model(info, stored)  # nothing to write
        body = statuspatch.status_patch(old, status, resource_version=resource_version, uid=uid)
        path = self.calls.resource(info).path(namespace, name, "status")
        try:
            response = self.calls.call(
                info,
                "PATCH",
                path,
                namespace=namespace,
                name=name,
                body=body,
                content_type=MERGE_PATCH,
            )
        except (Conflict, ValidationFailed) as exc:
            # a uid that is not the stored object's: kube-apiserver refuses the patch's
            # metadata.uid as a change of an immutable field (422), vcflow server as a
            # failed precondition (409); either way, say that it was deleted and created again
            stale_uid = isinstance(exc, Conflict) or any(
                e.path == "metadata.uid" for e in exc.errors
            )
            if uid and stale_uid:
                current = self.calls.get_data(info, namespace, name)["metadata"].get("uid")
                if current != uid:
                    raise self._recreated(info, namespace, name, uid, str(current)) from None
            raise
        return self.calls.model(info, response.json())

    @staticmethod
    def _recreated(info: KindInfo, namespace: str, name: str, uid: str, stored: str) -> Conflict:
        return Conflict(
            f"{info.describe(namespace, name)}: uid {uid} is not the stored "
            f"object's ({stored}): it was deleted and created again"
        )

    def bind(
        self, namespace: str, name: str, node_name: str, *, uid: str = "", base: Pod | None = None
    ) -> Pod:
        """POST `pods/NAME/binding`; a clear error when the server does not serve it. A pod
        bound to `node_name` already is returned as it is, as the other stores do
        (kube-apiserver answers its binding again with 409 Conflict)."""
        _info, resource = self.calls.kind(Pod)
        binding: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, **({"uid": uid} if uid else {})},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = resource.path(namespace, name, "binding")
        response = self.client.request("POST", path, body=binding)
        if response.status in (404, 405) and not _names_object(response, name):
            raise StoreError(f"the server {self.url} does not serve pods/binding")
        if not response.ok:
            error = statuses.error_for(response, kind="Pod", namespace=namespace, name=name)
            if isinstance(error, Conflict) and node_name:
                stored = self.get(Pod, namespace, name)
                same = stored.spec is not None and stored.spec.node_name == node_name
                deleting = stored.metadata.deletion_timestamp is not None
                if same and not deleting and uid in ("", stored.metadata.uid):
                    return stored
            raise error
        return self.get(Pod, namespace, name)

    def delete(
        self,
        kind: type[R],
        namespace: str,
        name: str,
        *,
        force: bool = False,
        resource_version: str = "",
        propagation: str = "Background",
    ) -> R:
        """DELETE (`force`: gracePeriodSeconds=0); returns the object as the server
        answers it: the object while finalizers hold it (marked deleted) and for the kinds
        whose registry returns it (pods), else — kube-apiserver answers a Success Status
        for a custom resource, ConfigMap, Secret, Event or Lease removed at once — only
        its name, namespace and uid (the Status's): no status, no phase. Its last state is
        the caller's to know (the flow controller takes the vcjob's from what it saw)."""
        info, resource = self.calls.kind(kind)
        options: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": propagation,
        }
        query = []
        if force:
            options["gracePeriodSeconds"] = 0
            query.append(("gracePeriodSeconds", "0"))
        if resource_version:
            options["preconditions"] = {"resourceVersion": resource_version}
        path = resource.path(namespace, name)
        since = self.informer.position(info.model)
        response = self.calls.call(
            info, "DELETE", path, namespace=namespace, name=name, query=query, body=options
        )
        found = response.json()
        if found.get("kind") == "Status":  # (no resourceVersion: the DELETED event is waited)
            details = found.get("details")
            uid = details.get("uid") if isinstance(details, dict) else None
            uid = uid if isinstance(uid, str) else ""
            self.informer.deleted(info.model, (namespace, name), uid, since)
            if info.model in self.cached:
                self.informer.removed(info.model, (namespace, name), uid)
            found = {"metadata": {"name": name, "namespace": namespace, "uid": uid}}
        return cast(R, self.calls.model(info, found))

    def pod_log(
        self,
        namespace: str,
        name: str,
        *,
        container: str | None = None,
        follow: bool = False,
        tail: int | None = None,
        previous: bool = False,
        attempt: int | None = None,
        timestamps: bool = False,
        since_seconds: int | None = None,
        since_time: str | None = None,
    ) -> Iterator[bytes]:
        """A pod's container log (`pods/NAME/log`), as it comes when `follow`; `attempt` is
        vcflow's extension (the kept log of attempt N)."""
        query = [("container", container)] if container else []
        if follow:
            query.append(("follow", "true"))
        if tail is not None:
            query.append(("tailLines", str(tail)))
        if previous:
            query.append(("previous", "true"))
        if attempt is not None:
            query.append(("attempt", str(attempt)))
        if timestamps:
            query.append(("timestamps", "true"))
        if since_seconds is not None:
            query.append(("sinceSeconds", str(since_seconds)))
        if since_time is not None:
            query.append(("sinceTime", since_time))
        path = resources.PODS.path(namespace, name, "log")
        timeout = None if not follow else 3600.0
        with self.client.stream(path, query=query, timeout=timeout, lines=False) as (head, body):
            if not head.ok:
                raise statuses.error_for(head, kind="Pod", namespace=namespace, name=name)
            yield from body

    # --- apply --------------------------------------------------------------------------

    def apply(self, objects: Sequence[Resource]) -> builtins.list[ApplyResult]:
        """kubectl apply (`applying`): each object created or updated if changed, all of
        them dry-run first; a write that fails undoes the writes before it."""
        return applying.Applier(self.calls, self).apply(objects)


def _names_object(response: Response, name: str) -> bool:
    """Whether a 404 is about the pod (it is gone) rather than the route (not served)."""
    details = statuses.status_of(response).get("details") or {}
    return details.get("name") == name
