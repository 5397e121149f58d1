"""The body of a status write over the Kubernetes API: a JSON merge patch
(`application/merge-patch+json`) of the `status` subresource holding only `status` — the
change from the status the writer last saw — and, as preconditions, the writer's
resourceVersion and uid. Never the spec: Volcano's full-object status update conflicts
with every concurrent spec or metadata write (volcano-sh/volcano#3441). Used by `store`.
"""

from __future__ import annotations

from typing import Any

from vcflow.patch.jsonmerge import merge_diff


def status_patch(
    old: Any, new: Any, *, resource_version: str = "", uid: str = ""
) -> dict[str, Any]:
    """The merge patch turning status `old` into `new` (None: no status): keys `new` lacks
    are `null`, lists whole. With `resource_version` the API server answers 409 Conflict
    when the object changed since (kube-apiserver checks a patch's resourceVersion); `uid`
    pins the object against one deleted and created again under the same name. Pure."""
    body: dict[str, Any] = {"status": merge_diff(old, new)}
    meta = {
        key: value for key, value in (("resourceVersion", resource_version), ("uid", uid)) if value
    }
    if meta:
        body["metadata"] = meta
    return body
