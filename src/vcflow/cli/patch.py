"""`vcflow patch KIND NAME --type merge -p JSON [--subresource status]`, as kubectl does.

The JSON merge patch (RFC 7386) is applied to the object's wire form. Without
`--subresource` the result is written with `update` (metadata and spec; admission reviews
it, so e.g. a JobFlow spec change is refused and a status change is ignored); with
`--subresource status` only its status is written (`update_status`), which is how a person
or a script moves a vcjob's phase. A write that changes nothing prints `(no change)`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from vcflow.api import jsontext
from vcflow.api.errors import Conflict, InputError, NotFound, Origin, ValidationFailed
from vcflow.api.loading import Document, to_model
from vcflow.api.meta import Resource
from vcflow.cli import kinds, options, remote
from vcflow.patch.jsonmerge import merge_patch
from vcflow.store import Store

ATTEMPTS = 5  # re-reads after a concurrent write (Conflict) before giving up


class PatchType(StrEnum):
    MERGE = "merge"


class Subresource(StrEnum):
    STATUS = "status"


PatchOption = Annotated[
    str, typer.Option("-p", "--patch", metavar="JSON", help="The merge patch, a JSON object.")
]
TypeOption = Annotated[
    str,
    typer.Option("--type", metavar="merge", help="Patch type; only merge (RFC 7386) is supported."),
]
SubresourceOption = Annotated[
    Subresource | None,
    typer.Option("--subresource", help="Patch the status subresource instead of the object."),
]


def patch(
    ctx: typer.Context,
    kind: options.KindArgument,
    name: Annotated[str, typer.Argument(metavar="NAME")],
    patch_json: PatchOption,
    patch_type: TypeOption = "merge",
    subresource: SubresourceOption = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Change an object with a JSON merge patch (RFC 7386), e.g. set a vcjob's phase:

    \b
      vcflow patch vcjob test-a --subresource status --type merge \\
        -p '{"status":{"state":{"phase":"Completed"}}}'

    Without --subresource status, metadata and spec are patched and admission reviews the
    result (a JobFlow's spec cannot change).

    The controllers then run in-process until settled, unless a `vcflow controller` runs
    them.
    """
    resolved = kinds.resolve(kind)
    if patch_type != PatchType.MERGE:
        raise typer.BadParameter(
            f'"{patch_type}" is not supported; only merge (RFC 7386) is', param_hint="--type"
        )
    body = _parse(patch_json)
    with remote.writing(ctx, changes=True) as store:
        changed = apply_patch(
            store, resolved, namespace, name, body, status=subresource is not None
        )
        typer.echo(f"{resolved.ref(name)} patched" + ("" if changed else " (no change)"))


def _parse(text: str) -> dict[str, Any]:
    """The patch, read as strictly as a `.json` manifest (`api.jsontext`: no duplicate keys,
    nesting within `bounds.MAX_DEPTH`, ...); the text is quoted at most 60 characters long."""
    shown = repr(text) if len(text) <= 60 else repr(text[:57]) + "..."
    try:
        body = jsontext.loads(text)
    except jsontext.Invalid as exc:
        where = f" (line {exc.line})" if exc.line is not None and "\n" in text else ""
        raise InputError(f"error: unable to parse the patch {shown}: {exc}{where}") from None
    if not isinstance(body, dict):
        raise InputError(f"error: the patch must be a JSON object, not {shown}")
    return body


def apply_patch(
    store: Store, kind: kinds.Kind, namespace: str, name: str, body: dict[str, Any], *, status: bool
) -> bool:
    """Read, patch, write; re-read on a concurrent write unless the patch pins a
    resourceVersion. True if the object changed."""
    pinned = bool((body.get("metadata") or {}).get("resourceVersion"))
    for attempt in range(ATTEMPTS):
        current = _get(store, kind, namespace, name)
        patched = _patched(current, body)
        try:
            written = store.update_status(patched) if status else store.update(patched)
        except Conflict:
            if pinned or attempt == ATTEMPTS - 1:
                raise
            continue
        return written.metadata.resource_version != current.metadata.resource_version
    raise AssertionError("unreachable")


def _get(store: Store, kind: kinds.Kind, namespace: str, name: str) -> Resource:
    try:
        return store.get(kind.model, namespace, name)
    except NotFound:
        raise kind.not_found(name) from None


def _patched(current: Resource, body: dict[str, Any]) -> Resource:
    """The patched object, typed; schema errors and identity changes are refused."""
    data = merge_patch(current.to_dict(), body)
    model, errors = to_model(Document(data, Origin()))
    if errors or model is None:
        raise ValidationFailed(errors)
    before = (current.api_version, current.kind, current.namespace, current.name)
    if (model.api_version, model.kind, model.namespace, model.name) != before:
        raise InputError(
            "error: a patch cannot change apiVersion, kind, metadata.namespace or metadata.name"
        )
    return model
