"""`vcflow wait KIND NAME... --for=...` (also `KIND/NAME`, `-l`, `--all`): block until each
object meets a condition, as kubectl wait does, so scripts can wait for a flow embedded or
through a server (`remote.reading`). Registered in `app.py`.

- `--for=jsonpath='{.status.state.phase}'=Succeed`: the path's value (every one, if several)
  printed as kubectl's JSONPath prints it equals the value; with no `=VALUE`, the field
  exists;
- `--for=condition=NAME[=VALUE]`: a `status.conditions` entry of that type with status
  VALUE (default True), as pods have; jobflows and vcjobs have phases instead, so there the
  condition is the phase (`condition=Succeed`, `condition=Completed`; `=false`: not it);
- `--for=delete`: the object is gone.

Each object met prints `<kind>.<group>/<name> condition met`; exit 0 when all are. At
`--timeout` (30s by default, Go's durations: 10m, 1h; 0 looks once, a negative one waits a
week, as kubectl's) each one not met prints `error: timed out waiting for the condition on
<plural>/<name>`, exit 1. An object that does not exist
(unless waiting for its deletion) is `Error from server (NotFound): ...`, exit 1. The store
is read again after each write it reports (`Store.wait`), at least every half second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from vcflow.api.errors import NotFound, VcflowError
from vcflow.api.meta import Resource
from vcflow.cli import jsonpath, kinds, options, remote
from vcflow.store.base import Cursor, Selector, Store

ForOption = Annotated[
    str,
    typer.Option(
        "--for",
        metavar="CONDITION",
        help="jsonpath='{.status.state.phase}'=Succeed, condition=NAME[=VALUE] (the phase "
        "for jobflows and vcjobs), or delete.",
        show_default=False,
    ),
]
TimeoutOption = Annotated[
    str,
    typer.Option(
        "--timeout",
        metavar="DURATION",
        help="Give up after this long: 30s, 10m, 1h (0: look once; negative: a week).",
    ),
]
SelectorOption = Annotated[
    str | None,
    typer.Option("-l", "--selector", metavar="SELECTOR", help="Wait for the objects it selects."),
]
AllOption = Annotated[bool, typer.Option("--all", help="Wait for every object of the kind.")]
KindArgument = Annotated[
    str,
    typer.Argument(metavar="KIND|KIND/NAME", help=f"Kind, or KIND/NAME: {kinds.HELP}."),
]
NamesArgument = Annotated[list[str] | None, typer.Argument(metavar="NAME", help="Names.")]

#: How long one read may be late when the store does not report a write (another process
#: writing a state directory).
RECHECK = 0.5
#: what a negative --timeout waits (kubectl's week)
WEEK = 7 * 24 * 3600.0


class TimedOut(VcflowError):
    """Objects not met by the deadline; one kubectl line each."""


Check = Callable[[Resource | None], bool]


@dataclass(frozen=True)
class Condition:
    """A parsed `--for`: `check` takes the object, or None once it is gone."""

    check: Check
    deleted: bool = False


def wait(
    ctx: typer.Context,
    kind: KindArgument,
    names: NamesArgument = None,
    condition: ForOption = "",
    timeout: TimeoutOption = "30s",
    selector: SelectorOption = None,
    every: AllOption = False,
    namespace: options.NamespaceOption = options.DEFAULT_NAMESPACE,
) -> None:
    """Wait until objects meet a condition (kubectl wait): exit 0 when all do, 1 at the
    timeout."""
    wanted = parse_for(condition)
    seconds = options.duration(timeout, "'--timeout'")
    targets = kinds.targets([kind, *(names or ())])
    named = any(t.names for t in targets)
    if named and (selector is not None or every):
        raise typer.BadParameter(
            "name cannot be provided when a selector or --all is specified", param_hint="NAME"
        )
    if not named and selector is None and not every:
        raise typer.BadParameter(
            "give the objects' names, KIND/NAME, -l SELECTOR or --all", param_hint="NAME"
        )
    labels = Selector() if selector is None else Selector.parse(selector)
    deadline = time.monotonic() + (WEEK if seconds < 0 else seconds)
    with remote.reading(ctx) as store:
        pending: list[tuple[kinds.Kind, str]] = []
        for target in targets:
            chosen = target.names or tuple(
                obj.name for obj in store.list(target.kind.model, namespace, labels)
            )
            pending += [(target.kind, name) for name in chosen]
        if not pending:
            raise VcflowError("error: no matching resources found")
        _until(store, namespace, pending, wanted, deadline)


def _until(
    store: Store,
    namespace: str,
    pending: list[tuple[kinds.Kind, str]],
    wanted: Condition,
    deadline: float,
) -> None:
    while True:
        since = Cursor.now(store)
        for kind, name in list(pending):
            try:
                obj: Resource | None = store.get(kind.model, namespace, name)
            except NotFound:
                if not wanted.deleted:
                    raise kind.not_found(name) from None
                obj = None
            if wanted.check(obj):
                typer.echo(f"{kind.ref(name)} condition met")
                pending.remove((kind, name))
        if not pending:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimedOut(
                "\n".join(
                    f"error: timed out waiting for the condition on {kind.plural}/{name}"
                    for kind, name in pending
                )
            )
        try:
            store.wait(since, min(left, RECHECK))
        except KeyboardInterrupt:
            raise typer.Exit(130) from None


def parse_for(text: str) -> Condition:
    """The `--for` value; a usage error (exit 2) in one line if it is none of kubectl's."""
    if not text:
        raise typer.BadParameter(
            "give --for=jsonpath=PATH=VALUE, --for=condition=NAME or --for=delete",
            param_hint="'--for'",
        )
    form, _, rest = text.partition("=")
    if form.lower() == "delete" and not rest:
        return Condition(lambda obj: obj is None, deleted=True)
    if form.lower() == "jsonpath" and rest:
        return _jsonpath(rest)
    if form.lower() == "condition" and rest:
        name, _, value = rest.partition("=")
        return Condition(_condition(name, value or "true"))
    raise typer.BadParameter(
        f'unrecognized condition: "{text}": use jsonpath=PATH=VALUE, condition=NAME or delete',
        param_hint="'--for'",
    )


def _jsonpath(text: str) -> Condition:
    """`{.a.b}=VALUE`, `.a.b=VALUE` or `{.a.b}` (exists)."""
    if text.startswith("{"):
        close = text.find("}")
        if close < 0:
            raise typer.BadParameter(f'unclosed "{{" in "{text}"', param_hint="'--for'")
        expression, rest = text[: close + 1], text[close + 1 :]
        if rest and not rest.startswith("="):
            raise typer.BadParameter(
                f'"{text}": give jsonpath={{PATH}}=VALUE', param_hint="'--for'"
            )
        value: str | None = rest[1:] if rest else None
    else:
        expression, equals, after = text.partition("=")
        value = after if equals else None
    try:
        path = jsonpath.relaxed(expression)
    except jsonpath.TemplateError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--for'") from None

    def check(obj: Resource | None) -> bool:
        if obj is None:
            return False
        found = path.values(obj.to_dict())
        if value is None:
            return bool(found)
        return bool(found) and all(jsonpath.text(v) == value for v in found)

    return Condition(check)


def _condition(name: str, value: str) -> Check:
    """A condition of `status.conditions` (type NAME, status VALUE); for objects without
    typed conditions (jobflows, vcjobs), their phase is NAME (VALUE true) or not (false)."""

    def check(obj: Resource | None) -> bool:
        if obj is None:
            return False
        status: Any = obj.to_dict().get("status") or {}
        conditions = status.get("conditions") if isinstance(status, dict) else None
        if isinstance(conditions, list) and any(
            isinstance(c, dict) and "type" in c for c in conditions
        ):
            return any(
                isinstance(c, dict)
                and str(c.get("type", "")).lower() == name.lower()
                and str(c.get("status", "")).lower() == value.lower()
                for c in conditions
            )
        state = status.get("state") if isinstance(status, dict) else None
        phase = (state or {}).get("phase") if isinstance(state, dict) else status.get("phase")
        return (str(phase or "").lower() == name.lower()) == (value.lower() == "true")

    return check
