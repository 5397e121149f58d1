"""The directory a user applied objects from, recorded on them (`vcflow.io/working-dir`) so
that whoever runs their pods later — `vcflow run`, a `vcflow controller` daemon — starts
each container there when it sets no `workingDir` (and resolves a relative one from it).

`cli/apply.apply_and_report` (every `apply` and `run`) stamps it, and `vcflow server` stamps
its own working directory on what its API creates or updates without one (`defaulting`: a
kubectl user has no other way to say it); the flow controller copies
it from a JobFlow (else its JobTemplate) to the vcjobs it creates (`reconcile.jobs`); the
runtime reads it from the vcjob (`runtime.kubelet_bridge`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from vcflow.api.meta import Resource

ANNOTATION = "vcflow.io/working-dir"
#: The kinds whose pods run somewhere: a JobFlow and a JobTemplate (through their vcjobs)
#: and a vcjob.
KINDS = ("JobFlow", "JobTemplate", "Job")


def stamp(objects: Iterable[Resource], directory: str) -> None:
    """Record `directory` on each object of `KINDS` that records none (in place)."""
    for obj in objects:
        if obj.kind in KINDS and ANNOTATION not in obj.metadata.annotations:
            obj.metadata.annotations[ANNOTATION] = directory


def of(*objects: Resource | None) -> str | None:
    """The first directory recorded on `objects` (None when none records one)."""
    for obj in objects:
        if obj is not None:
            found = obj.metadata.annotations.get(ANNOTATION)
            if found:
                return found
    return None


def defaulting(
    directory: str, then: Callable[[Resource], bool | None] | None = None
) -> Callable[[Resource], bool]:
    """A store defaulter (`store.base.Defaulter`) that runs `then` (a kind's own defaults),
    then `stamp`s `directory` on an object of `KINDS` that records none (an empty value
    is kept: the pods then start in their own directories); False when neither changed
    anything."""

    def default(obj: Resource) -> bool:
        changed = then(obj) is not False if then is not None else False
        if obj.kind in KINDS and ANNOTATION not in obj.metadata.annotations:
            obj.metadata.annotations[ANNOTATION] = directory
            changed = True
        return changed

    return default
