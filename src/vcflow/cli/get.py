"""`vcflow get KIND [NAME...]`: list objects as kubectl does; never runs the controllers.

A table by default (columns in `columns.py`), or `-o wide|yaml|json|name`. No objects:
`No resources found in <ns> namespace.` on stderr, exit 0. Missing names are reported
after the others are printed, one `Error from server (NotFound): …` line each, exit 1.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from vcflow.api import clock
from vcflow.api.errors import NotFound
from vcflow.api.meta import Resource
from vcflow.cli import columns, kinds, options, output, remote
from vcflow.store.base import Store

NamesArgument = Annotated[
    list[str] | None, typer.Argument(metavar="NAME", help="Names; all objects if none.")
]
AllNamespacesOption = Annotated[
    bool, typer.Option("-A", "--all-namespaces", help="List objects of every namespace.")
]
WatchOption = Annotated[
    bool,
    typer.Option(
        "-w", "--watch", help="After the list, print a line for each change (Ctrl-C ends)."
    ),
]
OutputOption = Annotated[
    output.Format | None,
    typer.Option("-o", "--output", help="yaml, json, name, or wide (a table with more columns)."),
]


def get(
    ctx: typer.Context,
    kind: options.KindArgument,
    names: NamesArgument = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
    all_namespaces: AllNamespacesOption = False,
    output_format: OutputOption = None,
    watch: WatchOption = False,
) -> None:
    """Show objects: a table (columns as kubectl shows Volcano's CRDs), or -o yaml|json|name.

    Reads only: the controllers do not run.
    """
    resolved = kinds.resolve(kind)
    if all_namespaces and names:
        raise typer.BadParameter(
            "a resource cannot be retrieved by name across all namespaces", param_hint="-A"
        )
    with remote.reading(ctx, watching=watch) as store:
        since = store.resource_version()
        if names:
            objects, missing = resolved.find(store, namespace, names)
        else:
            objects, missing = store.list(resolved.model, None if all_namespaces else namespace), []
        if objects or not names:
            _print(
                resolved,
                objects,
                output_format,
                single=len(names or []) == 1 and not watch,
                all_ns=all_namespaces,
            )
        if not objects and not names and output_format in (None, output.Format.WIDE):
            where = "" if all_namespaces else f" in {namespace} namespace"
            typer.echo(f"No resources found{where}.", err=True)
        if missing and not watch:
            raise NotFound("\n".join(str(resolved.not_found(name)) for name in missing))
        if watch:
            scope = None if all_namespaces else namespace
            _watch(store, resolved, scope, set(names or ()), since, output_format, all_namespaces)


def _watch(
    store: Store,
    kind: kinds.Kind,
    namespace: str | None,
    wanted: set[str],
    since: int,
    fmt: output.Format | None,
    all_ns: bool,
) -> None:
    """kubectl's `get -w`: each change after the list as one more row (or document), until
    Ctrl-C (exit 130)."""
    try:
        for event in store.watch([kind.model], namespace=namespace, since_rv=since):
            if wanted and event.name not in wanted:
                continue
            obj = event.object
            if fmt is not None and fmt is not output.Format.WIDE:
                output.serialized([obj], fmt, single=True, out=sys.stdout)
            else:
                cols = columns.columns(kind, wide=fmt is output.Format.WIDE, namespaced=all_ns)
                row = columns.rows([obj], cols, clock.SystemClock().now())
                headers = columns.headers(cols)
                sys.stdout.write(output.aligned(headers, row)[1] + "\n")
            sys.stdout.flush()
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def _print(
    kind: kinds.Kind,
    objects: Sequence[Resource],
    fmt: output.Format | None,
    *,
    single: bool,
    all_ns: bool,
) -> None:
    if fmt is not None and fmt is not output.Format.WIDE:
        if objects or fmt is not output.Format.NAME:
            output.serialized(objects, fmt, single=single, out=sys.stdout)
        return
    if not objects:
        return
    cols = columns.columns(kind, wide=fmt is output.Format.WIDE, namespaced=all_ns)
    rows = columns.rows(objects, cols, clock.SystemClock().now())
    output.table(columns.headers(cols), rows, sys.stdout)
