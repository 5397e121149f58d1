"""`vcflow graph jobflow [NAME...] -o dot|mermaid|svg` (flows in the store, with their
phases; local or remote as `get`/`describe` read) and `vcflow graph -f FILE -o ...` (every
JobFlow of a manifest not applied, offline). `flowgraph.py` draws; `-o svg` hands the DOT
to Graphviz's `dot` program for the layout — the one layout engine, not one of our own.
"""

from __future__ import annotations

import shutil
import subprocess
from enum import StrEnum
from typing import Annotated

import typer

from vcflow.api import clock
from vcflow.api.errors import NotFound, VcflowError
from vcflow.api.jobflow import JobFlow
from vcflow.cli import flowgraph, kinds, options, remote
from vcflow.local import manifests

#: what `-o svg` needs and how to get it (the one-line error without it)
NO_DOT = (
    "vcflow graph -o svg needs Graphviz's dot program: install Graphviz "
    "(Debian/Ubuntu: apt-get install graphviz), or use -o dot or -o mermaid"
)
#: seconds `dot` may take (a 10,000-entry flow lays out in a few)
DOT_TIMEOUT = 120


class Format(StrEnum):
    DOT = "dot"
    MERMAID = "mermaid"
    SVG = "svg"


KindArgument = Annotated[
    str | None, typer.Argument(metavar="jobflow", help="jobflow (jf): flows in the store.")
]
NamesArgument = Annotated[
    list[str] | None, typer.Argument(metavar="NAME", help="Flows; all of the namespace if none.")
]
FileOption = Annotated[
    list[str] | None,
    options.filename_option(
        "Draw every JobFlow of these manifests (not applied: no phases); - for stdin."
    ),
]
FormatOption = Annotated[
    str,
    typer.Option(
        "-o",
        "--output",
        metavar="dot|mermaid|svg",
        help="dot and mermaid: text; svg: laid out by Graphviz's dot.",
    ),
]


def graph(
    ctx: typer.Context,
    kind: KindArgument = None,
    names: NamesArgument = None,
    filename: FileOption = None,
    output_format: FormatOption = "dot",
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Draw flows as DAGs: entries, dependencies, phases and the critical path (bold).

    `graph jobflow NAME` draws a stored flow with its phases; `graph -f FILE` every JobFlow
    of a manifest, offline. Reads only.
    """
    try:
        output = Format(output_format)
    except ValueError:
        raise typer.BadParameter(
            f'unknown output format "{output_format}": use dot, mermaid or svg',
            param_hint="'-o' / '--output'",
        ) from None
    if filename and (kind or names):
        raise typer.BadParameter("give either -f or jobflow NAME, not both", param_hint="-f")
    if not filename and kind is None:
        raise typer.BadParameter("give jobflow [NAME...] or -f FILE", param_hint="KIND")
    if output is Format.SVG and shutil.which("dot") is None:
        raise VcflowError(NO_DOT)  # (before any reading: nothing to show without it)
    now = clock.SystemClock().now()
    if filename:
        flows, phased = _from_files(filename), False
    else:
        assert kind is not None
        flows, phased = _from_store(ctx, kind, names or [], namespace), True
    pictures = [
        flowgraph.picture(flow, now, phased=phased, prefix=f"{flow.namespace}/{flow.name}/")
        for flow in flows
    ]
    if output is Format.MERMAID:
        typer.echo(flowgraph.mermaid(pictures), nl=False)
    elif output is Format.DOT:
        typer.echo(flowgraph.dot(pictures), nl=False)
    else:
        typer.echo(svg(flowgraph.dot(pictures)), nl=False)


def _from_files(paths: list[str]) -> list[JobFlow]:
    """Every JobFlow of `paths`, once every document passed review (a cycle cannot be
    drawn by rank; an invalid manifest says why, as `validate` does)."""
    loaded = manifests.load(paths)
    loaded.raise_if_invalid()
    flows = [item.obj for item in loaded.valid if isinstance(item.obj, JobFlow)]
    if not flows:
        raise VcflowError(f"no JobFlow in {', '.join(paths)}")
    return flows


def _from_store(ctx: typer.Context, kind: str, names: list[str], namespace: str) -> list[JobFlow]:
    resolved = kinds.resolve(kind)
    if resolved.model is not JobFlow:
        raise typer.BadParameter(f"vcflow graph draws jobflows, not {kind}", param_hint="KIND")
    with remote.reading(ctx) as store:
        if names:
            found, missing = resolved.find(store, namespace, names)
            if missing:
                raise NotFound("\n".join(str(resolved.not_found(n)) for n in missing))
        else:
            found = list(store.list(JobFlow, namespace))
    flows = [obj for obj in found if isinstance(obj, JobFlow)]
    if not flows:
        raise NotFound(f"No resources found in {namespace} namespace.")
    return flows


def svg(dot_text: str) -> str:
    """`dot_text` laid out by Graphviz (`dot -Tsvg`); its complaint as our one-line error."""
    program = shutil.which("dot")
    if program is None:
        raise VcflowError(NO_DOT)
    try:
        done = subprocess.run(
            [program, "-Tsvg"],
            input=dot_text,
            capture_output=True,
            text=True,
            timeout=DOT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VcflowError(f"Graphviz dot failed: {exc}") from None
    if done.returncode != 0:
        why = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise VcflowError(f"Graphviz dot failed: {why}")
    return done.stdout
