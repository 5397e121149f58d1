"""Arguments and options several verbs share, and the global state directory they use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from vcflow.api import arguments as flowargs
from vcflow.api import clock, names
from vcflow.api.errors import InputError
from vcflow.cli import kinds
from vcflow.kubeapi import fieldvalidation
from vcflow.local import manifests, statedir
from vcflow.runtime import resources
from vcflow.serving.logs import LogLevel

T = TypeVar("T")

STATE_DIR = "vcflow.state_dir"  # key in the click context's `meta`

KindArgument = Annotated[str, typer.Argument(metavar="KIND", help=f"Kind: {kinds.HELP}.")]

PortOption = Annotated[int, typer.Option("--port", help="Port (0: a free one).", min=0, max=65535)]
#: the serving certificate and key of a command that serves HTTPS (`server`, `dashboard`)
TlsCertOption = Annotated[
    Path | None, typer.Option("--tls-cert", metavar="FILE", help="TLS certificate (PEM).")
]
TlsKeyOption = Annotated[
    Path | None, typer.Option("--tls-key", metavar="FILE", help="TLS private key (PEM).")
]
#: the request log of a command that serves HTTP
RequestLogLevelOption = Annotated[
    LogLevel, typer.Option("--log-level", help="info logs one line per request.")
]
DEFAULT_NAMESPACE = names.DEFAULT_NAMESPACE
NamespaceOption = Annotated[
    str,
    typer.Option(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="Namespace of the objects.",
        # (`-n ""`, `-n "$NS"` unset, is the default namespace, as kubectl reads it)
        callback=lambda value: value or DEFAULT_NAMESPACE,
    ),
]
#: The cluster commands' `--context` (the root's takes a `--kubeconfig` with it).
KubeContextOption = Annotated[
    str | None, typer.Option("--context", help="The kubeconfig context to use.")
]
#: The in-cluster commands' `--kubeconfig` (`operator`, `webhook`): see `in_cluster_target`.
InClusterKubeconfigOption = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig",
        metavar="FILE",
        help="Kubeconfig file (default: in a pod its service account, else $KUBECONFIG "
        "or ~/.kube/config).",
    ),
]
ApplyNamespaceOption = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="Namespace of the objects that name none (one that names another is refused).",
        callback=lambda value: value or None,  # (`-n ""`: as not given, as kubectl reads it)
    ),
]


def parsed_by(
    parse: Callable[[T], object], refused: type[Exception] = InputError
) -> Callable[[T | None], T | None]:
    """A typer callback that passes a value on as given once `parse` takes it; a usage
    error (exit 2) in `parse`'s words when it refuses it (raising `refused`)."""

    def check(value: T | None) -> T | None:
        if value is not None:
            try:
                parse(value)
            except refused as exc:
                raise typer.BadParameter(str(exc)) from None
        return value

    return check


def filename_option(help: str) -> Any:
    """`-f/--filename PATH`, repeatable: the manifests a verb reads (`help`: what it does
    with them)."""
    return typer.Option("-f", "--filename", metavar="PATH", help=help)


FilenameOption = Annotated[
    list[str],
    filename_option(
        "Manifest file, directory of manifests (not recursive) or - for stdin; repeatable."
    ),
]


def capacity_option(help: str) -> Any:
    """`--capacity LIST`: a machine's capacity, as `resources.parse_capacity` reads it
    (`help`: what the verb does with it)."""
    return typer.Option(
        "--capacity",
        metavar="LIST",
        callback=parsed_by(resources.parse_capacity),
        help=help,
    )


ArgumentsOption = Annotated[
    list[str] | None,
    typer.Option(
        "-p",
        "--argument",
        metavar="NAME=VALUE",
        # (`-p NAME=VALUE`: which flows declare the names is checked where they are read)
        callback=parsed_by(flowargs.parse_given),
        help="A value of the flows' argument NAME (spec.arguments), written into every flow "
        "that declares it; repeatable.",
    ),
]


def arguments(values: list[str] | None) -> dict[str, str] | None:
    """The `-p` values given, by name (None when none is)."""
    return flowargs.parse_given(values) if values else None


#: `--validate`'s values, kubectl's `true` and `false` among them
VALIDATIONS = {
    "strict": fieldvalidation.Validation.STRICT,
    "true": fieldvalidation.Validation.STRICT,
    "warn": fieldvalidation.Validation.WARN,
    "ignore": fieldvalidation.Validation.IGNORE,
    "false": fieldvalidation.Validation.IGNORE,
}


def _validation(value: str) -> str:
    if value.lower() not in VALIDATIONS:
        raise typer.BadParameter(f"{value!r}: must be one of strict (true), warn, ignore (false)")
    return value


ValidateOption = Annotated[
    str,
    typer.Option(
        "--validate",
        metavar="MODE",
        callback=_validation,
        help="Fields vcflow does not know: strict refuses them (the default), warn says them "
        "and goes on, ignore says nothing; as kubectl's --validate (true is strict, false "
        "is ignore).",
    ),
]


def validation(value: str) -> fieldvalidation.Validation:
    """The `--validate` value given, as admission's field validation."""
    return VALIDATIONS[value.lower()]


def place(loaded: manifests.Manifests, namespace: str | None) -> None:
    """kubectl's `-n` on apply: the objects without a namespace go to `namespace`; one that
    names another is refused (InputError naming its file), nothing applied."""
    if namespace is None:
        return
    problems = []
    for item in loaded.items:
        meta = item.doc.data.get("metadata")
        given = meta.get("namespace") if isinstance(meta, dict) else None
        if not given:
            item.obj.metadata.namespace = namespace
        elif given != namespace:
            problems.append(
                f'{item.doc.origin}: the namespace from the provided object "{given}" does '
                f'not match the namespace "{namespace}". You must pass '
                f"'--namespace={given}' to perform this operation."
            )
    if problems:
        raise InputError("\n".join(problems))


def state_dir(ctx: typer.Context) -> Path:
    """The `--state-dir` given to the root command (or its env var / default)."""
    found = ctx.meta.get(STATE_DIR)
    return found if isinstance(found, Path) else statedir.DEFAULT


def duration(text: str, option: str) -> float:
    """Seconds of a kubectl duration flag (`--timeout 10m`, `--since 5m`: Go's syntax, as
    kubectl reads it); a usage error (exit 2) naming the option if it is not one."""
    seconds = clock.parse_go_duration(text.strip())
    if seconds is None:
        hint = " (give a unit: 30s, 5m, 1h)" if text.strip().isdigit() else ""
        raise typer.BadParameter(f'invalid duration "{text}"{hint}', param_hint=option)
    return seconds


def in_cluster_target(
    ctx: typer.Context, kubeconfig: str | None, context: str | None
) -> tuple[str | None, str | None]:
    """(kubeconfig file, context) of an in-cluster command: its own `--kubeconfig` and
    `--context`, else the root's (None: the in-cluster config, else the default file)."""
    return kubeconfig or root_text(ctx, "kubeconfig"), context or root_text(ctx, "context")


def root_text(ctx: typer.Context, name: str) -> str | None:
    """A global option's value (the root's), if given: the cluster commands take
    `--kubeconfig` and `--context` after the verb as well as before it."""
    value = ctx.find_root().params.get(name)
    return value if isinstance(value, str) and value else None
