"""A server's TLS certificate and key, loaded the one way every listener does: a server-side
context, TLS 1.2 at least; a pair that does not load at the start is refused in one line
naming both.

`Certificates` re-reads a pair when it changes (cert-manager rotates the Secret; the kubelet
swaps the mounted files): every TLS handshake first compares the files' identity (inode,
size, mtime) with the loaded one's and, if either changed, loads them into a fresh context
that this and every later connection uses; `reload` (SIGHUP) re-reads them at once. A pair
that does not load (half-written, key and certificate apart) is logged and the previous one
kept. Used by `webhook.serve`.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from pathlib import Path

from vcflow.serving import Refused

log = logging.getLogger("vcflow.serving")
Stamp = tuple[tuple[int, int, int], ...]


def loaded(cert: Path, key: Path) -> ssl.SSLContext:
    """The context serving the pair; OSError or ssl.SSLError if it does not load (for a
    caller that keeps its previous pair, as a reload does)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert), str(key))
    return context


def context(cert: Path, key: Path) -> ssl.SSLContext:
    """The context serving the pair; Refused (one line) if it does not load."""
    try:
        return loaded(cert, key)
    except OSError as exc:  # (ssl.SSLError is one)
        raise Refused(f"cannot load the TLS certificate {cert} or key {key}: {_why(exc)}") from None


def _why(exc: OSError) -> str:
    """In the words `vcflow server` uses for the files it reads: the system's reason, or
    what OpenSSL found wrong in them."""
    if isinstance(exc, ssl.SSLError):
        return "not a PEM certificate and its key" + (f" ({exc.reason})" if exc.reason else "")
    return (exc.strerror or str(exc)).lower()


class Certificates:
    """The serving context (`context`, handed to the server once) and the pair in use."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.cert, self.key = cert, key
        # reentrant: SIGHUP's handler runs in the event loop's thread, perhaps inside a
        # handshake's `current` (a plain lock would deadlock there)
        self._lock = threading.RLock()
        self._stamp = self._files_stamp()
        self.context = context(cert, key)  # (Refused if the pair does not load)
        self.context.sni_callback = self._on_hello  # (called with or without SNI)
        self._current = self.context

    def reload(self) -> bool:
        """Load the files now (SIGHUP); False, the old pair kept, if they do not load."""
        with self._lock:
            self._stamp = self._files_stamp()
            return self._swap()

    def current(self) -> ssl.SSLContext:
        """The context of the pair in use, re-read first if the files changed."""
        with self._lock:
            stamp = self._files_stamp()
            if stamp != self._stamp:
                self._stamp = stamp
                self._swap()
            return self._current

    def _on_hello(self, connection: ssl.SSLObject, _name: str | None, _ctx: object) -> None:
        found = self.current()
        if found is not connection.context:
            connection.context = found

    def _swap(self) -> bool:
        try:
            self._current = loaded(self.cert, self.key)
        except (OSError, ssl.SSLError) as exc:
            log.warning(
                "cannot reload the TLS certificate %s or key %s (serving the previous one): %s",
                self.cert,
                self.key,
                exc,
            )
            return False
        log.info("TLS certificate %s reloaded", self.cert)
        return True

    def _files_stamp(self) -> Stamp:
        found = []
        for path in (self.cert, self.key):
            try:
                st = os.stat(path)  # (through the kubelet's ..data link: a swap is a new inode)
            except OSError:
                found.append((0, 0, 0))
                continue
            found.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(found)
