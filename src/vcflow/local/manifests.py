"""Manifests named on the command line → reviewed objects, every problem collected.

paths → documents (`api.loading`) → typed objects (schema errors) → admission
(`admission.review`). All objects are reviewed together: a JobFlow's entries resolve against
the JobTemplates of its namespace among the same inputs, and names two objects would both
generate are warned of (`admission.collisions`). `validate` reports the result;
`apply` and `run` write nothing unless `raise_if_invalid` passes. Problems keep input order;
an unreadable file is one problem and the other files are still read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from vcflow.admission import collisions
from vcflow.admission import review as admission
from vcflow.api import arguments as flowargs
from vcflow.api import gcpause, loading
from vcflow.api.errors import (
    ArgumentError,
    FieldError,
    InputError,
    Origin,
    ParseError,
    ValidationFailed,
)
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate, templates_by_namespace
from vcflow.api.loading import Document
from vcflow.api.meta import Resource
from vcflow.kubeapi import fieldvalidation
from vcflow.podserver import isolation

Identity = tuple[str, str, str]  # (kind, namespace, name)


@dataclass(frozen=True)
class Item:
    """One typed object, the document it came from and its own errors (if any)."""

    obj: Resource
    doc: Document
    errors: tuple[FieldError, ...] = ()


@dataclass(frozen=True)
class Manifests:
    """Everything read from the given paths: objects, errors and warnings, in input order;
    `argument_error`: why the arguments given (`load(arguments=...)`) were not taken."""

    items: tuple[Item, ...]
    errors: tuple[FieldError, ...]
    warnings: tuple[FieldError, ...]
    argument_error: ArgumentError | None = None
    #: every document was read and typed (no file or schema error hides an object)
    all_typed: bool = True

    @property
    def objects(self) -> list[Resource]:
        return [item.obj for item in self.items]

    @property
    def valid(self) -> list[Item]:
        """Objects that have no error of their own."""
        return [item for item in self.items if not item.errors]

    def raise_if_invalid(self) -> None:
        """The ArgumentError of an argument no flow declares (a usage error: the flows'
        own errors may follow from it, a required argument without its value), when every
        document was read and typed, so every flow was looked at; else ValidationFailed
        with every problem, unless there is none."""
        if self.argument_error is not None and self.all_typed:
            raise self.argument_error
        if self.errors:
            raise ValidationFailed(list(self.errors))
        if self.argument_error is not None:
            raise self.argument_error

    def require_objects(self, verb: str) -> None:
        """NoObjects (kubectl's `error: no objects passed to <verb>`) when the paths held no
        object: empty files, only comments or `---`, directories without manifests."""
        if not self.items and not self.errors:
            raise NoObjects(verb)


class NoObjects(InputError):
    """The manifests given hold no object at all; nothing is done."""

    def __init__(self, verb: str) -> None:
        super().__init__(f"error: no objects passed to {verb}")


def load(
    paths: Sequence[str],
    arguments: Mapping[str, str] | None = None,
    validation: fieldvalidation.Validation = fieldvalidation.Validation.STRICT,
) -> Manifests:
    """Read, type and review every object in `paths` (`-` is stdin); never raises for input.
    Fields vcflow does not know are errors, warnings or nothing by `validation` (`--validate`:
    `fieldvalidation.judged`).

    `arguments` (`-p NAME=VALUE`) are written into the flows that declare them before they
    are reviewed (`api.arguments.give`), so a required one given here is no error; a name
    that no flow declares is `argument_error`, and no flow is changed then.

    The cyclic GC is paused: a big manifest's nodes, data and models are acyclic, and
    collecting again and again over them cost more than reading them.
    """
    given: ArgumentError | None = None
    with gcpause.paused():
        slots = _read(paths)
        problems: list[list[FieldError]] = [[s] if isinstance(s, FieldError) else [] for s in slots]
        typed = _typed(slots, problems)
        if arguments:
            try:
                flowargs.give([o for _, o in typed.values() if isinstance(o, JobFlow)], arguments)
            except ArgumentError as exc:
                given = exc
        warnings = _review(typed, problems, validation)
    items = tuple(Item(obj, doc, tuple(problems[i])) for i, (doc, obj) in typed.items())
    errors = tuple(e for found in problems for e in found)
    all_typed = len(typed) == len(slots) and all(isinstance(s, Document) for s in slots)
    return Manifests(items, errors, tuple(warnings), given, all_typed)


def _read(paths: Sequence[str]) -> list[Document | FieldError]:
    """Documents of every file, in order; an unreadable path or file becomes one error."""
    slots: list[Document | FieldError] = []
    for raw in paths:
        try:
            files = loading.expand_paths([raw])
        except ParseError as exc:
            slots.append(_parse_problem(exc))
            continue
        for source in files:
            for item in loading.read_file_lenient(source):
                slots.append(_parse_problem(item) if isinstance(item, ParseError) else item)
    return slots


def _parse_problem(exc: ParseError) -> FieldError:
    """A ParseError as a FieldError with the same one-line text and a structured origin."""
    where = str(exc.origin)
    text = str(exc)
    return FieldError(text.removeprefix(f"{where}: ") if where else text, origin=exc.origin)


def _typed(
    slots: list[Document | FieldError], problems: list[list[FieldError]]
) -> dict[int, tuple[Document, Resource]]:
    """Slot index → (document, typed object); schema errors and duplicates go to `problems`."""
    typed: dict[int, tuple[Document, Resource]] = {}
    seen: dict[Identity, Origin] = {}
    for i, slot in enumerate(slots):
        if not isinstance(slot, Document):
            continue
        obj, schema_errors = loading.to_model(slot)
        problems[i] += schema_errors
        if obj is None:
            continue
        duplicate = _duplicate(obj, slot, seen)
        if duplicate is None:
            typed[i] = (slot, obj)
        else:
            problems[i].append(duplicate)
    return typed


def _duplicate(obj: Resource, doc: Document, seen: dict[Identity, Origin]) -> FieldError | None:
    """An error for the second object of one kind/namespace/name; records the first."""
    identity = (obj.kind, obj.namespace, obj.name)
    first = seen.get(identity)
    if first is None:
        seen[identity] = doc.origin
        return None
    where = f" at {first}" if str(first) else ""
    return FieldError(
        f"duplicate object: {obj.kind} {obj.namespace}/{obj.name} is already given{where}",
        kind=obj.kind,
        namespace=obj.namespace,
        name=obj.name,
        origin=doc.origin,
    )


def warnings_against(
    loaded: Manifests,
    stored: Callable[[str], Iterable[JobTemplate]],
    validation: fieldvalidation.Validation = fieldvalidation.Validation.STRICT,
) -> list[FieldError]:
    """The warnings `validate` gives of `loaded`, a JobFlow's entries resolved against the
    JobTemplates `stored(namespace)` gives too (a store's; the manifests' own first): what
    `apply` warns of manifests it refuses before they reach the store, without saying
    TemplateNotFound of a template the store holds."""
    typed = {i: (item.doc, item.obj) for i, item in enumerate(loaded.items)}
    return _review(typed, [[] for _ in typed], validation, stored)


def _review(
    typed: dict[int, tuple[Document, Resource]],
    problems: list[list[FieldError]],
    validation: fieldvalidation.Validation,
    stored: Callable[[str], Iterable[JobTemplate]] | None = None,
) -> list[FieldError]:
    """Admission of every typed object, unknown fields judged by `validation`; errors go to
    `problems`, warnings are returned. A flow's templates are those of its namespace among
    the objects, then `stored`'s."""
    templates = templates_by_namespace(obj for _, obj in typed.values())
    if stored is not None:
        for ns in {obj.namespace for _, obj in typed.values() if isinstance(obj, JobFlow)}:
            templates[ns] = {t.name: t for t in stored(ns)} | templates.get(ns, {})
    warnings: list[FieldError] = []
    for i, (doc, obj) in typed.items():
        context = admission.Context(
            templates=templates.get(obj.namespace, {}),
            resolve_templates=True,
            isolation=isolation.usable(),  # what the local runtime can do here
            unknown_fields=validation is not fieldvalidation.Validation.IGNORE,
        )
        reviewed = fieldvalidation.judged(admission.review(obj, context=context), validation)
        found = [_locate(e, doc) for e in reviewed]
        problems[i] += admission.errors_only(found)
        warnings += by_line(admission.warnings_only(found))
    docs = {(obj.kind, obj.namespace, obj.name): doc for doc, obj in typed.values()}
    for clash in collisions.input_warnings([obj for _, obj in typed.values()]):
        warnings.append(_locate(clash, docs[(clash.kind, clash.namespace, clash.name)]))
    return warnings


def by_line(found: Sequence[FieldError]) -> list[FieldError]:
    """One object's problems in the order of their lines (stable; unknown lines first)."""
    return sorted(found, key=lambda e: e.origin.line or 0)


def _locate(error: FieldError, doc: Document) -> FieldError:
    """The error with the file, document and line of its field (as far as the YAML has it)."""
    if error.origin.source:
        return error
    line = doc.line_of(parse_path(error.path))
    return replace(error, origin=Origin(doc.origin.source, doc.origin.document, line))


_PATH_PART = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def parse_path(path: str) -> tuple[str | int, ...]:
    """`spec.flows[2].dependsOn.targets[0]` → `("spec", "flows", 2, "dependsOn", "targets", 0)`.

    The inverse of `modelerrors.format_path`; a bracketed non-number (a label key) stays a string.
    """
    parts: list[str | int] = []
    for name, index in _PATH_PART.findall(path):
        if name:
            parts.append(name)
        else:
            parts.append(int(index) if index.isdigit() else index)
    return tuple(parts)


def reference(obj: Resource) -> str:
    """kubectl's `<kind>.<group>/<name>`: `jobflow.flow.volcano.sh/demo`."""
    group, slash, _ = obj.api_version.partition("/")
    if not slash:  # the core group (`v1`): `configmap/settings`
        return f"{obj.kind.lower()}/{obj.name}"
    return f"{obj.kind.lower()}.{group}/{obj.name}"
