"""RFC 7386 JSON merge patch on wire-form objects: what `vcflow patch --type merge` and the
server's PATCH (`application/merge-patch+json`) apply. Pure."""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge key by key, `null` removes a key, anything
    else (lists included) replaces. Pure; `target` is not modified."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
