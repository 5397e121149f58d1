"""`KubeStore`: the `Store` protocol over any Kubernetes API server — `vcflow server`, or a
real cluster (the Kubernetes mode) — so the CLI, the controllers and the runtime run
against either unchanged. Built on the official `kubernetes` package at its ApiClient /
REST level (`client.KubeClient`): its configuration loaders (kubeconfig, in-cluster, URL +
token + CA) and TLS are the ones every Kubernetes Python tool trusts, while the generated
models and the dynamic client are skipped — the first do not know Volcano's kinds and
drop fields they do not know, the second needs a discovery round trip per process — so the
objects go straight from JSON into vcflow's own models, and the `Warning` headers are read.

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
  Event returns at once, the Event as given.
- `namespaces` (`vcflow operator --namespace NS ...`; none: all): a list of all namespaces
  is one list per namespace, and events of other namespaces are dropped (`events_since`,
  `poll_events`, `watch`); other calls are as without. The informer still watches each
  kind in all namespaces, so the operator's RBAC needs list and watch cluster-wide.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast

from vcflow.api import names as apinames
from vcflow.api.errors import (
    AlreadyExists,
    Conflict,
    FieldError,
    NotFound,
    StoreError,
    ValidationFailed,
)
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.platform import Platform
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi import resources, warningtext
from vcflow.kubeapi.fieldvalidation import Validation
from vcflow.kubeapi.status import Forbidden, Unauthorized
from vcflow.kubestore import eventsapi, statuspatch, watching
from vcflow.kubestore import status as statuses
from vcflow.kubestore.cache import KindCache
from vcflow.kubestore.client import MERGE_PATCH, KubeClient, Response, Unreachable
from vcflow.kubestore.eventsender import EventSender
from vcflow.kubestore.informer import Informer, Listed
from vcflow.store import admit, wire
from vcflow.store.base import (
    ApplyResult,
    Defaulter,
    Expired,
    KindInfo,
    KindRegistry,
    Outcome,
    R,
    Selector,
    SelectorLike,
    UnknownKind,
    WatchEvent,
    Written,
    check_unique,
    default_kinds,
)

#: tries of an unconditional write (read, write with that resourceVersion) on 409 Conflict
RETRIES = 5
#: tries of one object's write in an apply when another writer got there first (409
#: AlreadyExists or Conflict, 404 on an update): each reads it and plans it again
APPLY_RETRIES = 5
#: objects per list page (`limit`; the rest through `continue`)
PAGE = 500
#: seconds a kind's one-off stream may stay silent before it is taken as caught up (reads
#: from before the persistent watches began)
CATCH_UP_IDLE = 0.5
#: kinds written first in an apply (others refer to them by name)
_FIRST = (JobTemplate,)
T = TypeVar("T")
#: the kinds `cached_reads` answers from the informer's cache (what the controllers read)
CACHED: tuple[type[Resource], ...] = (JobFlow, JobTemplate, VCJob)


class KubeStore:
    """The Store protocol over the Kubernetes API (see the module docstring)."""

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
        self.namespaces = tuple(dict.fromkeys(namespaces))
        self.reporting_instance = reporting_instance or eventsapi.default_instance()
        self.kinds = kinds.copy() if kinds is not None else default_kinds()
        self.informer = Informer(client)
        self.cached: frozenset[type[Resource]] = frozenset(CACHED if cached_reads else ())
        self.events: EventSender | None = None
        if async_events:
            self.events = EventSender(lambda event: self._create(event).object)

    def __enter__(self) -> KubeStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self.events is not None:
            self.events.close()
        self.informer.stop()
        self.client.close()

    @property
    def url(self) -> str:
        return self.client.url

    # --- kinds and paths ----------------------------------------------------------------

    def register_kind(self, model: type[Resource], *, defaulter: Defaulter | None = None) -> None:
        self.kinds.register(model, defaulter=defaulter)

    def _resource(self, info: KindInfo) -> resources.APIResource:
        if info.model is Event:
            return resources.EVENTS_V1  # (the events API; `eventsapi` converts)
        try:
            return resources.of_model(info.model)
        except KeyError:
            raise UnknownKind(
                f'the Kubernetes API store serves no kind "{info.kind}" ({info.api_version})'
            ) from None

    def _kind(self, model: type[Resource]) -> tuple[KindInfo, resources.APIResource]:
        info = self.kinds.of_model(model)
        return info, self._resource(info)

    def _call(
        self,
        info: KindInfo,
        method: str,
        path: str,
        *,
        namespace: str = "",
        name: str = "",
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = "application/json",
    ) -> Response:
        response = self.client.request(
            method, path, query=query, body=body, content_type=content_type
        )
        written = method != "GET" and ("dryRun", "All") not in query
        if not response.ok:
            error = statuses.error_for(response, kind=info.kind, namespace=namespace, name=name)
            if written and isinstance(error, AlreadyExists | Conflict) and name:
                self._refresh(info, namespace or apinames.DEFAULT_NAMESPACE, name)
            raise error
        if written:
            self._wrote(info, response, deleted=method == "DELETE")
        return response

    def _wrote(self, info: KindInfo, response: Response, *, deleted: bool = False) -> None:
        """Note the resourceVersion of a write, so reads wait for its watch event, and put
        the object written in the cache (a deleted one out of it, unless finalizers hold
        it)."""
        data = response.json() if response.data else None
        meta = data.get("metadata") if isinstance(data, dict) else None
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if not (isinstance(rv, str) and rv.isdigit()):
            return
        self.informer.wrote(info.model, int(rv))
        if info.model in self.cached and isinstance(data, dict) and isinstance(meta, dict):
            key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            if deleted and not (meta.get("deletionTimestamp") and meta.get("finalizers")):
                self.informer.remove(info.model, key, int(rv))
            else:
                self.informer.put(info.model, key, int(rv), self._wire(info, data))

    def _refresh(self, info: KindInfo, namespace: str, name: str) -> None:
        """Re-read an object directly into the cache after a write the server refused as
        stale (409), so the caller's next read sees what the server holds."""
        if info.model not in self.cached:
            return
        path = self._resource(info).path(namespace, name)
        response = self.client.request("GET", path)
        if response.ok:
            data = response.json()
            rv = int((data.get("metadata") or {}).get("resourceVersion") or 0)
            self.informer.put(info.model, (namespace, name), rv, self._wire(info, data))

    @staticmethod
    def _wire(info: KindInfo, data: dict[str, Any]) -> str:
        """An object of the API as the cache keeps it (JSON, apiVersion and kind set)."""
        data.setdefault("apiVersion", info.api_version)
        data.setdefault("kind", info.kind)
        return wire.dumps(data)

    def _lister(self, info: KindInfo) -> Callable[[], Listed]:
        """The cache's initial list of a kind: every namespace, directly."""

        def listed() -> Listed:
            items, rv = self._list_data(info, None, None)
            return [
                (
                    (str(item["metadata"].get("namespace") or ""), str(item["metadata"]["name"])),
                    int(item["metadata"].get("resourceVersion") or 0),
                    self._wire(info, item),
                )
                for item in items
            ], rv

        return listed

    def _from_cache(self, info: KindInfo, fn: Callable[[KindCache], T]) -> T:
        return self.informer.read(self._watched([info.model])[0], self._lister(info), fn)

    def _cached_get(self, info: KindInfo, namespace: str, name: str) -> str:
        """The cached object's JSON; NotFound as the API server says it."""
        found = self._from_cache(info, lambda cache: cache.get(namespace, name))
        if found is None:
            resource = self._resource(info)
            qualified = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
            raise NotFound(f'{qualified} "{name}" not found')
        return found

    def _cached_list(
        self, info: KindInfo, namespace: str | None, label_selector: SelectorLike
    ) -> builtins.list[tuple[tuple[str, str], str]]:
        selector = Selector.coerce(label_selector)
        return self._from_cache(info, lambda cache: cache.list(namespace, selector))

    def _model(self, info: KindInfo, data: Any) -> Resource:
        if info.model is Event and isinstance(data, dict):
            data = eventsapi.incoming(data)
        if isinstance(data, dict):
            data.setdefault("apiVersion", info.api_version)
            data.setdefault("kind", info.kind)
        return info.model.model_validate(data)

    # --- reads --------------------------------------------------------------------------

    def get(self, kind: type[R], namespace: str, name: str) -> R:
        info, resource = self._kind(kind)
        if kind in self.cached:
            return kind.model_validate_json(self._cached_get(info, namespace, name))
        path = resource.path(namespace, name)
        return cast(R, self._model(info, self._call(info, "GET", path, name=name).json()))

    def _get_data(self, info: KindInfo, namespace: str, name: str) -> dict[str, Any]:
        path = self._resource(info).path(namespace, name)
        found = self._call(info, "GET", path, namespace=namespace, name=name).json()
        return cast(dict[str, Any], found)

    def _list_data(
        self, info: KindInfo, namespace: str | None, label_selector: SelectorLike
    ) -> tuple[builtins.list[dict[str, Any]], int]:
        """Every item (all pages), sorted by (namespace, name), and the list's rv."""
        selector = str(Selector.coerce(label_selector))
        path = self._resource(info).path(namespace)
        for _ in range(3):  # a continue token that expired midway: start again
            items: builtins.list[dict[str, Any]] = []
            token, rv = "", 0
            try:
                while True:
                    query = [("limit", str(PAGE))]
                    if selector:
                        query.append(("labelSelector", selector))
                    if token:
                        query.append(("continue", token))
                    page = self._call(info, "GET", path, query=query).json()
                    items.extend(page.get("items") or [])
                    meta = page.get("metadata") or {}
                    rv = rv or int(meta.get("resourceVersion") or 0)
                    token = str(meta.get("continue") or "")
                    if not token:
                        break
            except Expired:
                if token:
                    continue
                raise
            items.sort(key=_sort_key)
            return items, rv
        raise StoreError(f"listing {info.kind}: the list changed too fast to page through")

    def list(
        self, kind: type[R], namespace: str | None = None, label_selector: SelectorLike = None
    ) -> builtins.list[R]:
        """Objects sorted by (namespace, name); with `namespaces`, of those only."""
        if not self.namespaces:
            return self._list(kind, namespace, label_selector)
        wanted = self.namespaces if namespace is None else (namespace,)
        return [
            obj
            for each in wanted
            if each in self.namespaces
            for obj in self._list(kind, each, label_selector)
        ]

    def _in_scope(self, events: builtins.list[WatchEvent]) -> builtins.list[WatchEvent]:
        """`events` but those of namespaces out of scope (`namespaces`)."""
        if not self.namespaces:
            return events
        return [event for event in events if event.namespace in self.namespaces]

    def _list(
        self, kind: type[R], namespace: str | None, label_selector: SelectorLike
    ) -> builtins.list[R]:
        info, _ = self._kind(kind)
        if kind in self.cached:
            found = self._cached_list(info, namespace, label_selector)
            return [kind.model_validate_json(data) for _, data in found]
        items, _ = self._list_data(info, namespace, label_selector)
        return [cast(R, self._model(info, item)) for item in items]

    def names(
        self, kind: type[Resource], namespace: str, label_selector: SelectorLike = None
    ) -> builtins.list[str]:
        info, _ = self._kind(kind)
        if kind in self.cached:
            return [key[1] for key, _ in self._cached_list(info, namespace, label_selector)]
        items, _ = self._list_data(info, namespace, label_selector)
        return [str((item.get("metadata") or {}).get("name") or "") for item in items]

    def phase(self, kind: type[Resource], namespace: str, name: str) -> str:
        info, _ = self._kind(kind)
        if kind in self.cached:
            data = json.loads(self._cached_get(info, namespace, name))
        else:
            data = self._get_data(info, namespace, name)
        status = data.get("status")
        state = status.get("state") if isinstance(status, dict) else None
        phase = state.get("phase") if isinstance(state, dict) else None
        return phase if isinstance(phase, str) else ""

    def resource_version(self) -> int:
        """The server's current resourceVersion: a one-item list's (store-wide in
        Kubernetes too: etcd's revision)."""
        info, resource = self._kind(JobFlow)
        page = self._call(info, "GET", resource.path(None), query=[("limit", "1")]).json()
        return int((page.get("metadata") or {}).get("resourceVersion") or 0)

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

    def _create(self, obj: R, query: Sequence[tuple[str, str]] = ()) -> Written[R]:
        info = self.kinds.of(obj)
        namespace = obj.namespace or apinames.DEFAULT_NAMESPACE
        body = self._outgoing(info, wire.incoming(obj))
        body.setdefault("metadata", {})["namespace"] = namespace
        for key in wire.SERVER_FIELDS:
            body["metadata"].pop(key, None)
        path = self._resource(info).path(namespace)
        response = self._call(
            info, "POST", path, namespace=namespace, name=obj.name, query=query, body=body
        )
        created = cast(R, self._model(info, response.json()))
        return Written(created, _warnings(info, response, namespace, created.name))

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
        path = self._resource(info).path(namespace, name)
        for attempt in range(RETRIES):
            rv = resource_version
            if not rv:
                stored = self._get_data(info, namespace, name)["metadata"]
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
                response = self._call(
                    info, "PUT", path, namespace=namespace, name=name, query=query, body=body
                )
            except Conflict:
                if resource_version or attempt == RETRIES - 1:
                    raise
                continue
            return Written(
                self._model(info, response.json()), _warnings(info, response, namespace, name)
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
        info, _ = self._kind(kind)
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
            stored = self._get_data(info, namespace, name)
            meta = stored["metadata"]
            if uid and meta.get("uid") != uid:
                raise self._recreated(info, namespace, name, uid, str(meta.get("uid")))
            old = stored.get("status")
            same_rv = resource_version in ("", meta.get("resourceVersion"))
            if old == status and same_rv:
                return self._model(info, stored)  # nothing to write
        body = statuspatch.status_patch(old, status, resource_version=resource_version, uid=uid)
        path = self._resource(info).path(namespace, name, "status")
        try:
            response = self._call(
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
                current = self._get_data(info, namespace, name)["metadata"].get("uid")
                if current != uid:
                    raise self._recreated(info, namespace, name, uid, str(current)) from None
            raise
        return self._model(info, response.json())

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
        _info, resource = self._kind(Pod)
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
        info, resource = self._kind(kind)
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
        response = self._call(
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
        return cast(R, self._model(info, found))

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
        """kubectl apply: each object read, then created or updated if changed; all of them
        dry-run first (`dryRun=All`), so one admission refuses writes nothing — a flow also
        judged against the input's own templates (`_against_input`). Templates are written
        before the flows that name them. One object another writer got to first is read
        and planned again, up to APPLY_RETRIES times (`_settled`); when a write still
        fails, the writes before it are undone (`_undo`). Warnings: the `Warning` headers
        of the writes."""
        infos = [self.kinds.of(obj) for obj in objects]
        check_unique(objects, infos)
        plans = [self._plan(info, obj) for info, obj in zip(infos, objects, strict=True)]
        errors: builtins.list[FieldError] = []
        refused: set[int] = set()
        for index, plan in enumerate(plans):
            try:
                plans[index] = self._settled(plan, dry_run=True)[0]
            except ValidationFailed as exc:
                errors.extend(exc.errors)
                refused.add(index)
            except (AlreadyExists, Conflict, Forbidden) as exc:
                raise exc from None
            except StoreError as exc:  # (400 Bad Request: a name the server refuses...)
                meta = plan.data["metadata"]
                errors.append(
                    FieldError(
                        str(exc), "", plan.info.kind, meta["namespace"], meta.get("name", "")
                    )
                )
                refused.add(index)
        errors += self._against_input(plans, refused)
        if errors:
            raise ValidationFailed(errors)
        order = sorted(range(len(plans)), key=lambda i: not isinstance(objects[i], _FIRST))
        results: dict[int, ApplyResult] = {}
        done: builtins.list[tuple[_Plan, ApplyResult]] = []
        try:
            for index in order:
                plan, results[index] = self._settled(plans[index], dry_run=False)
                done.append((plan, results[index]))
        except Exception as exc:
            left = self._undo(done)
            if isinstance(exc, ValidationFailed):
                raise ValidationFailed([*exc.errors, *left]) from None
            for error in left:
                exc.add_note(str(error))
            raise
        return [results[i] for i in range(len(plans))]

    def _settled(self, plan: _Plan, *, dry_run: bool) -> tuple[_Plan, ApplyResult]:
        """`plan` written (or dry-run), and the plan that was: on AlreadyExists (another
        writer created it since it was read), Conflict (updated since) or NotFound (deleted
        since), the object is read and planned again — unchanged when it is now what the
        input says, as kubectl apply retried says — up to APPLY_RETRIES tries."""
        for attempt in range(1, APPLY_RETRIES + 1):
            try:
                return plan, self._write_plan(plan, dry_run=dry_run)
            except (AlreadyExists, Conflict, NotFound) as exc:
                if attempt == APPLY_RETRIES or (isinstance(exc, NotFound) and plan.old is None):
                    raise
            plan = self._plan(plan.info, plan.obj)
        raise AssertionError("unreachable")

    def _against_input(
        self, plans: Sequence[_Plan], refused: set[int]
    ) -> builtins.list[FieldError]:
        """The errors of the flows judged against the input's templates laid over the
        stored ones (`admit.Batch`, as the embedded store's apply does), for each flow that
        names a template the input creates or changes. The server judged each dry-run
        flow against the stored templates only: a template of the input was "not found"
        there (a warning, the entry would wait) and what the flow's entries make of it
        went unchecked. Flows the server refused already are left to its errors."""
        changed = {
            (plan.data["metadata"]["namespace"], plan.obj.name)
            for plan in plans
            if isinstance(plan.obj, JobTemplate) and not plan.unchanged
        }
        flows = [
            plan
            for index, plan in enumerate(plans)
            if index not in refused
            and isinstance(plan.obj, JobFlow)
            and not plan.unchanged
            and any(
                (plan.data["metadata"]["namespace"], name) in changed
                for e in plan.obj.flows
                for name in e.templates_named
            )
        ]
        if not flows:
            return []
        given = [
            self._model(plan.info, dict(plan.data))
            for plan in plans
            if isinstance(plan.obj, JobTemplate)
        ]
        batch = admit.Batch(self, given)
        errors: builtins.list[FieldError] = []
        for plan in flows:
            old = self._model(plan.info, dict(plan.old)) if plan.old is not None else None
            found = admit.review_write(
                self._model(plan.info, dict(plan.data)),
                operation=admit.Operation.CREATE if old is None else admit.Operation.UPDATE,
                store=self,
                old=old,
                batch=batch,
                warnings=False,
                platform=Platform.CLUSTER,  # (what only a local run cannot do: the server says)
            )
            errors += [e for e in found if not e.warning]
        return errors

    def _undo(self, done: Sequence[tuple[_Plan, ApplyResult]]) -> builtins.list[FieldError]:
        """Undo the writes of an apply that failed midway, last first: an object it
        created is deleted (a JobTemplate without force: the server keeps one that another
        writer's unfinished flow uses already), one it updated is written back as it was
        (unless another writer changed it since). What could not be undone, as errors."""
        left: builtins.list[FieldError] = []
        for plan, result in reversed(done):
            obj = result.object
            namespace = obj.namespace or apinames.DEFAULT_NAMESPACE
            try:
                if result.outcome is Outcome.CREATED:
                    self._remove(plan.info, namespace, obj.name, obj.metadata.uid or "")
                elif result.outcome is Outcome.CONFIGURED and plan.old is not None:
                    self._restore(plan)
            except (StoreError, ValidationFailed) as exc:
                verb = "created" if result.outcome is Outcome.CREATED else "changed"
                text = " ".join(str(exc).split())
                left.append(
                    FieldError(
                        f"{verb} by this apply and left so: {text}",
                        "",
                        plan.info.kind,
                        namespace,
                        obj.name,
                    )
                )
        return left

    def _remove(self, info: KindInfo, namespace: str, name: str, uid: str) -> None:
        """Delete the object this apply created (by uid: one deleted and created again by
        another writer since is theirs), at the resourceVersion read with that uid."""
        for attempt in range(1, APPLY_RETRIES + 1):
            try:
                meta = self._get_data(info, namespace, name)["metadata"]
                if uid and meta.get("uid") != uid:
                    return
                self.delete(
                    info.model,
                    namespace,
                    name,
                    force=info.model is not JobTemplate,
                    resource_version=str(meta.get("resourceVersion") or ""),
                )
                return
            except NotFound:
                return
            except Conflict:
                if attempt == APPLY_RETRIES:
                    raise

    def _restore(self, plan: _Plan) -> None:
        """Write back the object `plan` updated as it was, while it holds what this apply
        wrote (its status aside: a controller writes that); Conflict when another writer
        changed it since."""
        assert plan.old is not None
        meta = plan.data["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        path = self._resource(plan.info).path(namespace, name)
        for attempt in range(1, APPLY_RETRIES + 1):
            current = self._get_data(plan.info, namespace, name)
            now = current["metadata"]
            if now.get("uid") != meta.get("uid") or not wire.same_applied(current, plan.data):
                raise Conflict("another writer changed it since")
            body = {k: v for k, v in plan.old.items() if k != "status"}
            body["metadata"] = {**plan.old["metadata"], "resourceVersion": now["resourceVersion"]}
            try:
                self._call(plan.info, "PUT", path, namespace=namespace, name=name, body=body)
                return
            except Conflict:
                if attempt == APPLY_RETRIES:
                    raise

    def _plan(self, info: KindInfo, obj: Resource) -> _Plan:
        namespace = obj.namespace or apinames.DEFAULT_NAMESPACE
        incoming = wire.incoming(obj)
        incoming.setdefault("metadata", {})["namespace"] = namespace
        try:
            old = self._get_data(info, namespace, obj.name) if obj.name else None
        except NotFound:
            old = None
        except (StoreError, ValidationFailed) as exc:  # a name the server refuses
            if isinstance(exc, Unreachable | Unauthorized | Forbidden):
                raise
            old = None  # (the dry-run create then says what is wrong with it)
        if old is None:
            return _Plan(info, obj, incoming, None)
        old.setdefault("apiVersion", info.api_version)
        old.setdefault("kind", info.kind)
        merged = wire.merged_apply(old, incoming)
        model = self._model(info, merged)
        if info.defaulter is not None and info.defaulter(model) is not False:
            merged = {**model.to_dict(), "metadata": merged["metadata"]}
        return _Plan(info, obj, merged, old)

    def _write_plan(self, plan: _Plan, *, dry_run: bool) -> ApplyResult:
        if plan.unchanged:
            assert plan.old is not None
            return ApplyResult(self._model(plan.info, plan.old), Outcome.UNCHANGED)
        meta = plan.data["metadata"]
        namespace, name = meta["namespace"], meta.get("name") or ""
        path = self._resource(plan.info).path(namespace)
        query = [("dryRun", "All")] if dry_run else []
        if plan.old is None:
            body = {**plan.data, "metadata": dict(meta)}
            for key in wire.SERVER_FIELDS:
                body["metadata"].pop(key, None)
            response = self._call(
                plan.info, "POST", path, namespace=namespace, name=name, query=query, body=body
            )
            outcome = Outcome.CREATED
        else:
            body = {**plan.data}
            body.pop("status", None)
            path = self._resource(plan.info).path(namespace, name)
            response = self._call(
                plan.info, "PUT", path, namespace=namespace, name=name, query=query, body=body
            )
            outcome = Outcome.CONFIGURED
        created = self._model(plan.info, response.json())
        return ApplyResult(
            created, outcome, _warnings(plan.info, response, namespace, created.name)
        )

    # --- watches ------------------------------------------------------------------------

    def _watched(self, kinds: Iterable[type[Resource]] | None) -> builtins.list[watching.Watched]:
        if kinds is None:
            infos = [i for i in self.kinds.all() if _served(i)]
        else:
            infos = [self.kinds.of_model(k) for k in kinds]
        return [
            watching.Watched(i, self._resource(i), eventsapi.incoming if i.model is Event else None)
            for i in infos
        ]

    def events_since(
        self,
        since_rv: int,
        *,
        kinds: Iterable[type[Resource]] | None = None,
        namespace: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WatchEvent]:
        """The events after `since_rv` up to the server's current resourceVersion, from the
        persistent watches (`informer`; a kind whose stream stays silent CATCH_UP_IDLE
        seconds is taken as caught up), else from streams of their own when the watches do
        not reach back that far. `poll_events` is the watchers' cheaper read."""
        watched = self._watched(kinds)
        latest = self.resource_version()
        if since_rv > latest:
            raise Expired(
                f"resourceVersion {since_rv} is newer than the store's ({latest}): list "
                "again and watch from the current resourceVersion"
            )
        found = self.informer.events(
            watched, since_rv, namespace, latest=latest, idle=CATCH_UP_IDLE
        )
        if found is None:
            found, _ = self._caught_up(since_rv, watched, namespace)
        found = self._in_scope(found)
        return found[:limit] if limit is not None else found

    def _caught_up(
        self, since_rv: int, watched: Sequence[watching.Watched], namespace: str | None
    ) -> tuple[builtins.list[WatchEvent], int]:
        """The events after `since_rv` read from one-off streams (`watching.catch_up`)."""
        latest = self.resource_version()
        if since_rv > latest:
            raise Expired(
                f"resourceVersion {since_rv} is newer than the store's ({latest}): list "
                "again and watch from the current resourceVersion"
            )
        if since_rv == latest:
            return [], latest
        found = watching.catch_up(
            self.client, watched, namespace, since_rv, latest, idle=CATCH_UP_IDLE
        )
        return found, latest

    def poll_events(
        self, since_rv: int, kinds: Iterable[type[Resource]]
    ) -> tuple[builtins.list[WatchEvent], int]:
        """What arrived on the persistent watches of `kinds` since the poll that returned
        `since_rv` (the store's own writes waited for, no request made), as an informer
        sees it: another client's write comes when its event does."""
        watched = self._watched(kinds)
        polled = self.informer.poll(watched, since_rv, own_writes=not self.cached)
        if polled is not None:
            return self._in_scope(polled[0]), polled[1]
        found, latest = self._caught_up(since_rv, watched, None)
        resume = max(latest, found[-1].resource_version if found else since_rv)
        return self._in_scope(found), resume

    def wait(self, since_rv: int, timeout: float) -> bool:
        """True once an event after `since_rv` arrives on the persistent watches (of the
        kinds read so far; every kind when none was), or this store wrote after it; False
        after `timeout`."""
        return self.informer.wait(self._watched(None), since_rv, timeout)

    def watch(
        self,
        kinds: Iterable[type[Resource]] | None = None,
        *,
        namespace: str | None = None,
        since_rv: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[WatchEvent]:
        rv = self.resource_version() if since_rv is None else since_rv
        if timeout == 0:
            yield from self.events_since(rv, kinds=kinds, namespace=namespace)
            return
        for event in watching.follow(self.client, self._watched(kinds), namespace, rv, timeout):
            if not self.namespaces or event.namespace in self.namespaces:
                yield event


class _Plan:
    """One object of an apply: what to write, and the stored object (None: create)."""

    __slots__ = ("data", "info", "obj", "old")

    def __init__(
        self, info: KindInfo, obj: Resource, data: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        self.info, self.obj, self.data, self.old = info, obj, data, old

    @property
    def unchanged(self) -> bool:
        """Whether the stored object is what the input says (nothing to write)."""
        return self.old is not None and wire.same_applied(self.old, self.data)


def _served(info: KindInfo) -> bool:
    try:
        resources.of_model(info.model)
    except KeyError:
        return False
    return True


def _warnings(
    info: KindInfo, response: Response, namespace: str, name: str
) -> tuple[FieldError, ...]:
    """The admission warnings of a write (its `Warning` headers) as FieldErrors."""
    return tuple(
        warningtext.heard(w, kind=info.kind, namespace=namespace, name=name)
        for w in response.warnings
    )


def _sort_key(item: dict[str, Any]) -> tuple[str, str]:
    meta = item.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _names_object(response: Response, name: str) -> bool:
    """Whether a 404 is about the pod (it is gone) rather than the route (not served)."""
    details = statuses.status_of(response).get("details") or {}
    return details.get("name") == name
