"""Request bodies kubectl sends as Kubernetes protobuf (`application/vnd.kubernetes.protobuf`:
`k8s\\0` + a runtime.Unknown holding the typed message) — kubectl 1.33 on does for the
built-in types its typed clients write: `kubectl create configmap`, `create secret`,
`create priorityclass`, `auth can-i`. Read here as the JSON object they mean (field numbers
from Kubernetes' generated.proto files), for the routes to handle as any JSON body; answers
stay JSON (kubectl accepts it). A hand-written reader of the few messages needed. Pure."""

from __future__ import annotations

import base64
from typing import Any

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
#: ObjectMeta's string fields a client may set (apimachinery meta/v1 generated.proto)
_META = {1: "name", 2: "generateName", 3: "namespace"}
_REVIEW_ATTRIBUTES = {1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource"}
_REVIEW_ATTRIBUTES |= {6: "subresource", 7: "name"}


class Invalid(ValueError):
    """The body is no protobuf message this reader knows."""


def fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """Every field of a message, in order: (number, varint value or bytes); fixed-width
    fields are skipped. Invalid for a message cut short."""
    found: list[tuple[int, int | bytes]] = []
    at = 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            if at >= len(data):
                raise Invalid("the protobuf body is cut short")
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while at < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            found.append((number, varint()))
        elif wire == 2:
            size = varint()
            if at + size > len(data):
                raise Invalid("the protobuf body is cut short")
            found.append((number, data[at : at + size]))
            at += size
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise Invalid(f"the protobuf body has wire type {wire}")
    return found


def _bytes(data: bytes, number: int) -> bytes:
    """The last length-delimited field `number` (b"" when absent)."""
    return next((v for n, v in reversed(fields(data)) if n == number and isinstance(v, bytes)), b"")


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def _strings(data: bytes, names: dict[int, str]) -> dict[str, str]:
    return {names[n]: _text(v) for n, v in fields(data) if n in names and isinstance(v, bytes)}


def _map(data: bytes, number: int) -> dict[str, bytes]:
    """A map field (repeated entries of key 1, value 2)."""
    found: dict[str, bytes] = {}
    for n, entry in fields(data):
        if n == number and isinstance(entry, bytes):
            parts = dict((k, v) for k, v in fields(entry) if isinstance(v, bytes))
            found[_text(parts.get(1, b""))] = parts.get(2, b"")
    return found


def _metadata(message: bytes) -> dict[str, Any]:
    raw = _bytes(message, 1)
    meta: dict[str, Any] = {k: v for k, v in _strings(raw, _META).items() if v}  # (sent "")
    for key, number in (("labels", 11), ("annotations", 12)):
        values = _map(raw, number)
        if values:
            meta[key] = {k: _text(v) for k, v in values.items()}
    return meta


def _b64(values: dict[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode("ascii") for k, v in values.items()}


def _immutable(message: bytes, number: int) -> dict[str, Any]:
    flag = next((v for n, v in fields(message) if n == number and isinstance(v, int)), None)
    return {} if flag is None else {"immutable": bool(flag)}


def _priority_class(message: bytes) -> dict[str, Any]:
    """value (int32), globalDefault, description, preemptionPolicy (scheduling/v1)."""
    found: dict[str, Any] = {}
    for number, value in fields(message):
        if number == 2 and isinstance(value, int):
            value = value - (1 << 64) if value >= 1 << 63 else value  # (a negative int32)
            found["value"] = value
        elif number == 3 and isinstance(value, int):
            found["globalDefault"] = bool(value)
        elif number == 4 and isinstance(value, bytes) and value:
            found["description"] = _text(value)
        elif number == 5 and isinstance(value, bytes) and value:
            found["preemptionPolicy"] = _text(value)
    return found


def decode(body: bytes) -> dict[str, Any]:
    """The JSON object a protobuf body means: a ConfigMap, a Secret, a PriorityClass or an
    access review (kind and apiVersion from the envelope); Invalid for anything else."""
    if not body.startswith(MAGIC):
        raise Invalid("the protobuf body does not start with the k8s magic bytes")
    envelope = body[len(MAGIC) :]
    type_meta = _strings(_bytes(envelope, 1), {1: "apiVersion", 2: "kind"})
    kind, api_version = type_meta.get("kind", ""), type_meta.get("apiVersion", "")
    message = _bytes(envelope, 2)
    head: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if kind == "ConfigMap":
        data = {k: _text(v) for k, v in _map(message, 2).items()}
        binary = _b64(_map(message, 3))
        return {
            **head,
            "metadata": _metadata(message),
            **({"data": data} if data else {}),
            **({"binaryData": binary} if binary else {}),
            **_immutable(message, 4),
        }
    if kind == "Secret":
        secret_type = {k: v for k, v in _strings(message, {3: "type"}).items() if v}
        data = _b64(_map(message, 2))
        text = {k: _text(v) for k, v in _map(message, 4).items()}
        return {
            **head,
            "metadata": _metadata(message),
            **({"data": data} if data else {}),
            **({"stringData": text} if text else {}),
            **secret_type,
            **_immutable(message, 5),
        }
    if kind == "PriorityClass":
        return {**head, "metadata": _metadata(message), **_priority_class(message)}
    if kind in ("SelfSubjectAccessReview", "SelfSubjectRulesReview", "SelfSubjectReview"):
        spec = _bytes(message, 2)
        found: dict[str, Any] = {}
        if kind == "SelfSubjectAccessReview":
            for number, key, names in (
                (1, "resourceAttributes", _REVIEW_ATTRIBUTES),
                (2, "nonResourceAttributes", {1: "path", 2: "verb"}),
            ):
                if any(n == number for n, _ in fields(spec)):
                    found[key] = _strings(_bytes(spec, number), names)
        elif kind == "SelfSubjectRulesReview":
            found = _strings(spec, {1: "namespace"})
        return {**head, "metadata": {}, "spec": found}
    raise Invalid(f"vcflow server reads no {kind or 'unknown'} object sent as protobuf: send JSON")
