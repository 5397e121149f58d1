"""The dashboard inside `vcflow server` (`--dashboard on|off|read-only`): `extend`, the
server's `Extend` hook, adds a middleware that hands `/` and `/ui/...` to the dashboard's
app and every other path to the server's API as before. So the API's own checks never see
a dashboard request, and the dashboard's session cookie never reaches an API path: the
Kubernetes API keeps taking the bearer token only. The dashboard reads the server's
`reads` store, writes its store, reads pod logs from its state directory, and ends its
streams when the server stops.
"""

from __future__ import annotations

from enum import StrEnum

from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from vcflow.dashboard import app as dashboard_app
from vcflow.dashboard.logs import FileLogs
from vcflow.server.app import Extensions, Host


class Mode(StrEnum):
    ON = "on"
    OFF = "off"
    READ_ONLY = "read-only"


def is_dashboard_path(path: str) -> bool:
    """`/`, `/ui` and everything under `/ui/`: the dashboard's; the rest the API's."""
    return path in ("/", "/ui") or path.startswith("/ui/")


class Mounted:
    """Routes a dashboard path to `dashboard`, any other to the server's `app`."""

    def __init__(self, app: ASGIApp, dashboard: ASGIApp) -> None:
        self.app, self.dashboard = app, dashboard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_dashboard_path(str(scope.get("path", ""))):
            await self.dashboard(scope, receive, send)
            return
        await self.app(scope, receive, send)


def extend(host: Host, mode: Mode) -> Extensions:
    """The dashboard of a server (none when `mode` is off), and the line saying where."""
    if mode is Mode.OFF:
        return Extensions()
    settings = dashboard_app.Settings(
        reads=host.reads,
        writes=host.store,
        logs=FileLogs(host.reads, host.state_dir, host.stopping),
        stopping=host.stopping,
        token=host.token,
        read_only=mode is Mode.READ_ONLY,
        host=dashboard_app.SERVER,
        accepted_hosts=host.accepted_hosts,
        scheme=host.scheme,
    )
    app = dashboard_app.create_app(settings)
    said = " (read-only)" if mode is Mode.READ_ONLY else ""
    note = f"vcflow server: dashboard{said} at {host.url}/ (vcflow dashboard prints a login link)"
    return Extensions(middleware=[Middleware(Mounted, dashboard=app)], notes=[note])
