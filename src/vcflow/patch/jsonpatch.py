"""RFC 6902 JSON Patch on wire-form objects: what the server's PATCH
(`application/json-patch+json`, `kubectl patch --type json`) applies. Pure."""

from __future__ import annotations

import copy
from typing import Any

OPS = ("add", "remove", "replace", "move", "copy", "test")


class PatchError(ValueError):
    """The patch is malformed, or an operation cannot apply (a path that is not there, a
    failed `test`); the message names the operation."""


def json_patch(target: Any, patch: Any) -> Any:
    """`target` with the operations of `patch` (a list) applied in order, all or nothing;
    PatchError otherwise. Pure: `target` is not modified."""
    if not isinstance(patch, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for index, op in enumerate(patch):
        try:
            doc = _apply(doc, op)
        except PatchError as exc:
            raise PatchError(f"operation {index}: {exc}") from None
    return doc


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError(f"path {path!r} is not a JSON pointer")
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _index(container: list[Any], token: str, *, adding: bool) -> int:
    if adding and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"{token!r} is not an index of a list")
    found = int(token)
    if found > len(container) or (found == len(container) and not adding):
        raise PatchError(f"index {found} is out of range")
    return found


def _parent(doc: Any, tokens: list[str]) -> Any:
    for token in tokens[:-1]:
        if isinstance(doc, dict) and token in doc:
            doc = doc[token]
        elif isinstance(doc, list):
            doc = doc[_index(doc, token, adding=False)]
        else:
            raise PatchError(f"path segment {token!r} does not exist")
    return doc


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, adding=False)]
    raise PatchError(f"path segment {last!r} does not exist")


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, adding=True), value)
    else:
        raise PatchError(f"cannot add {last!r} to a {type(parent).__name__}")
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list):
        del parent[_index(parent, last, adding=False)]
    else:
        raise PatchError(f"path segment {last!r} does not exist")
    return doc


def _apply(doc: Any, op: Any) -> Any:
    if not isinstance(op, dict) or op.get("op") not in OPS:
        raise PatchError(f"not an operation (op must be one of {', '.join(OPS)})")
    name, tokens = op["op"], _pointer(op.get("path"))
    if name in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f"{name} needs a value")
    if name == "add":
        return _add(doc, tokens, copy.deepcopy(op["value"]))
    if name == "remove":
        return _remove(doc, tokens)
    if name == "replace":
        _get(doc, tokens)  # (it must be there)
        value = copy.deepcopy(op["value"])
        return _add(_remove(doc, tokens), tokens, value) if tokens else value
    if name == "test":
        if _get(doc, tokens) != op["value"]:
            raise PatchError(f"test failed: {op.get('path')} is not {op['value']!r}")
        return doc
    source = _pointer(op.get("from"))
    value = copy.deepcopy(_get(doc, source))
    if name == "move":
        if tokens[: len(source)] == source and tokens != source:
            raise PatchError("cannot move a value into itself")
        doc = _remove(doc, source)
    return _add(doc, tokens, value)
