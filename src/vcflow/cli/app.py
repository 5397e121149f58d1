"""The root `vcflow` command: global flags, verb registration and the single error boundary.

`main()` is the console script and `python -m vcflow`. Every failure becomes an exit code
in one place, `_Root.invoke`, which `main()` and typer's CliRunner both run:

- VcflowError → its message on stderr (a ValidationFailed has one problem per line), exit 1;
- usage errors → typer's own message, exit 2;
- an OSError of the machine (a full disk, a read-only file system: `MACHINE_ERRNOS`) →
  `no space left on device: <path>`, exit 1;
- anything else is a bug → `internal error: <type>: <msg>, rerun with -v for details`,
  exit 1; the traceback is shown only with `-v/--verbose`.
"""

from __future__ import annotations

import errno
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import vcflow
from vcflow.api import printable
from vcflow.api.errors import VcflowError
from vcflow.cli import (
    apply,
    controller,
    delete,
    describe,
    flowcmd,
    get,
    jobcmd,
    logs,
    options,
    patch,
    run,
    server,
    stop,
    validate,
)
from vcflow.local import statedir

VERBOSE = "vcflow.verbose"


class _Root(TyperGroup):
    """The root group; its `invoke` is the error boundary for every verb."""

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            _check_arguments([*getattr(ctx, "_protected_args", []), *ctx.args])
            return super().invoke(ctx)
        except VcflowError as exc:
            for line in str(exc).splitlines() or [type(exc).__name__]:
                typer.echo(printable.escaped(line), err=True)
            raise typer.Exit(exc.exit_code) from None
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except OSError as exc:
            if exc.errno not in MACHINE_ERRNOS:
                _internal_error(exc, verbose=bool(ctx.meta.get(VERBOSE)))
                raise typer.Exit(1) from None
            where = exc.filename if exc.filename is not None else options.state_dir(ctx)
            words = (exc.strerror or "").lower() or type(exc).__name__
            typer.echo(printable.escaped(f"{words}: {where}"), err=True)
            raise typer.Exit(1) from None
        except Exception as exc:
            _internal_error(exc, verbose=bool(ctx.meta.get(VERBOSE)))
            raise typer.Exit(1) from None


#: What the machine refuses rather than a bug (a full disk, a read-only file system...):
#: `<strerror>: <path>`, exit 1, with no traceback even with -v.
MACHINE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}
)


def _check_arguments(args: list[str]) -> None:
    """Refuse an argument that is not text (bytes that are not UTF-8 reach Python as lone
    surrogates, which no name or store key can hold): a usage error, exit 2. File names
    (`-f`) may be any bytes, as on the file system."""
    for before, arg in zip(["", *args], args, strict=False):
        if before in FILE_OPTIONS or arg.startswith(tuple(f"{o}=" for o in FILE_OPTIONS)):
            continue
        if printable.has_surrogate(arg):
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise typer.BadParameter(f"'{shown}' is not valid UTF-8 text")


FILE_OPTIONS = ("-f", "--filename")


def _internal_error(exc: Exception, *, verbose: bool) -> None:
    if verbose:
        typer.echo("".join(traceback.format_exception(exc)).rstrip("\n"), err=True)
    message = printable.escaped(" ".join(str(exc).split()))
    detail = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    hint = "" if verbose else ", rerun with -v for details"
    typer.echo(f"internal error: {detail}{hint}", err=True)


HELP = """Volcano JobFlow: declarative DAGs of batch jobs, embedded or on Kubernetes.

Objects live in a SQLite store in the state directory (--state-dir). Commands that write
(apply, delete, patch, stop, retry, resubmit) then run the controllers in-process until
nothing is left to do now, unless a `vcflow controller` process runs them (it holds
<state-dir>/controller.lock); reading commands (get, describe) never run them. Run
`vcflow controller` to have failed syncs retried with backoff over time.
"""

app = typer.Typer(
    cls=_Root,
    name="vcflow",
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _root(
    ctx: typer.Context,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Show tracebacks of internal errors.")
    ] = False,
    state_dir: Annotated[
        Path,
        typer.Option(
            "--state-dir",
            envvar=statedir.ENV_VAR,
            metavar="DIR",
            help="State directory: the store (vcflow.db) and controller.lock; created on "
            "first write.",
        ),
    ] = statedir.DEFAULT,
) -> None:
    ctx.meta[VERBOSE] = verbose
    ctx.meta[options.STATE_DIR] = state_dir


@app.command("version")
def version() -> None:
    """Print the vcflow version."""
    typer.echo(f"vcflow {vcflow.__version__}")


app.command("validate")(validate.validate)
app.command("apply")(apply.apply)
app.command("get")(get.get)
app.command("describe")(describe.describe)
app.command("delete")(delete.delete)
app.command("patch")(patch.patch)
app.command("stop")(stop.stop)
app.command("retry")(flowcmd.retry)
app.command("resubmit")(flowcmd.resubmit)
app.command("controller")(controller.controller)
app.command("suspend")(jobcmd.suspend)
app.command("resume")(jobcmd.resume)
app.command("terminate")(jobcmd.terminate)
app.command("run")(run.run)
app.command("logs")(logs.logs)
app.command("server")(server.server)


def main() -> None:
    """Run the CLI on `sys.argv`; exits with 0, 1 (error) or 2 (usage)."""
    typer.main.get_command(app).main(prog_name="vcflow")
