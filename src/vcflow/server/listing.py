"""Lists as the Kubernetes API answers them: one namespace or all, filtered by label and
field selectors, paged by `limit` and an opaque `continue` token. The list's
`metadata.resourceVersion` is the store's as of the objects (`snapshot`); a token carries
the first page's resourceVersion and the last key returned, and one older than the store's
event log keeps is 410 Expired, as kube's compacted tokens are.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from vcflow.api.errors import NotFound
from vcflow.api.meta import Resource
from vcflow.kubeapi.resources import APIResource
from vcflow.server.requests import ListOptions
from vcflow.server.status import ApiError
from vcflow.store.base import Expired, Store


def matching(
    store: Store, resource: APIResource, namespace: str | None, options: ListOptions
) -> list[Resource]:
    """The objects a list or a watch's initial events show, sorted by (namespace, name);
    one `metadata.name=` in a namespace is one read (kubectl wait, per-object informers),
    not a read of every object of the kind."""
    name = options.fields.name()
    if name is not None and namespace is not None:
        try:
            found = [store.get(resource.model, namespace, name)]
        except NotFound:
            return []
        found = [obj for obj in found if options.labels.matches(obj.metadata.labels)]
    else:
        found = store.list(resource.model, namespace, options.labels)
    if not options.fields:
        return found
    return [obj for obj in found if options.fields.matches(obj.to_dict())]


SNAPSHOT_TRIES = 3


def snapshot(
    store: Store, resource: APIResource, namespace: str | None, options: ListOptions
) -> tuple[int, list[Resource]]:
    """The store's resourceVersion and the matching objects as of it: read again when a
    write committed while the objects were read (then, after a few tries, the version read
    first: a watch from it may repeat a change the list shows, never miss one)."""
    for _ in range(SNAPSHOT_TRIES):
        rv = store.resource_version()
        items = matching(store, resource, namespace, options)
        if store.resource_version() == rv:
            break
    return rv, items


def list_body(
    store: Store, resource: APIResource, namespace: str | None, options: ListOptions
) -> dict[str, Any]:
    """The `<Kind>List` of one page."""
    if options.token:
        rv, after = _decode(options.token)
        try:
            store.events_since(rv, limit=1)  # Expired once the token's version is compacted
        except Expired:
            raise ApiError(
                410,
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter.",
                reason="Expired",
            ) from None
        items = matching(store, resource, namespace, options)
    else:
        after = ""
        rv, items = snapshot(store, resource, namespace, options)
    if after:
        items = [obj for obj in items if _key(obj) > after]
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if options.limit and len(items) > options.limit:
        meta["remainingItemCount"] = len(items) - options.limit
        items = items[: options.limit]
        meta["continue"] = _encode(rv, _key(items[-1]))
    return {
        "apiVersion": resource.api_version,
        "kind": f"{resource.kind}List",
        "metadata": meta,
        "items": [obj.to_dict() for obj in items],
    }


def _key(obj: Resource) -> str:
    return f"{obj.namespace}\0{obj.name}"


def _encode(rv: int, key: str) -> str:
    raw = json.dumps({"rv": rv, "start": key}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        found = json.loads(raw)
        rv, key = found["rv"], found["start"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise ApiError(400, "continue key is not valid") from None
    if not isinstance(rv, int) or not isinstance(key, str) or rv < 0:
        raise ApiError(400, "continue key is not valid")
    return rv, key
