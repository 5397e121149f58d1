"""`vcflow delete KIND NAME... | -f PATH...`: delete objects, kubectl style.

Each deletion is reviewed (compatibility row 11: an unfinished JobFlow is stopped first, a
JobTemplate an unfinished flow uses stays) unless `--force`. The store removes a flow's
vcjobs with it (garbage collection by owner). Every name is tried; problems are reported
together at the end, one line each, exit 1.
"""

from __future__ import annotations

from typing import Annotated

import typer

from vcflow.api.errors import FieldError, NotFound, ValidationFailed, VcflowError
from vcflow.api.names import object_key
from vcflow.cli import kinds, options, remote
from vcflow.local import manifests
from vcflow.store import Store

Target = tuple[kinds.Kind, str, str]  # kind, namespace, name

NamesArgument = Annotated[list[str] | None, typer.Argument(metavar="NAME")]
KindArgument = Annotated[
    str | None, typer.Argument(metavar="KIND", help=f"Kind: {kinds.HELP}.", show_default=False)
]
FileOption = Annotated[
    list[str] | None,
    options.filename_option(
        "Delete the objects named in these manifests (files, directories or -)."
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Skip the safety check: delete a Pending/Running JobFlow without stopping it, "
        "or a JobTemplate an unfinished flow still uses.",
    ),
]
IgnoreNotFoundOption = Annotated[
    bool, typer.Option("--ignore-not-found", help="Treat a missing object as deleted.")
]


def delete(
    ctx: typer.Context,
    kind: KindArgument = None,
    names: NamesArgument = None,
    filename: FileOption = None,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
    force: ForceOption = False,
    ignore_not_found: IgnoreNotFoundOption = False,
) -> None:
    """Delete objects by kind and name, or those in manifests (-f).

    Deleting a JobFlow deletes its vcjobs. An unfinished (Pending or Running) flow is
    refused: `vcflow stop jobflow NAME` first, or --force to bypass that safety check. The
    controllers then run in-process until settled, unless a `vcflow controller` runs them.
    """
    targets = _targets(kind, names or [], filename or [], namespace)
    problems: list[str] = []
    pods = [object_key(ns, name) for which, ns, name in targets if which is kinds.POD]
    with remote.writing(ctx, deleted_pods=pods, changes=True) as store:
        for target in targets:
            problem = _delete_one(store, target, force=force, ignore_not_found=ignore_not_found)
            if problem:
                problems.append(problem)
        if problems:
            raise VcflowError("\n".join(problems))


def _targets(kind: str | None, names: list[str], files: list[str], namespace: str) -> list[Target]:
    if files:
        if kind or names:
            raise typer.BadParameter("give either KIND NAME... or -f PATH, not both")
        return _from_manifests(files)
    if kind is None or not names:
        raise typer.BadParameter("give KIND and at least one NAME, or -f PATH")
    resolved = kinds.resolve(kind)
    return [(resolved, namespace, name) for name in dict.fromkeys(names)]


def _from_manifests(files: list[str]) -> list[Target]:
    """The objects the manifests name; admission problems do not matter for a delete."""
    loaded = manifests.load(files)
    own = {e for item in loaded.items for e in item.errors}
    unreadable: list[FieldError] = [e for e in loaded.errors if e not in own]
    if unreadable:
        raise ValidationFailed(unreadable)
    loaded.require_objects("delete")
    return [(kinds.of(item.obj), item.obj.namespace, item.obj.name) for item in loaded.items]


def _delete_one(store: Store, target: Target, *, force: bool, ignore_not_found: bool) -> str:
    """Delete one object and print kubectl's line; the problem's one line, or ""."""
    kind, namespace, name = target
    try:
        store.delete(kind.model, namespace, name, force=force)
    except NotFound:
        return "" if ignore_not_found else str(kind.not_found(name))
    except ValidationFailed as exc:
        return " ".join(str(exc).split("\n"))
    typer.echo(f"{kind.quoted(name)} deleted")
    return ""
