"""The frames of a Kubernetes watch stream, both ways: one JSON line each,
`{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}` — a BOOKMARK's object
carries only its resourceVersion (and kube's `initial-events-end` annotation closing the
initial events), an ERROR's is a Status (a 410 Expired when the resourceVersion is no
longer kept). The vcflow server encodes them; KubeStore and the operator decode them. Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vcflow.kubeapi import status

#: the annotation of the BOOKMARK that ends a watch's initial events (`sendInitialEvents`)
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
#: the frame types that carry an object (the others: BOOKMARK, ERROR)
EVENTS = frozenset({"ADDED", "MODIFIED", "DELETED"})


@dataclass(frozen=True)
class Frame:
    """One frame: an event (ADDED, MODIFIED, DELETED) of `object`, or a BOOKMARK."""

    type: str
    object: dict[str, Any]

    @property
    def resource_version(self) -> int:
        """The object's resourceVersion (a bookmark's: how far the stream has come)."""
        meta = self.object.get("metadata") or {}
        return int(meta.get("resourceVersion") or 0)


def encode(type_: str, obj: dict[str, Any]) -> bytes:
    """One frame's line."""
    return (json.dumps({"type": type_, "object": obj}, separators=(",", ":")) + "\n").encode()


def bookmark(api_version: str, kind: str, rv: int, *, initial_end: bool = False) -> bytes:
    """A BOOKMARK's line: the stream has come to `rv`; `initial_end`: the initial events
    are all sent."""
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return encode("BOOKMARK", {"apiVersion": api_version, "kind": kind, "metadata": meta})


def error(failure: dict[str, Any]) -> bytes:
    """An ERROR's line, carrying a Failure Status (`status.failure`)."""
    return encode("ERROR", failure)


def decode(line: bytes | str) -> Frame | None:
    """The frame of one line; None for a blank line, a type this reader does not know or no
    object; ValueError if the line is not JSON. An ERROR frame raises the vcflow error of
    its Status (`status.error_of`)."""
    if not line.strip():
        return None
    found = json.loads(line)
    obj = found.get("object") if isinstance(found, dict) else None
    if not isinstance(obj, dict):
        return None
    type_ = str(found.get("type") or "")
    if type_ == "ERROR":
        raise status.error_of(obj, int(obj.get("code") or 500))
    if type_ in EVENTS or type_ == "BOOKMARK":
        return Frame(type_, obj)
    return None
