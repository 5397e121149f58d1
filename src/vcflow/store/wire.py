"""Pure helpers on stored objects in wire form (the dicts of `to_dict()`): which metadata
the server owns, how update / status update / apply merge an incoming object into the
stored one, and the Row a backend keeps. Used by `engine`; no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pydantic_core

from vcflow.api.meta import Resource, WireModel

Data = dict[str, Any]

#: metadata the store owns: a client cannot set or change these through create/update.
SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
)
_IDENTITY = ("apiVersion", "kind", "metadata", "status")
#: metadata a client writes (wire name → attribute); `incoming` keeps them even when only
#: mutated in place.
_CLIENT_FIELDS = {
    "name": "name",
    "generateName": "generate_name",
    "namespace": "namespace",
    "labels": "labels",
    "annotations": "annotations",
    "ownerReferences": "owner_references",
    "finalizers": "finalizers",
}


@dataclass(frozen=True, slots=True)
class Row:
    """One stored object as a backend keeps it: identity, indexes and the JSON text.

    `data` is the whole object (`resourceVersion` included); it is immutable, so backends
    share it freely and every read parses a fresh model from it.
    """

    kind: str
    namespace: str
    name: str
    uid: str
    rv: int
    data: str
    labels: Mapping[str, str]
    owners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EventRow:
    rv: int
    type: str
    kind: str
    namespace: str
    name: str
    data: str


def incoming(obj: Resource) -> Data:
    """The wire form of an object a client hands the store.

    `to_dict()` drops fields never *assigned*, so a default container mutated in place
    (`obj.metadata.labels["k"] = "v"` on an object loaded without labels, or the metadata
    of `Model()`) would silently vanish; the client-owned metadata is taken from the model
    itself instead, when non-empty.
    """
    data = obj.to_dict()
    meta = data.setdefault("metadata", {})
    missing = [
        key
        for key, attr in _CLIENT_FIELDS.items()
        if key not in meta and getattr(obj.metadata, attr)
    ]
    if missing:  # dump the metadata again only when the first dump may have lost some
        current = obj.metadata.model_dump(by_alias=True, mode="json", exclude_none=True)
        for key in missing:
            if current.get(key):
                meta[key] = current[key]
    return data


def status_of(obj: Resource) -> Data:
    """The `status` part of `obj.to_dict()` (`{}` when it has none), without dumping the
    rest of the object: what `update_status` needs of the client's object."""
    field = type(obj).model_fields.get("status")
    status = getattr(obj, "status", None)
    if field is None or field.default is not None or not isinstance(status, WireModel | None):
        return {k: v for k, v in obj.to_dict().items() if k == "status"}
    if status is None:
        return {"status": None} if "status" in obj.model_fields_set else {}
    return {"status": status.to_dict()}


def to_row(kind: str, data: Data, rv: int) -> Row:
    """The Row of `data` written at resourceVersion `rv` (sets it in `data`)."""
    meta = data["metadata"]
    meta["resourceVersion"] = str(rv)
    owners = tuple(ref["uid"] for ref in meta.get("ownerReferences") or () if ref.get("uid"))
    return Row(
        kind=kind,
        namespace=meta["namespace"],
        name=meta["name"],
        uid=meta["uid"],
        rv=rv,
        data=dumps(data),
        labels=dict(meta.get("labels") or {}),
        owners=owners,
    )


def dumps(data: Data | Any) -> str:
    """Compact JSON, as `json.dumps(data, separators=(",", ":"), ensure_ascii=False)` writes
    it, by pydantic-core's encoder (faster on objects; a flow's status is large)."""
    return pydantic_core.to_json(data, inf_nan_mode="constants").decode()


def loads(text: str) -> Any:
    """Parse stored JSON (pydantic-core's parser, faster than `json.loads`)."""
    return pydantic_core.from_json(text)


def content(data: Data) -> Data:
    """What `generation` counts: every top-level field but identity, metadata and status
    (for the kinds here: `spec`)."""
    return {k: v for k, v in data.items() if k not in _IDENTITY}


def merged_update(old: Data, new: Data) -> Data:
    """`update`: the client's object, with the stored identity, server-owned metadata and
    status (status changes only through `update_status`, as the Kubernetes subresource)."""
    out = dict(new)
    out["apiVersion"], out["kind"] = old["apiVersion"], old["kind"]
    old_meta = old["metadata"]
    meta = dict(new.get("metadata") or {})
    meta["namespace"], meta["name"] = old_meta["namespace"], old_meta["name"]
    for key in SERVER_FIELDS:
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    out["metadata"] = meta
    _copy_status(old, out)
    return out


def merged_status(old: Data, new: Data) -> Data:
    """`update_status`: the stored object with the client's status, nothing else."""
    out = dict(old)
    _copy_status(new, out)
    return out


def merged_apply(old: Data, new: Data) -> Data:
    """`apply`: the applied object's content, labels and annotations over the stored
    object; the rest of metadata (owner references, finalizers, ...) and status stay."""
    out = {k: v for k, v in old.items() if k in _IDENTITY}
    out.update(content(new))
    meta = dict(old["metadata"])
    new_meta = new.get("metadata") or {}
    for key in ("labels", "annotations"):
        if new_meta.get(key):
            meta[key] = new_meta[key]
        else:
            meta.pop(key, None)
    out["metadata"] = meta
    return out


def same_applied(old: Data, new: Data) -> bool:
    """`apply`'s "unchanged": same content, labels and annotations (empty = absent)."""
    if content(old) != content(new):
        return False
    old_meta, new_meta = old["metadata"], new["metadata"]
    return all(
        (old_meta.get(key) or {}) == (new_meta.get(key) or {}) for key in ("labels", "annotations")
    )


def _copy_status(source: Data, target: Data) -> None:
    if "status" in source:
        target["status"] = source["status"]
    else:
        target.pop("status", None)


#: Objects at least this large (as JSON) are kept in the watch log as their status and a
#: reference to the rest, stored once (`split_event`): a status write of a big object then
#: copies only its status.
SHARED_BODY_MIN = 64 * 1024
#: the stand-in `split_event` writes for the resourceVersion in a shared body
_RV_STANDIN = ""


def split_event(text: str) -> tuple[str, str] | None:
    """An object's stored JSON as (its body — everything but the status, the
    resourceVersion left blank — and its status: JSON, or "" when it has none), or None when
    it cannot be split and joined back to the same text (its status is not its last key)."""
    data = loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
        return None
    keys = list(data)
    status = ""
    if "status" in data:
        if keys[-1] != "status":
            return None
        status = dumps(data.pop("status"))
    rv = data["metadata"].get("resourceVersion")
    data["metadata"]["resourceVersion"] = _RV_STANDIN
    body = dumps(data)
    if join_event(body, status, rv) != text:  # (never expected: dumps is deterministic)
        return None
    return body, status


def join_event(body: str, status: str, rv: Any) -> str:
    """The object `split_event` split, back as the text it was."""
    data = loads(body)
    data["metadata"]["resourceVersion"] = rv
    if status:
        data["status"] = loads(status)
    return dumps(data)
