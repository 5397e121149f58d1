"""The Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf: what client-go's
discovery asks `/openapi/v2` for (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`)
and can read no other way — kubectl before 1.30 needs it to `apply` at all. A hand-written
encoder of the part of OpenAPIv2.proto the document uses (field numbers from gnostic's
`openapiv2/OpenAPIv2.proto`); vendor extensions and defaults travel as YAML text (JSON is
YAML), as gnostic keeps them. Pure: called by openapi.py.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable
from typing import Any

MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#: what kube-apiserver answers it with
CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "patch": 8}


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: a string, bytes or an embedded message."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _text(number: int, value: str) -> bytes:
    return _field(number, value.encode()) if value else b""


def _flag(number: int, value: bool) -> bytes:
    return _varint(number << 3) + b"\x01" if value else b""


def _double(number: int, value: float) -> bytes:
    return _varint(number << 3 | 1) + struct.pack("<d", value)


def _any(number: int, value: Any) -> bytes:
    """An `Any` whose `yaml` (field 2) holds the value."""
    return _field(number, _text(2, json.dumps(value)))


def _named(number: int, name: str, value: bytes) -> bytes:
    return _field(number, _text(1, name) + _field(2, value))


def _extensions(number: int, node: dict[str, Any]) -> bytes:
    return b"".join(
        _named(number, key, _text(2, json.dumps(value)))
        for key, value in node.items()
        if key.startswith("x-")
    )


def schema(node: dict[str, Any]) -> bytes:
    """One `Schema` message."""
    out = [
        _text(1, node.get("$ref", "")),
        _text(2, node.get("format", "")),
        _text(4, node.get("description", "")),
    ]
    if "default" in node:
        out.append(_any(5, node["default"]))
    for key, number in (("maximum", 7), ("minimum", 9)):
        if isinstance(node.get(key), int | float):
            out.append(_double(number, float(node[key])))
    out += [_text(19, name) for name in node.get("required", [])]
    out += [_any(20, value) for value in node.get("enum", [])]
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out.append(_field(21, _field(1, schema(extra))))
    elif isinstance(extra, bool):
        out.append(_field(21, _varint(2 << 3) + (b"\x01" if extra else b"\x00")))
    if "type" in node:
        types = node["type"] if isinstance(node["type"], list) else [node["type"]]
        out.append(_field(22, b"".join(_text(1, t) for t in types)))
    if isinstance(node.get("items"), dict):
        out.append(_field(23, _field(1, schema(node["items"]))))
    out += [_field(24, schema(part)) for part in node.get("allOf", [])]
    if "properties" in node:
        props = b"".join(_named(1, k, schema(v)) for k, v in node["properties"].items())
        out.append(_field(25, props))
    out.append(_extensions(31, node))
    return b"".join(out)


def _parameter(param: dict[str, Any]) -> bytes:
    """A `ParametersItem` holding a query or path parameter."""
    query = param["in"] == "query"
    body = [
        _flag(1, bool(param.get("required"))),
        _text(2, param["in"]),
        _text(3, param.get("description", "")),
        _text(4, param["name"]),
        _text(6 if query else 5, param.get("type", "")),
        _flag(20 if query else 19, bool(param.get("uniqueItems"))),
    ]
    sub = _field(3 if query else 4, b"".join(body))
    return _field(1, _field(2, sub))  # ParametersItem.parameter → Parameter.non_body


def _operation(op: dict[str, Any]) -> bytes:
    responses = b""
    for code, answer in op.get("responses", {}).items():
        item = _text(1, answer.get("description", ""))
        if "schema" in answer:
            item += _field(2, _field(1, schema(answer["schema"])))
        responses += _named(1, code, _field(1, item))
    return b"".join(
        [
            _text(3, op.get("description", "")),
            _text(5, op.get("operationId", "")),
            *(_field(8, _parameter(p)) for p in op.get("parameters", [])),
            _field(9, responses),
            _extensions(13, op),
        ]
    )


def _path_item(item: dict[str, Any]) -> bytes:
    out = [_field(number, _operation(item[m])) for m, number in _METHODS.items() if m in item]
    out += [_field(9, _parameter(p)) for p in item.get("parameters", [])]
    return b"".join(out)


def _paths(paths: dict[str, Any]) -> bytes:
    return b"".join(_named(2, path, _path_item(item)) for path, item in paths.items())


def _definitions(defs: Iterable[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(_named(1, name, schema(body)) for name, body in defs)


def document(doc: dict[str, Any]) -> bytes:
    """The `Document` message of a Swagger 2.0 document (`openapi.v2()`'s data)."""
    info = doc.get("info", {})
    return b"".join(
        [
            _text(1, doc.get("swagger", "2.0")),
            _field(2, _text(1, info.get("title", "")) + _text(2, info.get("version", ""))),
            _field(8, _paths(doc.get("paths", {}))),
            _field(9, _definitions(doc.get("definitions", {}).items())),
        ]
    )
