"""The connection to one Kubernetes API server: where it is, how to authenticate, and one
request (or one streamed response) at a time, with a timeout on each. Used by `store`.

Built on the official `kubernetes` package's `Configuration` (kubeconfig files, in-cluster
service accounts, bearer tokens, client certificates, CAs) and its `ApiClient`/REST layer
(TLS, connection pools, proxies); the bytes of each response are read here, not by its
generated models, so one code path serves every kind, CRDs and core kinds alike.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import kubernetes.client
import kubernetes.config
import urllib3
import yaml

from vcflow.api.errors import StoreError
from vcflow.kubestore.ratelimit import DEFAULT_BURST, DEFAULT_QPS, TokenBucket

#: seconds a request may take (connect and read) unless a call says otherwise
DEFAULT_TIMEOUT = 30.0
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"


class Unreachable(StoreError):
    """The API server could not be reached (refused, unresolvable, timed out, bad TLS)."""


@dataclass(frozen=True)
class Response:
    status: int
    data: bytes
    warnings: tuple[str, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> Any:
        return json.loads(self.data) if self.data else {}


class KubeClient:
    """Requests to one API server (`configuration.host`), at most `qps` a second on average
    after a `burst` (`ratelimit`; `qps <= 0`: no limit); an open stream is not limited."""

    def __init__(
        self,
        configuration: kubernetes.client.Configuration,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
    ) -> None:
        configuration.retries = False  # a refused connection fails at once, not after 3 tries
        self.configuration = configuration
        self.timeout = timeout
        self.limiter = TokenBucket(qps, burst)
        self._api = kubernetes.client.ApiClient(configuration)
        self._api.user_agent = "vcflow"
        self._streams: set[urllib3.BaseHTTPResponse] = set()  # (being read: `close` ends them)
        self._streams_lock = threading.Lock()
        self._closed = False

    def sibling(self) -> KubeClient:
        """A client of the same server and user with connections and a rate limit of its
        own (the same qps and burst), as Kubernetes' own components send their Events: so
        the Events of a burst do not take the controllers' share of the limit."""
        return KubeClient(
            self.configuration,
            timeout=self.timeout,
            qps=self.limiter.qps,
            burst=self.limiter.burst,
        )

    @classmethod
    def for_url(
        cls,
        url: str,
        *,
        token: str | None = None,
        ca_file: str | None = None,
        insecure: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
    ) -> KubeClient:
        """A server named by URL (`--server`), with an optional bearer token and CA file."""
        configuration = kubernetes.client.Configuration()
        configuration.host = url.rstrip("/")
        if token:
            configuration.api_key = {"authorization": token}
            configuration.api_key_prefix = {"authorization": "Bearer"}
        if ca_file:
            configuration.ssl_ca_cert = ca_file
        configuration.verify_ssl = not insecure
        return cls(configuration, timeout=timeout, qps=qps, burst=burst)

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | None = None,
        *,
        context: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
    ) -> KubeClient:
        """The cluster of a kubeconfig file (default: $KUBECONFIG or ~/.kube/config)."""
        configuration = kubernetes.client.Configuration()
        if path is not None:
            _check_kubeconfig(path, context)
        try:
            kubernetes.config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=path, context=context, client_configuration=configuration
            )
        except (kubernetes.config.ConfigException, OSError, yaml.YAMLError) as exc:
            text = " ".join(str(exc).split())
            raise StoreError(f"cannot load kubeconfig {path or '(default)'}: {text}") from None
        return cls(configuration, timeout=timeout, qps=qps, burst=burst)

    @classmethod
    def in_cluster(
        cls,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
    ) -> KubeClient:
        """The API server of the pod this process runs in (its service account)."""
        configuration = kubernetes.client.Configuration()
        try:
            kubernetes.config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration
            )
        except kubernetes.config.ConfigException as exc:
            raise StoreError(f"not running in a Kubernetes pod: {exc}") from None
        return cls(configuration, timeout=timeout, qps=qps, burst=burst)

    @property
    def url(self) -> str:
        return str(self.configuration.host)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = JSON,
        timeout: float | None = None,
    ) -> Response:
        """One request; its whole answer, whatever the status (`status.raise_for`)."""
        with self._open(method, path, query, body, content_type, timeout) as raw:
            data = raw.data
            return Response(raw.status, data, _warnings(raw.headers), dict(raw.headers))

    @contextmanager
    def stream(
        self,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        timeout: float | None = None,
        lines: bool = True,
    ) -> Iterator[tuple[Response, Iterator[bytes]]]:
        """A GET whose body is read as it comes (a watch, a followed log): the status and
        headers, and the body's lines (or its chunks as they come, if not `lines`).
        `timeout` bounds the wait for each read."""
        with self._open("GET", path, query, None, JSON, timeout) as raw:
            head = Response(raw.status, b"", _warnings(raw.headers), dict(raw.headers))
            if not head.ok:
                yield Response(raw.status, raw.data, head.warnings), iter(())
                return
            with self._streams_lock:
                self._streams.add(raw)
                if self._closed:  # (opened while `close` ran: it ends at its first read)
                    _shut(raw)
            try:
                yield head, (self._lines(raw) if lines else self._chunks(raw))
            finally:
                with self._streams_lock:
                    self._streams.discard(raw)

    def _chunks(self, raw: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
        try:
            yield from raw.stream(64 * 1024, decode_content=True)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if isinstance(exc, urllib3.exceptions.ReadTimeoutError):
                raise TimeoutError(str(exc)) from None
            raise self._unreachable(exc) from None

    def _lines(self, raw: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
        pending = b""
        for chunk in self._chunks(raw):
            pending += chunk
            *found, pending = pending.split(b"\n")
            yield from found
        if pending:
            yield pending

    @contextmanager
    def _open(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        body: Any,
        content_type: str,
        timeout: float | None,
    ) -> Iterator[urllib3.BaseHTTPResponse]:
        headers = {"Accept": JSON}
        if body is not None:
            headers["Content-Type"] = content_type
        _, url, headers, _, _ = self._api.param_serialize(
            method,
            path,
            query_params=list(query),
            header_params=headers,
            auth_settings=["BearerToken"],
        )
        seconds = self.timeout if timeout is None else timeout
        self.limiter.take()  # (a stream takes one token to open; what it reads takes none)
        try:
            response = self._api.call_api(
                method, url, header_params=headers, body=body, _request_timeout=seconds
            )
        except kubernetes.client.ApiException as exc:  # (TLS errors come as status 0)
            reason = _one_line(str(exc.reason))
            raise Unreachable(f"cannot connect to the server {self.url}: {reason}") from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._unreachable(exc, seconds) from None
        raw = response.response
        try:
            yield raw
        finally:
            if not raw.isclosed():
                raw.close()  # (a stream left midway: its connection cannot be reused)
            raw.release_conn()

    def _unreachable(self, exc: BaseException, seconds: float | None = None) -> Unreachable:
        reason = getattr(exc, "reason", None) or exc
        text = str(reason)
        where = urlsplit(self.url).netloc or self.url
        if "refused" in text.lower():
            return Unreachable(
                f"the connection to the server {where} was refused - is the server running "
                f"and the URL right? ({self.url})"
            )
        if isinstance(reason, TimeoutError) or "timed out" in text.lower():
            after = f" within {seconds:g}s" if seconds else ""
            return Unreachable(f"the server {self.url} did not answer{after}")
        inner = reason.args[-1] if isinstance(reason, urllib3.exceptions.ProtocolError) else None
        if isinstance(inner, http.client.BadStatusLine):  # (RemoteDisconnected is one too)
            return Unreachable(f"the server {self.url} does not answer HTTP (is the port right?)")
        if isinstance(inner, OSError) and inner.strerror:
            text = inner.strerror.lower()  # ("connection reset by peer", not urllib3's tuple)
        return Unreachable(f"cannot reach the server {self.url}: {_one_line(_short(text))}")

    def close(self) -> None:
        """Close the connections, those of the streams being read too: a watch's reader
        blocked on its socket sees it end at once, not when the server ends the stream
        (kube-apiserver: after the watch's timeoutSeconds, a minute)."""
        with self._streams_lock:
            self._closed = True
            streams = list(self._streams)
        for raw in streams:
            _shut(raw)
        self._api.close()  # type: ignore[no-untyped-call]


def _shut(raw: urllib3.BaseHTTPResponse) -> None:
    """End a stream's reads: its socket shut for reading, so a reader blocked on it returns."""
    with contextlib.suppress(Exception):  # (one ended meanwhile, an older urllib3)
        raw.shutdown()


def _check_kubeconfig(path: str, context: str | None) -> None:
    """One line, as kubectl says it, for a kubeconfig that cannot be read, is not YAML, or
    lacks the context asked for (the loader's own messages are not for users)."""
    try:
        with open(path, encoding="utf-8") as opened:
            found = yaml.safe_load(opened)
    except OSError as exc:
        words = (exc.strerror or type(exc).__name__).lower()
        raise StoreError(f"cannot read kubeconfig {path}: {words}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise StoreError(f"kubeconfig {path} is not YAML{where}") from None
    if not isinstance(found, dict):
        raise StoreError(f"kubeconfig {path} holds no configuration")
    contexts = [c.get("name") for c in found.get("contexts") or () if isinstance(c, dict)]
    wanted = context or found.get("current-context")
    if not wanted:
        raise StoreError(f"kubeconfig {path}: no current-context; name one with --context")
    if wanted not in contexts:
        raise StoreError(f'kubeconfig {path}: context "{wanted}" does not exist')


_WARNING = re.compile(r'\s*\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"')


def _warnings(headers: Any) -> tuple[str, ...]:
    """The texts of the `Warning: 299 - "text"` headers (RFC 7234), in order."""
    values = headers.getlist("Warning") if hasattr(headers, "getlist") else []
    found = []
    for value in values:
        for match in _WARNING.finditer(value):
            found.append(re.sub(r"\\(.)", r"\1", match.group(1)))
    return tuple(found)


def _one_line(text: str) -> str:
    """`text` on one line: an SSL error's reason holds a newline, a bad status line a CRLF."""
    return " ".join(text.split())


def _short(text: str) -> str:
    """The last clause of urllib3's nested error text ("...: [Errno 111] ...")."""
    return text.rsplit(">: ", 1)[-1].strip("()'\"")
