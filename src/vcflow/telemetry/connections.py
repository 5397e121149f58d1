"""Bounds on the client connections of a process's uvicorn server, before any request is
authenticated: how long a connection may take to send its request headers (the TLS
handshake included) and its body, how long it may idle between requests, how many may be
open at once, and how large request headers may be. `vcflow server` (`server.serve`) and
`vcflow webhook` (`webhook.serve`) each build one `Guard`; the webhook's app also holds a
`BodyBudget`, the bytes of request bodies it may hold at once. The values and their reasons
are in docs/security.md ("Connections and bounds").

Only reading a request is bounded in time: once its headers and body are in, the response
may take as long as it takes (watch streams, followed logs).

How: the listening socket is wrapped (`Guard.listener`) so every accepted connection is
counted from `accept` to its `close`, TLS handshakes included, which uvicorn's own
`limit_concurrency` does not see; past the cap the connection is answered a Kubernetes
`Status` 503 and closed, and past the cap and a small margin it is closed unanswered at
once. The deadlines are timers of an `H11Protocol` subclass (`Guard.uvicorn_options`
gives it to `uvicorn.Config(http=...)`), following h11's state of the client's side.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import resource
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from vcflow.kubeapi import status as kubestatus

log = logging.getLogger("vcflow.connections")

#: seconds from accept (or from the previous response's end) to complete request headers,
#: the TLS handshake included: a local or LAN client needs milliseconds, a loaded host a few
HEADER_SECONDS = 10.0
#: seconds from the headers to the end of the body: the largest object the server takes
#: (1.5 MiB) needs 15 s at 100 KiB/s, twice that is still no place to park a connection
BODY_SECONDS = 30.0
#: seconds an idle keep-alive connection is kept (uvicorn's default, kept: local clients
#: reconnect cheaply, and an idle connection holds a file descriptor)
KEEP_ALIVE_SECONDS = 5
#: bytes of request line and headers (h11's default is 16 KiB, Go's 1 MiB): a service
#: account JWT and kubectl's headers fit many times over
MAX_HEADER_BYTES = 64 * 1024
#: open client connections at most, whatever the file limit: far more than the CLI,
#: kubectl, an operator's watches and a dashboard open
DEFAULT_MAX_CONNECTIONS = 1024
#: client connections take at most 1/FD_SHARE of the soft file limit: the rest is the
#: control plane's (pods and their logs, the pod server, SQLite, the process itself)
FD_SHARE = 2
#: up to cap // REFUSAL_SHARE connections past the cap are kept long enough to read a 503;
#: past that margin a connection is closed unanswered at once
REFUSAL_SHARE = 8
#: seconds a refused connection is kept after its 503, for the client to read it (closing
#: with its request unread would reset the connection and lose the 503)
LINGER_SECONDS = 1.0
#: bytes of received TLS records a connection buffers before its reads pause (asyncio's
#: default is 256 KiB; uvicorn pauses at 64 KiB of body the app has not read)
TLS_READ_BUFFER = 64 * 1024
#: seconds between two log lines about connections refused at the cap
WARN_EVERY = 10.0


def raise_fd_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit, as Go's runtime does at
    start (the soft default, often 1024, is kept low for select()-era programs); the soft
    limit now in force. Children inherit it, as containers under Kubernetes have it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def connection_cap(fd_limit: int, most: int = DEFAULT_MAX_CONNECTIONS) -> int:
    """The cap on open client connections for a soft file limit of `fd_limit`."""
    return max(1, min(most, fd_limit // FD_SHARE))


@dataclass(frozen=True)
class Limits:
    """One server's bounds (see the constants for the defaults' reasons);
    `max_connections` None: derived from the file limit (`connection_cap`)."""

    header_seconds: float = HEADER_SECONDS
    body_seconds: float = BODY_SECONDS
    keep_alive_seconds: int = KEEP_ALIVE_SECONDS
    max_header_bytes: int = MAX_HEADER_BYTES
    max_connections: int | None = None
    most_connections: int = DEFAULT_MAX_CONNECTIONS


def status_body(code: int, reason: str, message: str) -> bytes:
    """A Kubernetes `Status` of a failure, as JSON."""
    return json.dumps(kubestatus.failure(code, message, reason=reason)).encode()


class _Entry:
    """One accepted connection: when, whether a protocol took it, whether it is refused."""

    __slots__ = ("accepted", "claimed", "refused")

    def __init__(self, refused: bool) -> None:
        self.accepted = time.monotonic()
        self.claimed = False
        self.refused = refused


class Guard:
    """The bounds of one server: `listener(sock)` wraps its listening socket,
    `uvicorn_options()` are the keyword arguments for `uvicorn.Config`. Everything runs
    on the server's event loop thread (accepts and protocol callbacks)."""

    def __init__(self, limits: Limits, fd_limit: int) -> None:
        self.limits = limits
        self.fd_limit = fd_limit
        self.cap = limits.max_connections or connection_cap(fd_limit, limits.most_connections)
        self.margin = max(1, self.cap // REFUSAL_SHARE)
        self._open: dict[int, _Entry] = {}
        self.refused = 0  # connections answered 503 or closed unanswered at the cap
        self.timed_out = 0  # connections closed by a deadline
        self._warned = 0.0
        self.protocol: type[H11Protocol] = type(
            "GuardedH11Protocol", (_GuardedProtocol,), {"guard": self}
        )

    @property
    def open(self) -> int:
        """Client connections open now (refused ones lingering included)."""
        return len(self._open)

    def listener(self, sock: socket.socket) -> socket.socket:
        """`sock` (listening) as a socket whose accepted connections this guard counts;
        `sock` itself is detached, its file descriptor now the new socket's."""
        wrapped = _Listener(sock.family, sock.type, sock.proto, fileno=sock.detach())
        wrapped.guard = self
        return wrapped

    def uvicorn_options(self) -> dict[str, Any]:
        """`uvicorn.Config(app, ..., **guard.uvicorn_options())`."""
        return {
            "http": self.protocol,
            "timeout_keep_alive": self.limits.keep_alive_seconds,
            "h11_max_incomplete_event_size": self.limits.max_header_bytes,
        }

    def describe(self) -> str:
        """One line for the start log."""
        lim = self.limits
        return (
            f"at most {self.cap} client connections (file limit {self.fd_limit}); headers "
            f"within {lim.header_seconds:g}s, bodies within {lim.body_seconds:g}s, idle "
            f"keep-alive {lim.keep_alive_seconds}s"
        )

    # (called by _Listener and _Accepted)
    def _accepted(self, conn: _Accepted) -> bool:
        """Count `conn`; False when it is past the cap and the margin (close it)."""
        count = len(self._open)
        if count >= self.cap:
            self.refused += 1
            self._warn(count)
            if count >= self.cap + self.margin:
                return False
        self._open[conn.fileno()] = _Entry(refused=count >= self.cap)
        conn.guard = self
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_later(
                self.limits.header_seconds, self._unclaimed_deadline, conn
            )
        return True

    def _closed(self, fd: int) -> None:
        self._open.pop(fd, None)

    def _unclaimed_deadline(self, conn: _Accepted) -> None:
        """A connection no protocol took within the header deadline (its TLS handshake not
        done): shut it down, so its transport sees the end and closes it."""
        if conn.released:
            return
        entry = self._open.get(conn.fileno())
        if entry is not None and not entry.claimed:
            self.timed_out += 1
            with contextlib.suppress(OSError):
                socket.socket.shutdown(conn, socket.SHUT_RDWR)

    def _claim(self, transport: asyncio.BaseTransport) -> _Entry:
        sock = transport.get_extra_info("socket")
        entry = self._open.get(sock.fileno()) if sock is not None else None
        if entry is None:  # (not accepted by a guarded listener: bounded all the same)
            entry = _Entry(refused=False)
        entry.claimed = True
        return entry

    def _warn(self, count: int) -> None:
        now = time.monotonic()
        if now - self._warned >= WARN_EVERY:
            self._warned = now
            log.warning(
                "%d client connections open, the cap is %d: refusing new ones (503); "
                "%d refused so far",
                count,
                self.cap,
                self.refused,
            )


def guard(limits: Limits | None = None) -> Guard:
    """Raise the process's file limit (`raise_fd_limit`), then a Guard for `limits`."""
    return Guard(limits or Limits(), raise_fd_limit())


class _Accepted(socket.socket):
    """An accepted connection that leaves its guard's count when closed."""

    guard: Guard | None = None
    released = False

    def close(self) -> None:
        if not self.released:
            self.released = True
            if self.guard is not None:
                self.guard._closed(self.fileno())
        super().close()


class _Listener(socket.socket):
    """A listening socket whose `accept` (asyncio's accept loop calls it) counts what it
    returns and closes at once what is past the cap and the margin."""

    guard: Guard

    def accept(self) -> tuple[socket.socket, Any]:
        while True:
            fd, address = self._accept()  # type: ignore[attr-defined]
            conn = _Accepted(self.family, self.type, self.proto, fileno=fd)
            if self.guard._accepted(conn):
                return conn, address
            conn.close()  # (BlockingIOError from _accept once none is left ends the loop)


class _GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with the guard's deadlines and its 503 past the cap."""

    guard: ClassVar[Guard]

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._timer: asyncio.TimerHandle | None = None
        self._phase = ""  # "headers" or "body" while a deadline runs
        self._refusing = False
        self._cut = False  # a body deadline ended the request the app is reading
        inner = self.app

        async def app(scope: Any, receive: Any, send: Any) -> None:
            try:
                await inner(scope, receive, send)
            except Exception:
                if not self._cut:
                    raise
                # (its body never came: the app's error over it, ClientDisconnect, is moot)

        self.app = app

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        limit = getattr(transport, "set_read_buffer_limits", None)  # (TLS transports)
        if limit is not None:
            with contextlib.suppress(NotImplementedError):
                limit(high=TLS_READ_BUFFER)
        entry = self.guard._claim(transport)
        if entry.refused:
            self._refuse()
            return
        left = entry.accepted + self.guard.limits.header_seconds - time.monotonic()
        self._arm("headers", max(0.0, left))

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refusing:
            return  # (read and dropped until the client or the linger closes it)
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._disarm()  # (no websocket library is installed; the stream is not bounded)
        super().handle_websocket_upgrade(event)

    def _follow(self) -> None:
        """The deadline of the client's side as h11 sees it now: its headers (IDLE),
        its body (SEND_BODY), none once its request is in."""
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        limits = self.guard.limits
        if state is h11.IDLE:
            if self._phase != "headers":
                self._arm("headers", limits.header_seconds)
        elif state is h11.SEND_BODY:
            if self._phase != "body":
                self._arm("body", limits.body_seconds)
        else:
            self._disarm()

    def _arm(self, phase: str, seconds: float) -> None:
        self._disarm()
        self._phase = phase
        self._timer = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = ""

    def _expired(self) -> None:
        phase, self._timer, self._phase = self._phase, None, ""
        if self.transport.is_closing():
            return
        self.guard.timed_out += 1
        log.debug("%s: closed, its request %s not in on time", self.client, phase)
        cycle = self.cycle
        if phase == "body" and cycle is not None and not cycle.response_started:
            self._cut = True
            cycle.disconnected = True  # (the app's sends are dropped, its receive ends)
            cycle.message_event.set()
            seconds = self.guard.limits.body_seconds
            body = status_body(
                408, "Timeout", f"the request body was not received within {seconds:g}s"
            )
            with contextlib.suppress(h11.LocalProtocolError):
                self.transport.write(self.conn.send(_response(408, body)) or b"")
                self.transport.write(self.conn.send(h11.Data(data=body)) or b"")
                self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        with contextlib.suppress(h11.LocalProtocolError):
            self.conn.send(h11.ConnectionClosed())
        self.transport.close()

    def _refuse(self) -> None:
        """Past the cap: a 503 before any request, then the end of our side; closed when
        the client closes, or after LINGER_SECONDS."""
        self._refusing = True
        message = f"too many open connections (cap {self.guard.cap})"
        body = status_body(503, "ServiceUnavailable", message)
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
        )
        self.transport.write(head.encode() + body)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._timer = self.loop.call_later(LINGER_SECONDS, self.transport.close)


def _response(code: int, body: bytes) -> h11.Response:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    return h11.Response(status_code=code, headers=headers, reason=b"Request Timeout")


class BudgetExhausted(Exception):
    """No room in the body budget within the wait."""


class BodyBudget:
    """Bytes of request bodies a process holds at once, across its connections: `take`
    waits up to `wait` seconds for room, else BudgetExhausted; `give` returns bytes.
    Used on the event loop only."""

    def __init__(self, total: int, wait: float) -> None:
        self.total = total
        self.wait = wait
        self.used = 0
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def take(self, size: int) -> None:
        if size > self.total:
            raise BudgetExhausted
        changed = self._condition()
        async with changed:
            try:
                await asyncio.wait_for(
                    changed.wait_for(lambda: self.used + size <= self.total), self.wait
                )
            except TimeoutError:
                raise BudgetExhausted from None
            self.used += size

    async def give(self, size: int) -> None:
        if size <= 0:
            return
        changed = self._condition()
        async with changed:
            self.used -= size
            changed.notify_all()

    @contextlib.asynccontextmanager
    async def account(self) -> AsyncIterator[Held]:
        """A `Held` whose `take`s are all given back at the end."""
        held = Held(self)
        try:
            yield held
        finally:
            await self.give(held.size)


class Held:
    """The bytes one request took from a BodyBudget (`BodyBudget.account`)."""

    def __init__(self, budget: BodyBudget) -> None:
        self.budget = budget
        self.size = 0

    async def take(self, size: int) -> None:
        await self.budget.take(size)
        self.size += size
