"""`vcflow get KIND[,KIND...] [NAME...]` / `vcflow get KIND/NAME...`: list objects as kubectl
does; never runs the controllers. The `get` verb of `app.py`.

A table by default (columns in `columns.py`), or `-o wide|yaml|json|name`, `-o
jsonpath=TEMPLATE`, `-o custom-columns=HEADER:PATH,...` (`output.py`); `--sort-by=PATH`,
`--no-headers`, `-l/--selector` (the store's label selectors, the server's in remote mode)
and `--field-selector` (`metadata.name`, `metadata.namespace` and each kind's fields, `=`,
`==`, `!=`, as the server takes them: `server/fields.py`). Several kinds print one table
each, a blank line apart, names as `kind.group/name` (kubectl's form). No objects: `No
resources found in <ns> namespace.` on stderr, exit 0. Missing names are reported after the
others are printed, one `Error from server (NotFound): …` line each, exit 1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer

from vcflow.api import clock
from vcflow.api.errors import InputError, NotFound
from vcflow.api.meta import Resource
from vcflow.cli import columns, jsonpath, kinds, options, output, remote
from vcflow.store.base import Selector, Store

KindsArgument = Annotated[
    str,
    typer.Argument(
        metavar="KIND[,KIND...]|KIND/NAME",
        help=f"Kind, several comma-joined, or KIND/NAME (then every argument is): {kinds.HELP}.",
        show_default=False,
    ),
]
NamesArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="NAME", help="Names (or more KIND/NAME); all objects if none."),
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
    str | None,
    typer.Option(
        "-o",
        "--output",
        metavar="FORMAT",
        help=f"{output.FORMATS} (kubectl's JSONPath: "
        "'jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}').",
    ),
]
SelectorOption = Annotated[
    str | None,
    typer.Option(
        "-l",
        "--selector",
        metavar="SELECTOR",
        help="Label selector: 'a=b', 'a!=b', 'a in (x,y)', 'a', '!a', comma-joined.",
    ),
]
FieldSelectorOption = Annotated[
    str | None,
    typer.Option(
        "--field-selector",
        metavar="SELECTOR",
        help="Field selector as the server takes it: metadata.name=x, metadata.namespace!=y.",
    ),
]
SortByOption = Annotated[
    str | None,
    typer.Option("--sort-by", metavar="JSONPATH", help="Sort by this field: '.metadata.name'."),
]
NoHeadersOption = Annotated[
    bool, typer.Option("--no-headers", help="Tables without their header line.")
]

Match = Callable[[Resource], bool]


def get(
    ctx: typer.Context,
    kind: KindsArgument,
    names: NamesArgument = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
    all_namespaces: AllNamespacesOption = False,
    output_format: OutputOption = None,
    selector: SelectorOption = None,
    field_selector: FieldSelectorOption = None,
    sort_by: SortByOption = None,
    no_headers: NoHeadersOption = False,
    watch: WatchOption = False,
) -> None:
    """Show objects: a table (columns as kubectl shows Volcano's CRDs), or -o
    yaml|json|name|wide|jsonpath=...|custom-columns=...

    Reads only: the controllers do not run.
    """
    fmt = output.parse(output_format)
    targets = kinds.targets([kind, *(names or ())])
    named = any(t.names for t in targets)
    if all_namespaces and named:
        raise typer.BadParameter(
            "a resource cannot be retrieved by name across all namespaces", param_hint="-A"
        )
    if named and (selector is not None or field_selector is not None):
        raise typer.BadParameter(
            "name cannot be provided when a selector is specified", param_hint="NAME"
        )
    if watch and len(targets) > 1:
        raise typer.BadParameter(
            "watch is only supported on one kind at a time", param_hint="'-w' / '--watch'"
        )
    order = _sort_key(sort_by)
    labels = _label_selector(selector)
    scope = None if all_namespaces else namespace
    with remote.reading(ctx, watching=watch) as store:
        since = store.resource_version()
        found: list[tuple[kinds.Kind, list[Resource]]] = []
        missing: list[NotFound] = []
        for target in targets:
            matches = _field_matcher(field_selector, target.kind)
            if target.names:
                objects, absent = target.kind.find(store, namespace, target.names)
                missing += [target.kind.not_found(name) for name in absent]
            else:
                objects = store.list(target.kind.model, scope, labels)
            objects = [obj for obj in objects if matches(obj)]
            if order is not None:
                objects.sort(key=order)
            found.append((target.kind, objects))
        every = [obj for _, objects in found for obj in objects]
        single = len(targets) == 1 and len(targets[0].names) == 1 and not watch
        documents = output.Documents(fmt, sys.stdout)
        if every or not named:
            if fmt.tabular:
                _tables(found, fmt, all_ns=all_namespaces, headers=not no_headers)
            elif watch:
                for obj in every:
                    documents.write(obj)
            elif every or fmt.format is not output.Format.NAME:
                output.serialized(every, fmt, single=single, out=sys.stdout)
        if not every and not named and fmt.tabular:
            cluster = not any(t.kind.namespaced for t in targets)
            where = "" if all_namespaces or cluster else f" in {namespace} namespace"
            typer.echo(f"No resources found{where}.", err=True)
        if missing and not watch:
            raise NotFound("\n".join(str(error) for error in missing))
        if watch:
            target = targets[0]
            wanted = set(target.names)
            matches = _field_matcher(field_selector, target.kind)
            accepts: Match = lambda obj: (  # noqa: E731
                (not wanted or obj.name in wanted)
                and labels.matches(obj.metadata.labels or {})
                and matches(obj)
            )
            header = fmt.tabular and not every and not no_headers  # (kubectl's, on the first row)
            where_ = scope if target.kind.namespaced else None
            _watch(
                store, target.kind, where_, accepts, since, fmt, documents, all_namespaces, header
            )


def _label_selector(text: str | None) -> Selector:
    """The `-l` selector, parsed here so a bad one reads the same embedded and remote."""
    return Selector() if text is None else Selector.parse(text)


def _field_matcher(text: str | None, kind: kinds.Kind) -> Match:
    """The `--field-selector` as a test of an object, with the server's fields and words
    (server/fields.py), applied here: embedded and remote alike."""
    if text is None:
        return lambda obj: True
    from vcflow.server import fields  # (only when asked: it brings the server's modules)
    from vcflow.server.status import ApiError

    try:
        parsed = fields.parse(text, str(kind.model.model_fields["kind"].default))
    except ApiError as exc:
        raise InputError(exc.message) from None
    return lambda obj: parsed.matches(obj.to_dict())


def _sort_key(text: str | None) -> Callable[[Resource], Any] | None:
    if text is None:
        return None
    try:
        path = jsonpath.relaxed(text)
    except jsonpath.TemplateError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--sort-by'") from None
    key: Callable[[Resource], Any] = output.sort_key(path)
    return key


def _watch(
    store: Store,
    kind: kinds.Kind,
    namespace: str | None,
    accepts: Match,
    since: int,
    fmt: output.Output,
    documents: output.Documents,
    all_ns: bool,
    header: bool = False,
) -> None:
    """kubectl's `get -w`: each change after the list as one more row (or document), until
    Ctrl-C (exit 130); `header`: the table's header before the first row (the list printed
    none: it was empty), as kubectl prints it."""
    try:
        for event in store.watch([kind.model], namespace=namespace, since_rv=since):
            obj = event.object
            if not accepts(obj):
                continue
            if not fmt.tabular:
                documents.write(obj)
            else:
                headers, rows = _table(kind, [obj], fmt, all_ns=all_ns, prefixed=False)
                lines = output.aligned(headers, rows)
                sys.stdout.write("\n".join(lines if header else lines[1:]) + "\n")
                header = False
            sys.stdout.flush()
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def _tables(
    found: Sequence[tuple[kinds.Kind, Sequence[Resource]]],
    fmt: output.Output,
    *,
    all_ns: bool,
    headers: bool,
) -> None:
    """One table per kind that has objects, a blank line apart (with headers), names as
    `kind.group/name` when objects of several kinds are printed, as kubectl does."""
    shown = [(kind, objects) for kind, objects in found if objects]
    prefixed = len(shown) > 1
    for i, (kind, objects) in enumerate(shown):
        if i and headers:
            sys.stdout.write("\n")
        titles, rows = _table(kind, objects, fmt, all_ns=all_ns, prefixed=prefixed)
        lines = output.aligned(titles, rows)
        for line in lines if headers else lines[1:]:
            sys.stdout.write(line + "\n")


def _table(
    kind: kinds.Kind,
    objects: Sequence[Resource],
    fmt: output.Output,
    *,
    all_ns: bool,
    prefixed: bool,
) -> tuple[list[str], list[list[str]]]:
    """The headers and rows of `kind`'s table, or of `-o custom-columns`."""
    if fmt.format is output.Format.CUSTOM_COLUMNS:
        rows = [output.custom_cells(obj.to_dict(), fmt.columns) for obj in objects]
        return [col.header for col in fmt.columns], rows
    wide = fmt.format is output.Format.WIDE
    cols = columns.columns(kind, wide=wide, namespaced=all_ns and kind.namespaced)
    rows = columns.rows(objects, cols, clock.SystemClock().now())
    if prefixed:
        at = next(i for i, col in enumerate(cols) if col.format == "name")
        for row, obj in zip(rows, objects, strict=True):
            row[at] = kind.ref(obj.name)
    return columns.headers(cols), rows
