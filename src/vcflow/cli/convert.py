"""`vcflow convert -f PATH --to jobtemplate|vcjob [--name NAME] [-o yaml|json]`: a vcjob as a
JobTemplate and back, offline (no store is opened), printed to stdout.

`vcflow get vcjob NAME -o yaml | vcflow convert -f - --to jobtemplate` gives a template
without the live object's status, generated metadata or controllers' stamps
(`reconcile.convert`). Every document is checked before anything is printed: a wrong kind or
a schema error is one line naming the file, document and kind (exit 1, nothing printed);
bad usage exits 2. Several documents in, as many out, in order (YAML documents; a `kind:
List` in JSON, as kubectl prints several).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Annotated, Any

import typer

from vcflow.api import loading, names
from vcflow.api.errors import FieldError, Origin, ValidationFailed
from vcflow.cli import kinds, options
from vcflow.local import manifests
from vcflow.reconcile import convert as conversion
from vcflow.reconcile.convert import Target

#: the kinds `--to` takes, by every name `vcflow get` takes them by
_TARGETS = {kinds.JOBTEMPLATE: Target.JOBTEMPLATE, kinds.VCJOB: Target.VCJOB}
OUTPUTS = ("yaml", "json")


def _target(value: str) -> str:
    try:
        kind: kinds.Kind | None = kinds.resolve(value)
    except typer.BadParameter:
        kind = None
    if kind not in _TARGETS:
        raise typer.BadParameter(f'cannot convert to "{value}": use jobtemplate (jt) or vcjob (vj)')
    return value


def _output(value: str) -> str:
    if value not in OUTPUTS:
        raise typer.BadParameter(f'unknown output format "{value}": use yaml or json')
    return value


def _name(value: str | None) -> str | None:
    if value is not None and (why := names.dns1123_subdomain_errors(value)):
        raise typer.BadParameter(f'"{value}": {why[0]}')
    return value


ToOption = Annotated[
    str,
    typer.Option(
        "--to",
        metavar="KIND",
        callback=_target,
        help="What to make: jobtemplate (jt), from vcjobs, or vcjob (vj), from JobTemplates.",
    ),
]
NameOption = Annotated[
    str | None,
    typer.Option(
        "--name",
        metavar="NAME",
        callback=_name,
        help="Name of the object made (one input object only); default: the input's name.",
    ),
]
OutputOption = Annotated[
    str,
    typer.Option("-o", "--output", metavar="FORMAT", callback=_output, help="yaml or json."),
]


def convert(
    filename: options.FilenameOption,
    to: ToOption,
    name: NameOption = None,
    output: OutputOption = "yaml",
) -> None:
    """Convert vcjobs to JobTemplates (--to jobtemplate) or JobTemplates to vcjobs (--to
    vcjob); print them, nothing is written.

    The spec is kept whole; status, generated metadata (uid, resourceVersion,
    ownerReferences, managedFields...) and the labels and annotations controllers add
    (volcano.sh/createdByJobFlow, volcano.sh/createdByJobTemplate, vcflow.io/...) are left
    out; user labels stay. Every document is checked before any is printed.
    """
    target = _TARGETS[kinds.resolve(to)]
    docs = loading.read_documents(filename)
    if not docs:
        raise manifests.NoObjects("convert")
    if name is not None and len(docs) > 1:
        raise typer.BadParameter(
            f"names one object, and the input holds {len(docs)}", param_hint="'--name'"
        )
    errors = [e for doc in docs for e in _problems(doc, target, name)]
    if errors:
        raise ValidationFailed(errors)
    made = [conversion.converted(doc.data, target, name=name) for doc in docs]
    typer.echo(_serialized(made, output), nl=False)


def _problems(doc: loading.Document, target: Target, name: str | None) -> list[FieldError]:
    """The conversion's refusal, else the schema errors of the object as it reads (the
    status left out: it is not converted), each located in its file."""
    found = conversion.problems(doc.data, target, name=name)
    if not found:
        read = {k: v for k, v in doc.data.items() if k != "status"}
        found = loading.to_model(replace(doc, data=read))[1]
    return [_located(e, doc) for e in found]


def _located(error: FieldError, doc: loading.Document) -> FieldError:
    """`error` with the file, document and line of its field (the object's when unknown)."""
    if error.origin.source:
        return error
    line = doc.line_of(manifests.parse_path(error.path))
    where = Origin(doc.origin.source, doc.origin.document, line)
    return replace(error, origin=where)


def _serialized(objects: list[dict[str, Any]], output: str) -> str:
    """YAML documents, or JSON: one object, or kubectl's `kind: List` of several."""
    if output == "json":
        data: Any = objects[0]
        if len(objects) > 1:
            data = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}
            data["items"] = objects
        return json.dumps(data, indent=4, ensure_ascii=False) + "\n"
    return "---\n".join(loading.dump_yaml(obj) for obj in objects)
