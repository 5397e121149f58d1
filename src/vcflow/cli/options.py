"""Arguments and options several verbs share, and the global state directory they use."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vcflow.api import names
from vcflow.cli import kinds
from vcflow.local import statedir

STATE_DIR = "vcflow.state_dir"  # key in the click context's `meta`

KindArgument = Annotated[str, typer.Argument(metavar="KIND", help=f"Kind: {kinds.HELP}.")]

NamespaceOption = Annotated[
    str,
    typer.Option("-n", "--namespace", metavar="NAMESPACE", help="Namespace of the objects."),
]
DEFAULT_NAMESPACE = names.DEFAULT_NAMESPACE


def state_dir(ctx: typer.Context) -> Path:
    """The `--state-dir` given to the root command (or its env var / default)."""
    found = ctx.meta.get(STATE_DIR)
    return found if isinstance(found, Path) else statedir.DEFAULT
