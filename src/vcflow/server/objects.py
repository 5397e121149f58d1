"""One object's reads and writes as the Kubernetes API does them, on a Store: get, create,
update (409 on a stale resourceVersion), JSON merge patch, delete (answered as
kube-apiserver does: a Status for an object gone, but for pods), and the status
subresource (PUT and PATCH: only the status, no admission). Writes are reviewed by
admission once, in the store (`create_reviewed`, `update_reviewed`), its warnings
returned for `Warning` headers, fieldValidation deciding what unknown fields do; `dryRun`
writes in a transaction that is rolled back and answers the object at the
resourceVersion it has (none for a create).
Synchronous: the routes run these in a worker thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from vcflow.api.errors import Conflict, FieldError, VcflowError
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.kubeapi import resources, warningtext
from vcflow.kubeapi import status as kubestatus
from vcflow.kubeapi.resources import APIResource
from vcflow.patch import jsonpatch
from vcflow.patch.jsonmerge import merge_patch
from vcflow.server import status
from vcflow.server.requests import DeleteOptions, WriteOptions, to_object
from vcflow.server.status import ApiError
from vcflow.store import base
from vcflow.store.base import EmbeddedStore, Store
from vcflow.store.engine import generated_name

R = TypeVar("R", bound=Resource)
PATCH_ATTEMPTS = 5  # re-reads after a concurrent write before a patch gives up (409)
#: The kinds whose DELETE answers the deleted object, as kube-apiserver's registries that set
#: `ReturnDeletedObject` do (of the kinds served, pods only); the others — the custom
#: resources (apiextensions-apiserver never sets it), ConfigMaps, Secrets, Events, Leases —
#: answer a Success Status once the object is gone.
RETURNS_DELETED = frozenset({resources.PODS})


@dataclass(frozen=True)
class Written:
    """A write's answer: the object as stored (or as it would be: dryRun), its HTTP code
    and admission's warnings."""

    object: dict[str, Any]
    code: int = 200
    warnings: tuple[str, ...] = ()


def get(store: Store, resource: APIResource, namespace: str, name: str) -> dict[str, Any]:
    return store.get(resource.model, namespace, name).to_dict()


def create(
    store: EmbeddedStore, resource: APIResource, namespace: str, data: Any, options: WriteOptions
) -> Written:
    name = _name_of(data)
    obj = to_object(resource, data, name)
    _check_namespace(data, namespace)
    obj.metadata.namespace = namespace
    if not obj.metadata.name and obj.metadata.generate_name:
        # named before admission sees it, as kube-apiserver does
        obj.metadata.name = name = generated_name(obj.metadata.generate_name)
    write = functools.partial(store.create_reviewed, obj, validation=options.validation)
    try:
        created = _written(store, options.dry_run, write, _new)
    except VcflowError as exc:  # (the route knows no name: the collection's URL has none)
        raise status.of(exc, resource, name) from None
    return Written(created.object.to_dict(), 201, _said(created.warnings))


def replace(
    store: EmbeddedStore,
    resource: APIResource,
    namespace: str,
    name: str,
    data: Any,
    options: WriteOptions,
    *,
    status: bool = False,
) -> Written:
    """PUT: the whole object (or, `status`, only its status) replaced."""
    obj = to_object(resource, data, name)
    _check_namespace(data, namespace)
    obj.metadata.namespace = namespace
    if obj.name != name:
        raise ApiError(
            400,
            f"the name of the object ({obj.name!r}) does not match the name on the URL ({name!r})",
        )
    stored = functools.partial(_stored, store, resource, namespace, name)
    if status:
        written = _written(store, options.dry_run, _unreviewed(store.update_status, obj), stored)
        return Written(written.object.to_dict())
    write = functools.partial(store.update_reviewed, obj, validation=options.validation)
    written = _written(store, options.dry_run, write, stored)
    return Written(written.object.to_dict(), 200, _said(written.warnings))


def patch(
    store: EmbeddedStore,
    resource: APIResource,
    namespace: str,
    name: str,
    body: Any,
    options: WriteOptions,
    *,
    status: bool = False,
    json_patch: bool = False,
) -> Written:
    """A JSON merge patch (`json_patch`: an RFC 6902 JSON patch, 422 when an operation
    cannot apply, as kube answers) over the stored object, written as an update (or a
    status update); re-read and patched again after a concurrent write unless the patch
    pins a resourceVersion."""
    pinned = pins_version(body, json_patch)
    for attempt in range(PATCH_ATTEMPTS):
        current = store.get(resource.model, namespace, name)
        merged = patched(current.to_dict(), body, json_patch)
        obj = to_object(resource, merged, name)
        if (obj.namespace, obj.name) != (namespace, name):
            raise ApiError(400, "a patch cannot change metadata.namespace or metadata.name")
        stored = functools.partial(_stored, store, resource, namespace, name)
        try:
            if status:
                write = _unreviewed(store.update_status, obj)
                done = _written(store, options.dry_run, write, stored)
                return Written(done.object.to_dict())
            write = functools.partial(store.update_reviewed, obj, validation=options.validation)
            done = _written(store, options.dry_run, write, stored)
            return Written(done.object.to_dict(), 200, _said(done.warnings))
        except Conflict:
            if pinned or attempt == PATCH_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def pins_version(body: Any, json_patch: bool) -> bool:
    """Whether a patch names the resourceVersion it applies to (then a conflict is the
    client's to resolve); 400 for a body that is no patch of its type."""
    if json_patch:
        if not isinstance(body, list):
            raise ApiError(400, "a JSON patch must be a list of operations")
        return any(
            isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion" for op in body
        )
    if not isinstance(body, dict):
        raise ApiError(400, "a merge patch must be a JSON object")
    meta = body.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("resourceVersion"))


def patched(current: dict[str, Any], body: Any, json_patch: bool) -> Any:
    """`current` with the merge patch (or JSON patch) `body` applied; 422 for a JSON patch
    operation that cannot apply."""
    if not json_patch:
        return merge_patch(current, body)
    try:
        return jsonpatch.json_patch(current, body)
    except jsonpatch.PatchError as exc:
        raise ApiError(
            422, f"the server rejected our request due to an error in our request: {exc}"
        ) from None


def bind(store: Store, namespace: str, name: str, data: Any) -> dict[str, Any]:
    """POST pods/NAME/binding: the pod placed on `target.name` (a v1 Binding body; its
    metadata.uid, if given, must be the pod's). kube's answer is a Success Status; its
    refusals are kube's 409s (`_check_bindable`)."""
    if not isinstance(data, dict) or data.get("kind") != "Binding":
        raise ApiError(400, "the body must be a v1 Binding")
    target = data.get("target")
    node = target.get("name") if isinstance(target, dict) else None
    if not isinstance(node, str) or not node:
        raise ApiError(400, "a Binding needs target.name (the node)")
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    uid = meta.get("uid") if isinstance(meta, dict) else ""
    uid = uid if isinstance(uid, str) else ""
    _check_bindable(store.get(Pod, namespace, name), uid)
    try:
        store.bind(namespace, name, node, uid=uid)
    except Conflict:  # (bound or marked deleted since it was read)
        _check_bindable(store.get(Pod, namespace, name), uid)
        raise
    return kubestatus.success(resources.PODS, name)


def _check_bindable(pod: Pod, uid: str) -> None:
    """kube-apiserver's refusals of a binding, in its words (seen on v1.37): a uid that is
    not the pod's, a pod being deleted, a pod bound already — to any node, the one asked
    for too (the store takes that binding again as a no-op; kube does not)."""
    name = pod.metadata.name
    if uid and uid != pod.metadata.uid:
        raise ApiError(
            409,
            f'Operation cannot be fulfilled on pods "{name}": StorageError: invalid object, '
            f"Code: 4, Key: /registry/pods/{pod.metadata.namespace}/{name}, ResourceVersion: "
            f"0, AdditionalErrorMsg: Precondition failed: UID in precondition: {uid}, UID in "
            f"object meta: {pod.metadata.uid}",
            reason="Conflict",
            details={"name": name, "kind": "pods"},
        )
    refusal = ""
    if pod.metadata.deletion_timestamp:
        refusal = f"pod {name} is being deleted, cannot be assigned to a host"
    elif pod.spec is not None and pod.spec.node_name:
        refusal = f'pod {name} is already assigned to node "{pod.spec.node_name}"'
    if refusal:
        raise ApiError(
            409,
            f'Operation cannot be fulfilled on pods/binding "{name}": {refusal}',
            reason="Conflict",
            details={"name": name, "kind": "pods/binding"},
        )


def delete(
    store: EmbeddedStore,
    resource: APIResource,
    namespace: str,
    name: str,
    options: DeleteOptions,
    *,
    shown: APIResource | None = None,
) -> dict[str, Any]:
    """kube-apiserver's answer to a DELETE: the object while finalizers hold it (with its
    deletionTimestamp); once it is gone, the object only for the kinds whose registry
    returns it (`RETURNS_DELETED`), else a Success Status naming it (`kubeapi.status.deleted`;
    `shown`: the resource the client asked for, when it is served from another's storage).
    Dependents are collected at once (the store's garbage collection is synchronous), but
    for `propagationPolicy=Orphan` (`kubectl delete --cascade=orphan`): the object's
    ownerReference is taken off its dependents first, in the same transaction, so they
    stay (a flow's vcjobs and their pods), as kube's garbage collector orphans them;
    `gracePeriodSeconds=0` skips the DELETE review (force)."""

    def remove() -> base.Written[Resource]:
        with store.transaction():
            if options.propagation == "Orphan":
                _orphan(store, store.get(resource.model, namespace, name))
            return base.Written(
                store.delete(
                    resource.model,
                    namespace,
                    name,
                    force=options.force,
                    resource_version=options.preconditions_rv,
                )
            )

    stored = functools.partial(_stored, store, resource, namespace, name)
    last = _written(store, options.dry_run, remove, stored).object
    held = bool(last.metadata.deletion_timestamp and last.metadata.finalizers)
    if held or resource in RETURNS_DELETED:
        return last.to_dict()
    return kubestatus.deleted(shown or resource, last.name, last.metadata.uid)


def _orphan(store: EmbeddedStore, owner: Resource) -> None:
    """Take `owner`'s ownerReference off every object that has one (in its namespace, or
    any for a cluster-scoped owner), as kube's garbage collector does before an orphaning
    delete removes the owner."""
    uid = owner.metadata.uid
    namespace = owner.namespace if resources.of_model(type(owner)).namespaced else None
    for kind in resources.ALL:
        if kind in resources.STORED_AS:
            continue
        for dependent in store.list(kind.model, namespace if kind.namespaced else None):
            refs = dependent.metadata.owner_references
            if any(ref.uid == uid for ref in refs):
                dependent.metadata.owner_references = [ref for ref in refs if ref.uid != uid]
                store.update(dependent)


def _stored(store: Store, resource: APIResource, namespace: str, name: str) -> str:
    return store.get(resource.model, namespace, name).metadata.resource_version


def _new() -> str:
    return ""


class _DryRun(Exception):
    def __init__(self, result: object) -> None:
        self.result = result


def _written(
    store: EmbeddedStore,
    dry_run: bool,
    write: Callable[[], base.Written[R]],
    stored: Callable[[], str],
) -> base.Written[R]:
    """`write()`, or with `dry_run` its result with nothing kept (rolled back) and the
    resourceVersion the object has as it is written (`stored()`, read in the same
    transaction; "" for a create), as kube answers a dry run: the object as it would be,
    at no new version."""
    if not dry_run:
        return write()
    try:
        with store.transaction():
            version = stored()
            raise _DryRun(write())
    except _DryRun as done:
        result: base.Written[R] = done.result  # type: ignore[assignment]
    result.object.metadata.resource_version = version
    return result


def _unreviewed(write: Callable[[R], R], obj: R) -> Callable[[], base.Written[R]]:
    """A write admission does not review (the status subresource), as `_written` takes it."""
    return lambda: base.Written(write(obj))


def _said(warnings: tuple[FieldError, ...]) -> tuple[str, ...]:
    """Admission's warnings as `Warning` headers say them."""
    return tuple(warningtext.said(w) for w in warnings)


def _check_namespace(data: Any, namespace: str) -> None:
    """400 when the body names another namespace than the URL, with kube's message; a body
    that names none gets the URL's (read from the body: the model defaults it to
    `default`). A cluster-scoped object's (namespace `""`) is dropped, as kube's is."""
    meta = data.get("metadata") if isinstance(data, dict) else None
    given = meta.get("namespace") if isinstance(meta, dict) else None
    if given and namespace and given != namespace:
        raise ApiError(
            400,
            "the namespace of the provided object does not match the namespace sent on the request",
        )


def _name_of(data: Any) -> str:
    meta = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        return ""
    return str(meta.get("name") or meta.get("generateName") or "")
