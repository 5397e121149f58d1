"""`vcflow apply -f PATH...`: create or update objects from manifests, all or nothing.

Every object is checked first — schema and admission as `validate` does, then the store's
own review against what it holds — and written in one transaction, so a bad object means
nothing is written. Prints kubectl's `<kind>.<group>/<name> created|configured|unchanged`;
warnings go to stderr as `Warning: …`. The controllers then run (`statedir.writing`).
"""

from __future__ import annotations

from dataclasses import replace

import typer

from vcflow.api.errors import FieldError, InputError, Origin, ValidationFailed
from vcflow.cli import kinds, manifests, options, statedir
from vcflow.cli.validate import FilenameOption
from vcflow.store.base import ApplyResult, Store


def apply(ctx: typer.Context, filename: FilenameOption) -> None:
    """Create or update the objects in manifests (like kubectl apply), all or nothing.

    Every object is validated first, against the store and the other manifests; if any is
    rejected nothing is written. Then the controllers run in-process until settled, unless
    a `vcflow controller` process runs them.
    """
    loaded = manifests.load(filename)
    loaded.raise_if_invalid()
    if not loaded.items:
        raise InputError("no objects passed to apply")
    with statedir.writing(options.state_dir(ctx)) as store:
        apply_and_report(store, loaded)


def apply_and_report(store: Store, loaded: manifests.Manifests) -> list[ApplyResult]:
    """Apply every object in one transaction; print warnings (stderr, with file and line)
    and kubectl's `<kind>.<group>/<name> created|configured|unchanged` lines."""
    try:
        results = store.apply(loaded.objects)
    except ValidationFailed as exc:
        raise ValidationFailed([locate(e, loaded) for e in exc.errors]) from None
    for result in results:
        for warning in result.warnings:
            typer.echo(f"Warning: {locate(warning, loaded)}", err=True)
    for result in results:
        typer.echo(f"{kinds.of(result.object).ref(result.object.name)} {result.outcome}")
    return results


def locate(error: FieldError, loaded: manifests.Manifests) -> FieldError:
    """The store's error or warning with the file and line of its object's field."""
    if error.origin.source:
        return error
    for item in loaded.items:
        obj = item.obj
        if (obj.kind, obj.namespace, obj.name) == (error.kind, error.namespace, error.name):
            doc = item.doc
            line = doc.line_of(manifests.parse_path(error.path))
            return replace(error, origin=Origin(doc.origin.source, doc.origin.document, line))
    return error
