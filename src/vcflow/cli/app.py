"""The root `vcflow` command: global flags, verb registration and the single error boundary.

`main()` is the console script and `python -m vcflow`. Every failure becomes an exit code
in one place, `_Root.invoke`, which `main()` and typer's CliRunner both run:

- VcflowError → its message on stderr (a ValidationFailed has one problem per line), exit 1;
- usage errors → typer's own message, exit 2;
- an OSError of the machine (a full disk, a read-only file system: `MACHINE_ERRNOS`) →
  `no space left on device: <path>`, exit 1;
- anything else is a bug → `internal error: <type>: <msg>, rerun with -v for details`,
  exit 1; the traceback is shown only with `-v/--verbose`.

A reader that stops early (`vcflow get jf | head`) closes our stdout: the output ends
quietly with exit 141 (128 + SIGPIPE, what a shell reports for kubectl there), whether the
write that found the pipe closed was in the verb or the last flush at exit (`main`).
"""

from __future__ import annotations

import errno
import os
import select
import sys
import traceback
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import vcflow
from vcflow.api import printable
from vcflow.api.errors import InputError, VcflowError
from vcflow.cli import (
    apply,
    controller,
    convert,
    dashboard,
    delete,
    describe,
    flowcmd,
    get,
    graph,
    jobcmd,
    logs,
    operator,
    options,
    patch,
    remote,
    run,
    server,
    stop,
    validate,
    wait,
    webhook,
)
from vcflow.local import statedir

VERBOSE = "vcflow.verbose"


class _Root(TyperGroup):
    """The root group; its `invoke` is the error boundary for every verb."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        return super().parse_args(ctx, hoisted(args, self.commands))

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
        except BrokenPipeError as exc:
            if not silence_closed_pipes():
                _internal_error(exc, verbose=bool(ctx.meta.get(VERBOSE)))
                raise typer.Exit(1) from None
            raise typer.Exit(CLOSED_PIPE) from None
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


#: global options (with the number of values each takes), accepted after the verb too
GLOBAL_OPTIONS = {
    "-v": 0,
    "--verbose": 0,
    "--state-dir": 1,
    "--server": 1,
    "-s": 1,
    "--certificate-authority": 1,
    "--insecure-skip-tls-verify": 0,
    "--kubeconfig": 1,
    "--context": 1,
}
#: verb options users put before the verb too (`vcflow -n team get jf`)
VERB_OPTIONS = {"-n": 1, "--namespace": 1}


def hoisted(args: list[str], verbs: Any) -> list[str]:
    """`args` with the global options given after the verb moved before it, and `-n` given
    before the verb moved after it, so both work on either side (as kubectl's do). Nothing
    after `--` moves."""
    verb_at = next((i for i, a in enumerate(args) if a in verbs), None)
    if verb_at is None:
        return args
    before, verb, after = args[:verb_at], args[verb_at], args[verb_at + 1 :]
    rest, moved_back = _picked(before, VERB_OPTIONS)
    back, front = _picked(after, GLOBAL_OPTIONS, until="--")
    return [*rest, *front, verb, *moved_back, *back]


def _picked(
    args: list[str], wanted: dict[str, int], until: str | None = None
) -> tuple[list[str], list[str]]:
    """(the other arguments, the options of `wanted` with their values: `--opt=v`, or
    `--opt` and as many values as `wanted` says), each in order; from `until` on, none is
    picked."""
    others: list[str] = []
    picked: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == until:
            others += args[i:]
            break
        name = arg.split("=", 1)[0]
        if name in wanted:
            width = 0 if "=" in arg else wanted[name]
            picked += args[i : i + 1 + width]
            i += 1 + width
            continue
        others.append(arg)
        i += 1
    return others, picked


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

#: The exit code when the reader of our output went away: 128 + SIGPIPE, as a shell reports
#: a command (kubectl) that a closed pipe ended.
CLOSED_PIPE = 141


def silence_closed_pipes() -> bool:
    """Point stdout and stderr whose reader has gone (a pipe with no reader polls POLLERR)
    at /dev/null, so nothing written later (the flush at exit) fails again; True if one
    had. A BrokenPipeError of another pipe or socket (a server's) is not ours to hide."""
    closed = False
    for stream in (sys.stdout, sys.stderr):
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # (no descriptor: CliRunner's)
            continue
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if not any(events & select.POLLERR for _, events in poller.poll(0)):
            continue
        closed = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)
    return closed


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


def _state_dir_given(path: str) -> None:
    if not path:
        raise InputError('an empty path names no directory (the default is ".vcflow")')


@app.callback()
def _root(
    ctx: typer.Context,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Show tracebacks of internal errors.")
    ] = False,
    state_dir: Annotated[
        str,  # (not Path: Path("") is ".", and `--state-dir "$UNSET"` made the working
        # directory the state directory, its store and pods written among the user's files)
        typer.Option(
            "--state-dir",
            envvar=statedir.ENV_VAR,
            metavar="DIR",
            help="State directory: the store (vcflow.db) and controller.lock; created on "
            "first write.",
            callback=options.parsed_by(_state_dir_given),
        ),
    ] = str(statedir.DEFAULT),
    server_url: Annotated[
        str | None,
        typer.Option(
            "--server",
            "-s",
            envvar=remote.SERVER_ENV,
            metavar="URL",
            callback=options.parsed_by(remote.check_url),
            help="Talk to this vcflow server (or any Kubernetes API server) instead of the "
            "state directory; the bearer token comes from VCFLOW_TOKEN.",
        ),
    ] = None,
    certificate_authority: Annotated[
        str | None,
        typer.Option(
            "--certificate-authority",
            metavar="FILE",
            help="CA certificate file to verify an https --server with.",
        ),
    ] = None,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure-skip-tls-verify",
            help="Do not verify an https --server's certificate (insecure).",
        ),
    ] = False,
    kubeconfig: Annotated[
        str | None,
        typer.Option(
            "--kubeconfig",
            metavar="FILE",
            help="Talk to the cluster of this kubeconfig file (its current context) through "
            "the Kubernetes API instead of the state directory, as kubectl does.",
        ),
    ] = None,
    context: Annotated[
        str | None,
        typer.Option(
            "--context", metavar="NAME", help="The kubeconfig context to use (--kubeconfig)."
        ),
    ] = None,
) -> None:
    if context and not kubeconfig:
        raise typer.BadParameter("needs --kubeconfig", param_hint="'--context'")
    ctx.meta[VERBOSE] = verbose
    ctx.meta[remote.KUBECONFIG] = kubeconfig
    ctx.meta[remote.CONTEXT] = context
    ctx.meta[options.STATE_DIR] = Path(state_dir)
    ctx.meta[remote.SERVER] = server_url
    ctx.meta[remote.CA_FILE] = certificate_authority
    ctx.meta[remote.INSECURE] = insecure
    if insecure or kubeconfig:
        # an unverified server is the user's choice (the flag, or the kubeconfig's
        # insecure-skip-tls-verify), as kubectl takes it: urllib3 says nothing per request
        warnings.filterwarnings("ignore", message="Unverified HTTPS request")


@app.command("version")
def version() -> None:
    """Print the vcflow version."""
    typer.echo(f"vcflow {vcflow.__version__}")


app.command("validate")(validate.validate)
app.command("convert")(convert.convert)
app.command("apply")(apply.apply)
app.command("get")(get.get)
app.command("describe")(describe.describe)
app.command("graph")(graph.graph)
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
app.command("wait")(wait.wait)
app.command("server")(server.server)
app.command("dashboard")(dashboard.dashboard)
app.command("webhook")(webhook.webhook)
app.command("operator")(operator.operator)


def main() -> None:
    """Run the CLI on `sys.argv`; exits with 0, 1 (error), 2 (usage) or 141 (the reader
    closed our output)."""
    code: Any = 0
    try:
        typer.main.get_command(app).main(prog_name="vcflow")
    except SystemExit as ended:
        code = ended.code
    try:
        sys.stdout.flush()  # here, not at exit, where a closed pipe prints "Exception ignored"
    except BrokenPipeError:
        silence_closed_pipes()
        code = CLOSED_PIPE
    sys.exit(code)
