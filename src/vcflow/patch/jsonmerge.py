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


def merge_diff(old: Any, new: Any) -> Any:
    """The RFC 7386 merge patch that turns `old` into `new` (`merge_patch(old, result) ==
    new`): objects key by key, `null` for a key `new` lacks, anything else whole. A value
    `new` holds as `null` cannot be said in a merge patch; wire-form objects hold none.
    Pure."""
    if not isinstance(new, dict) or not isinstance(old, dict):
        return new
    found: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        if key not in old:
            found[key] = value
        elif old[key] != value:
            found[key] = merge_diff(old[key], value)
    return found
