"""`vcflow apply -f PATH...`: create or update objects from manifests, all or nothing.

Every object is checked first — schema and admission as `validate` does, then the store's
own review against what it holds — and written in one transaction, so a bad object means
nothing is written. Prints kubectl's `<kind>.<group>/<name> created|configured|unchanged`;
warnings go to stderr as `Warning: …`, a refused input's too (before the error). The
controllers then run (`statedir.writing`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

import typer

from vcflow.api import gcpause, printable, workdir
from vcflow.api.errors import FieldError, Origin, ValidationFailed, VcflowError
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.loading import Document
from vcflow.cli import kinds, options, remote
from vcflow.kubeapi import fieldvalidation
from vcflow.local import manifests
from vcflow.store.base import ApplyResult, Store


def apply(
    ctx: typer.Context,
    filename: options.FilenameOption,
    namespace: options.ApplyNamespaceOption = None,
    argument: options.ArgumentsOption = None,
    field_validation: options.ValidateOption = "strict",
) -> None:
    """Create or update the objects in manifests (like kubectl apply), all or nothing.

    Every object is validated first, against the store and the other manifests; if any is
    rejected nothing is written. Then the controllers run in-process until settled, unless
    a `vcflow controller` process runs them. `-p NAME=VALUE` gives a flow argument's value,
    written into the stored flow. A field vcflow does not know is an error (--validate=warn
    makes it a warning).
    """
    validation = options.validation(field_validation)
    loaded = manifests.load(filename, options.arguments(argument), validation)
    options.place(loaded, namespace)
    try:
        loaded.raise_if_invalid()
    except ValidationFailed:  # (refused here, before the store's review: its warnings)
        _warn_refused(ctx, loaded, validation)
        raise
    loaded.require_objects("apply")
    with remote.writing(ctx) as store:
        apply_and_report(store, loaded, validation)


def apply_and_report(
    store: Store,
    loaded: manifests.Manifests,
    validation: fieldvalidation.Validation = fieldvalidation.Validation.STRICT,
) -> list[ApplyResult]:
    """Apply every object in one transaction; print warnings (stderr, with file and line;
    with `--validate=ignore` none of an unknown field) and kubectl's
    `<kind>.<group>/<name> created|configured|unchanged` lines. Records the current
    directory on the objects that record none (`api.workdir`)."""
    workdir.stamp(loaded.objects, os.getcwd())
    try:
        with gcpause.paused():  # thousands of models built and dropped: see gcpause
            results = store.apply(loaded.objects)
    except ValidationFailed as exc:  # (its warnings first, then the errors: as kubectl)
        where = _Documents(loaded)
        _warn(where, fieldvalidation.judged(exc.warnings, validation))
        raise ValidationFailed([where.locate(e) for e in exc.errors]) from None
    except VcflowError as exc:  # (a remote apply's notes: what it could not undo)
        for note in getattr(exc, "__notes__", ()):
            typer.echo(printable.escaped(str(note)), err=True)
        raise
    if validation is fieldvalidation.Validation.IGNORE:  # (the store's review, a server's too)
        results = [
            replace(r, warnings=tuple(fieldvalidation.judged(r.warnings, validation)))
            for r in results
        ]
    if any(result.warnings for result in results):
        where = _Documents(loaded)
        _warn(where, [w for result in results for w in result.warnings])
    if results:  # one write: a flush per line costs more than the line on big batches
        typer.echo(
            "\n".join(f"{kinds.of(r.object).ref(r.object.name)} {r.outcome}" for r in results)
        )
    return results


def _warn_refused(
    ctx: typer.Context, loaded: manifests.Manifests, validation: fieldvalidation.Validation
) -> None:
    """The warnings of manifests refused before they reach the store, as `validate` prints
    them (a refused write says its warnings too), less TemplateNotFound of a template the
    store holds; if the store cannot be read, those `validate` prints."""
    try:
        with remote.reading(ctx) as store:
            found = manifests.warnings_against(
                loaded, lambda ns: store.list(JobTemplate, ns), validation
            )
    except VcflowError:
        found = list(loaded.warnings)
    for warning in found:
        typer.echo(f"Warning: {warning}", err=True)


def _warn(where: _Documents, warnings: Sequence[FieldError]) -> None:
    """`Warning: …` lines on stderr, each with its file and line, by line within an object."""
    if not warnings:
        return
    by_object: dict[tuple[str, str, str], list[FieldError]] = {}
    for w in warnings:
        by_object.setdefault((w.kind, w.namespace, w.name), []).append(where.locate(w))
    lines = [w for found in by_object.values() for w in manifests.by_line(found)]
    typer.echo("\n".join(f"Warning: {w}" for w in lines), err=True)


def locate(error: FieldError, loaded: manifests.Manifests) -> FieldError:
    """The store's error or warning with the file and line of its object's field."""
    return _Documents(loaded).locate(error)


class _Documents:
    """The document of each given object, by kind, namespace and name (the first one's), to
    locate the store's errors and warnings; indexed once: a scan per error was quadratic."""

    def __init__(self, loaded: manifests.Manifests) -> None:
        self._docs: dict[manifests.Identity, Document] = {}
        for item in loaded.items:
            obj = item.obj
            self._docs.setdefault((obj.kind, obj.namespace, obj.name), item.doc)

    def locate(self, error: FieldError) -> FieldError:
        if error.origin.source:
            return error
        doc = self._docs.get((error.kind, error.namespace, error.name))
        if doc is None:
            return error
        line = doc.line_of(manifests.parse_path(error.path))
        return replace(error, origin=Origin(doc.origin.source, doc.origin.document, line))
