"""A vcjob as a JobTemplate and back, on wire data: `vcflow convert` (issue 24, the seed's
"JobTemplate 与 VCJob 可以相互转换").

A JobTemplate's `spec` *is* a vcjob's JobSpec (reference §2.2), so the spec is kept whole
and only `apiVersion`/`kind` change. What a live object carries and a manifest must not is
dropped: its status, the metadata the API server generates, and the labels and annotations
controllers stamp — the inverse of `jobs.build_job` (Volcano's createdBy pair, vcflow's
attempt, switch case, working directory), of the scheduling annotations
(`reconcile.scheduling`) and of the deadline and unschedulable notes. Hence it lives here,
beside the code that stamps them, and names each key once. Plain dicts, not models, so
fields vcflow does not model survive. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from vcflow.api import loading, names, scheduling, workdir
from vcflow.api.errors import Cause, FieldError
from vcflow.reconcile import entries, jobs


class Target(StrEnum):
    """What `--to` asks for."""

    JOBTEMPLATE = "jobtemplate"
    VCJOB = "vcjob"


#: (apiVersion, kind) of each target; the source of one is the other
KINDS: Mapping[Target, tuple[str, str]] = {
    Target.JOBTEMPLATE: (names.FLOW_API_VERSION, "JobTemplate"),
    Target.VCJOB: (names.BATCH_API_VERSION, "Job"),
}
SOURCE: Mapping[Target, Target] = {
    Target.JOBTEMPLATE: Target.VCJOB,
    Target.VCJOB: Target.JOBTEMPLATE,
}

#: metadata the API server (or a controller) writes on a live object; none of it belongs in
#: a manifest: applied again it would be refused (uid, resourceVersion) or wrong (owners)
GENERATED_METADATA = frozenset(
    {
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "ownerReferences",
        "finalizers",
        "selfLink",
    }
)
#: the labels the JobFlow controllers put on the vcjobs they create (Volcano's and vcflow's)
CONTROLLER_LABELS = frozenset({names.LABEL_CREATED_BY_TEMPLATE, names.LABEL_CREATED_BY_FLOW})
#: the annotations controllers and clients stamp. The working directory goes too: `apply`
#: records the directory the converted manifest is applied from (`api.workdir`).
CONTROLLER_ANNOTATIONS = CONTROLLER_LABELS | frozenset(
    {
        jobs.ATTEMPT_ANNOTATION,
        jobs.SWITCH_CASE_ANNOTATION,
        workdir.ANNOTATION,
        scheduling.FLOW_CREATED,
        scheduling.RANK,
        scheduling.HANDOVER,
        entries.DEADLINE_ANNOTATION,
        entries.UNSCHEDULABLE_ANNOTATION,
        "kubectl.kubernetes.io/last-applied-configuration",
    }
)


def described(target: Target) -> str:
    """`a vcjob (batch.volcano.sh/v1alpha1 Job)`, for messages."""
    api_version, kind = KINDS[target]
    article = "a vcjob" if target is Target.VCJOB else "a JobTemplate"
    return f"{article} ({api_version} {kind})"


def problems(
    data: Mapping[str, Any], target: Target, *, name: str | None = None
) -> list[FieldError]:
    """Why `data` cannot become `target` (empty when it can): it must be the other kind
    (the same kind is refused, not passed through: a pipeline that converts twice is
    wrong) with a mapping `metadata` and a name, its own or `name`. Pure."""
    kind, namespace, own_name = loading.identity(dict(data))

    def error(message: str, path: str = "", reason: str = Cause.INVALID) -> FieldError:
        return FieldError(message, path, kind or "object", namespace, own_name, reason=reason)

    wanted = (data.get("apiVersion"), data.get("kind"))
    if wanted == KINDS[target]:
        return [error(f"already {described(target)}: nothing to convert")]
    if wanted != KINDS[SOURCE[target]]:
        shown = f"{kind or 'object'} ({data.get('apiVersion') or 'no apiVersion'})"
        return [
            error(
                f"cannot convert {shown} to {target}: --to {target} takes "
                f"{described(SOURCE[target])}",
                reason=Cause.NOT_SUPPORTED,
            )
        ]
    meta = data.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        return [error("must be a mapping", "metadata", Cause.TYPE_INVALID)]
    if not (name or own_name):
        return [error("Required value (or give one with --name)", "metadata.name", Cause.REQUIRED)]
    return []


def converted(
    data: Mapping[str, Any], target: Target, *, name: str | None = None
) -> dict[str, Any]:
    """`data` (a vcjob or JobTemplate `problems` passes) as `target`: same spec, same
    metadata but what `GENERATED_METADATA`, `CONTROLLER_LABELS` and
    `CONTROLLER_ANNOTATIONS` name, named `name` if given; no status. Keys keep their order;
    unknown top-level fields stay. Pure; `data` is not changed, but its spec is shared, not
    copied (the CLI prints it at once)."""
    api_version, kind = KINDS[target]
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if name is not None and "metadata" not in data:
        out["metadata"] = {}
    for key, value in data.items():
        if key not in ("apiVersion", "kind", "status"):
            out[key] = _clean_metadata(value) if key == "metadata" else value
    if name is not None:
        out["metadata"]["name"] = name  # (a new dict: `_clean_metadata`'s or the one above)
    return out


def _clean_metadata(meta: Any) -> dict[str, Any]:
    """`meta` without generated fields and stamps; anything but a mapping is none."""
    out: dict[str, Any] = {}
    if not isinstance(meta, dict):
        return out
    for key, value in meta.items():
        if key in GENERATED_METADATA:
            continue
        if key in ("labels", "annotations") and isinstance(value, dict):
            dropped = CONTROLLER_LABELS if key == "labels" else CONTROLLER_ANNOTATIONS
            kept = {k: v for k, v in value.items() if k not in dropped}
            if not kept and value:  # only stamps: no empty mapping left behind
                continue
            value = kept
        out[key] = value
    return out
