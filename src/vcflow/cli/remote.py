"""Which store a verb talks to: the state directory's own (embedded), or a server's over the
Kubernetes API (`kubestore.KubeStore`) — remote mode.

Remote mode is on when `--kubeconfig F` is given (its current context, or `--context
NAME`: a cluster, as kubectl reaches it; `--server` then overrides its URL); when `--server
URL` (or VCFLOW_SERVER) is given, with the bearer token of VCFLOW_TOKEN; or when a `vcflow
server` owns the state directory: its `server.json` names the URL, token file and CA
file, and the server holds `controller.lock` with role `server`. KUBECONFIG and
~/.kube/config are never read unasked: without `--kubeconfig` the CLI stays embedded.
In remote mode the server's controllers do the work: writers never reconcile in-process.
Used by every verb through `reading` / `writing`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import typer

from vcflow.api import names
from vcflow.api.errors import InputError, VcflowError
from vcflow.cli import options
from vcflow.local import statedir
from vcflow.server import advertise
from vcflow.store.base import Store

if TYPE_CHECKING:
    from vcflow.kubestore import KubeStore

SERVER = "vcflow.server"  # keys in the click context's `meta`
KUBECONFIG = "vcflow.kubeconfig"
CONTEXT = "vcflow.context"
CA_FILE = "vcflow.certificate_authority"
INSECURE = "vcflow.insecure"
SERVER_ENV = "VCFLOW_SERVER"
TOKEN_ENV = "VCFLOW_TOKEN"


@dataclass(frozen=True)
class Remote:
    """A server by URL, or (`kubeconfig`) the cluster of a kubeconfig's context, its URL
    overridden by `url` if given."""

    url: str
    token: str | None = None
    ca_file: str | None = None
    insecure: bool = False
    kubeconfig: str | None = None
    context: str | None = None

    def connect(self) -> KubeStore:
        # (the Kubernetes client is loaded only by the commands that talk to an API)
        from vcflow.kubestore import KubeClient, KubeStore

        if self.kubeconfig is None:
            return KubeStore(
                KubeClient.for_url(
                    self.url, token=self.token, ca_file=self.ca_file, insecure=self.insecure
                )
            )
        client = KubeClient.from_kubeconfig(self.kubeconfig, context=self.context)
        if self.url:
            client.configuration.host = self.url.rstrip("/")
        return KubeStore(client)


def check_url(url: str) -> None:
    """InputError unless `url` (`--server`, VCFLOW_SERVER) is an http(s) URL with a host, or
    empty (embedded mode): the HTTP client's own words for `127.0.0.1:8700` or `http://[::1`
    were a deprecation warning, a traceback or a failed name lookup."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        _ = parts.port  # (a port out of range or not a number raises)
    except ValueError as exc:
        raise InputError(f'"{url}" is not a URL ({exc}): give one such as {_EXAMPLE}') from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f'"{url}" is not an http(s) URL: give one such as {_EXAMPLE}')


_EXAMPLE = "https://127.0.0.1:8700"


def remote_of(ctx: typer.Context) -> Remote | None:
    """The server this command talks to, None for embedded mode."""
    url = ctx.meta.get(SERVER)
    token = os.environ.get(TOKEN_ENV) or None
    ca_file = ctx.meta.get(CA_FILE)
    insecure = bool(ctx.meta.get(INSECURE))
    kubeconfig, context = ctx.meta.get(KUBECONFIG), ctx.meta.get(CONTEXT)
    if isinstance(kubeconfig, str) and kubeconfig:
        return Remote(
            url if isinstance(url, str) else "",
            kubeconfig=kubeconfig,
            context=context if isinstance(context, str) and context else None,
        )
    if isinstance(url, str) and url:
        return Remote(url, token, ca_file if isinstance(ca_file, str) else None, insecure)
    return owning_server(options.state_dir(ctx), token=token)


def owning_server(state_dir: Path, *, token: str | None = None) -> Remote | None:
    """The server that owns `state_dir` (`advertise.running`: its `server.json`, while it
    holds the lock with role `server`); None if none does."""
    advert = advertise.running(state_dir)
    if advert is None:
        return None
    if token is None and advert.token_file is not None:
        token = _read_token(advert.token_file)
    ca_file = str(advert.ca_file) if advert.ca_file is not None else None
    return Remote(advert.url, token, ca_file)


def _read_token(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError as exc:
        raise VcflowError(
            f"cannot read the server's token file {path}: {(exc.strerror or '').lower()}"
        ) from None


def names_a_server(ctx: typer.Context) -> bool:
    """Whether the command names its server (`--server`, `--kubeconfig`) rather than
    reaching the one that owns the state directory, whose files are then this machine's."""
    return bool(ctx.meta.get(SERVER) or ctx.meta.get(KUBECONFIG))


def is_remote(ctx: typer.Context) -> bool:
    return remote_of(ctx) is not None


@contextmanager
def reading(ctx: typer.Context, *, watching: bool = False) -> Iterator[Store]:
    """The store for a reading command: the server's in remote mode, else the state
    directory's (`statedir.reading`; created if missing when `watching`: the writes to
    watch for will go there)."""
    remote = remote_of(ctx)
    if remote is None:
        if watching:
            with statedir.opened(options.state_dir(ctx)) as opened:
                yield opened
            return
        with statedir.reading(options.state_dir(ctx)) as store:
            yield store
        return
    with remote.connect() as kube:
        yield kube


@contextmanager
def writing(
    ctx: typer.Context, *, deleted_pods: Iterable[names.ObjectKey] = (), changes: bool = False
) -> Iterator[Store]:
    """The store for a writing command: the server's in remote mode (its controllers do the
    rest), else the state directory's, reconciled afterwards (`statedir.writing`). A command
    that `changes` only objects that exist (delete, patch, stop...) finds none in a state
    directory without a store, and makes none, as a read."""
    remote = remote_of(ctx)
    if remote is None:
        state_dir = options.state_dir(ctx)
        if changes and not statedir.has_store(state_dir):
            with statedir.reading(state_dir) as empty:
                yield empty
            return
        with statedir.writing(state_dir, deleted_pods=deleted_pods) as store:
            yield store
        return
    with remote.connect() as kube:
        yield kube
