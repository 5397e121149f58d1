"""Apply a flow entry's `patch.jobSpec` to its template's spec (compatibility row 3).

Volcano stores `patch` and never reads it (reference §3.6 item 3); vcflow applies it when the
vcjob is created, with the per-field rules of Volcano's parameter-overriding design. The merge
works on the wire dicts (`to_dict()`, camelCase, only the fields that were given), so fields
vcflow does not model — most of a pod template — are merged and kept like the others.

Rules, applied recursively from the JobSpec down:

- maps merge key by key: a key only in the base stays, a key only in the patch is added, a key
  in both is merged when both values are maps and otherwise replaced by the patch's value;
- an explicit `null` in the patch deletes the key (the JSON merge patch convention, RFC 7396),
  so `queue: null` drops the template's queue and `value: null` clears an env var's value;
  nulls inside a map the base does not have are dropped the same way;
- the keyed lists below merge by their key: a patch item whose key matches an item of the base
  list is merged into it (recursively, by these same rules); any other patch item — new key,
  key missing — is appended in patch order. Matching is against the base items only, so two
  patch items with the same new key are both appended and admission reports the duplicate;
- every other list (args, command, policies, plugin arguments, pod `volumes`, …) is replaced
  as a whole by the patch's list.

Keyed lists (`*` is any item of the list before it):

| location                                          | key             |
| ------------------------------------------------- | --------------- |
| `tasks`                                           | `name`          |
| `volumes` (the JobSpec's)                         | `mountPath`     |
| `tasks.*.template.spec.containers`                | `name`          |
| `tasks.*.template.spec.initContainers`            | `name`          |
| `…containers.*.env`, `…initContainers.*.env`      | `name`          |
| `…containers.*.ports`, `…initContainers.*.ports`  | `containerPort` |
| `…containers.*.volumeMounts`, same in init        | `mountPath`     |

`volumeMounts` by `mountPath` is vcflow's addition to the design's list (Kubernetes' own
strategic-merge key for it), so a patch can add one mount without restating the others.
Pure: inputs are never mutated; the result is a new JobSpec.
"""

from __future__ import annotations

from typing import Any

from vcflow.api.vcjob import JobSpec

Path = tuple[str, ...]
ITEM = "*"

_POD: Path = ("tasks", ITEM, "template", "spec")
_CONTAINER_LISTS: dict[str, str] = {
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
}


def _keyed_lists() -> dict[Path, str]:
    table: dict[Path, str] = {("tasks",): "name", ("volumes",): "mountPath"}
    for containers in ("containers", "initContainers"):
        table[(*_POD, containers)] = "name"
        for field, key in _CONTAINER_LISTS.items():
            table[(*_POD, containers, ITEM, field)] = key
    return table


KEYED_LISTS: dict[Path, str] = _keyed_lists()


def patched_spec(base: JobSpec, patch: JobSpec) -> JobSpec:
    """The template spec with the patch applied. Pure; returns a new object."""
    return JobSpec.model_validate(merge_maps(base.to_dict(), patch.to_dict(), ()))


def merge_maps(base: dict[str, Any], patch: dict[str, Any], path: Path) -> dict[str, Any]:
    """`base` with `patch` merged in (rules in the module docstring); both left unchanged."""
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_values(base.get(key), value, (*path, key))
    return out


def merge_values(base: Any, patch: Any, path: Path) -> Any:
    """The merged value at `path`; `patch` is not None."""
    if isinstance(patch, dict):
        return merge_maps(base if isinstance(base, dict) else {}, patch, path)
    if isinstance(patch, list) and path in KEYED_LISTS:
        return merge_keyed(base if isinstance(base, list) else [], patch, path)
    return patch


def merge_keyed(base: list[Any], patch: list[Any], path: Path) -> list[Any]:
    """Merge `patch` items into `base` items with the same key; append the others."""
    key = KEYED_LISTS[path]
    out = list(base)
    index: dict[str | int | float, int] = {}
    for i, item in enumerate(base):
        found = _key_of(item, key)
        if found is not None:
            index.setdefault(found, i)
    item_path = (*path, ITEM)
    for item in patch:
        found = _key_of(item, key)
        at = index.get(found) if found is not None else None
        if at is None:
            out.append(merge_values(None, item, item_path))
        else:
            out[at] = merge_values(out[at], item, item_path)
    return out


def _key_of(item: Any, key: str) -> str | int | float | None:
    """The item's merge key, or None when it has none usable (not a map, missing, not a scalar)."""
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, str | int | float) else None
