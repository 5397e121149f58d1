"""`vcflow validate -f PATH...`: schema and admission checks of manifests, against each other
and never against a store (none is opened); nothing is written.

Like `kubectl apply --dry-run`: one `<kind>.<group>/<name> validated` line per good object on
stdout, `Warning: …` lines on stderr, and every problem raised at once as ValidationFailed for
the error boundary in `cli/app.py` (one line each, exit 1); a field vcflow does not know is
one of them unless `--validate=warn|ignore` (as kubectl's `--validate`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from vcflow.cli import options
from vcflow.local import manifests

FilenameOption = Annotated[
    list[str],
    typer.Option(
        "-f",
        "--filename",
        metavar="PATH",
        help="Manifest file, directory of manifests (not recursive) or - for stdin; repeatable.",
    ),
]


def validate(filename: FilenameOption, field_validation: options.ValidateOption = "strict") -> None:
    """Check manifests (schema and admission rules) without a store; nothing is written.

    All objects are checked together: a JobFlow's entries are resolved against the
    JobTemplates of its namespace given alongside it. Nothing already applied is read:
    `apply` also checks the objects against the store (a template it holds, a JobFlow's
    spec that cannot change). A field vcflow does not know is an error (--validate=warn
    makes it a warning).
    """
    loaded = manifests.load(filename, validation=options.validation(field_validation))
    loaded.require_objects("validate")
    for warning in loaded.warnings:
        typer.echo(f"Warning: {warning}", err=True)
    for item in loaded.valid:
        typer.echo(f"{manifests.reference(item.obj)} validated")
    loaded.raise_if_invalid()
