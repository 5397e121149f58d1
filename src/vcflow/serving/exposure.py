"""Who may reach a process's HTTP endpoints: the loopback rule (another address needs a
bearer token and TLS, `check`), the owner-only token file, and the bearer check in constant
time (`hmac.compare_digest`). One rule, `Exposure.token`, for `vcflow server`, `vcflow
dashboard` and `vcflow operator`'s metrics port (`serving.endpoints`), each naming its own
flags (`Flags`).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vcflow.api.errors import InputError
from vcflow.serving import Refused
from vcflow.serving.listening import LOOPBACK

#: the shortest token a listener on a non-loopback address accepts
MIN_TOKEN_BYTES = 16


class BadTokenFile(InputError):
    """A token file that is unreadable, empty, or others can read."""


@dataclass(frozen=True)
class Flags:
    """How a listener's refusals name its flags: the token file, the TLS pair, its address
    (`a non-loopback ADDRESS needs ...`) and what it would do there (`refusing to DOES on`)."""

    token: str = "--token-file"
    cert: str = "--tls-cert"
    key: str = "--tls-key"
    address: str = "address"
    does: str = "listen"


#: `vcflow server`'s flags
SERVER = Flags()


def check_pair(cert: Path | None, key: Path | None, flags: Flags = SERVER) -> None:
    """Refused unless the certificate and key are both given or neither is."""
    if (cert is None) != (key is None):
        raise Refused(f"{flags.cert} and {flags.key} go together: give both or neither")


def check(host: str, token_file: Path | None, cert: Path | None, flags: Flags = SERVER) -> None:
    """Refused unless `host` is loopback, or a token file and TLS are both given."""
    if not is_loopback(host) and (token_file is None or cert is None):
        raise Refused(
            f"refusing to {flags.does} on {host}: a non-loopback {flags.address} needs "
            f"{flags.token} and {flags.cert}/{flags.key} (or listen on {LOOPBACK})"
        )


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1): reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> str:
    """The token in `path` (its first line, stripped); BadTokenFile if the file is not the
    user's own, owner-only regular file, or holds no token."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise BadTokenFile(f"cannot read token file {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadTokenFile(f"token file {path} is not a regular file")
        if st.st_uid != os.geteuid():
            raise BadTokenFile(f"token file {path} is not yours (uid {st.st_uid} owns it)")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise BadTokenFile(
                f"permissions {mode:04o} for token file {path} are too open: it must be "
                f"readable by you only (chmod 600 {path})"
            )
        text = os.read(fd, 65536).decode("utf-8", "replace")
    finally:
        os.close(fd)
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not token or any(c.isspace() or not c.isprintable() for c in token):
        raise BadTokenFile(f"token file {path} holds no token (one line of printable text)")
    return token


def check_strength(token: str, host: str, source: Path | None) -> None:
    """BadTokenFile if a listener on a non-loopback `host` would accept a token shorter than
    MIN_TOKEN_BYTES (a guessable one is no guard where the network reaches the port)."""
    if not is_loopback(host) and len(token.encode()) < MIN_TOKEN_BYTES:
        raise BadTokenFile(
            f"token file {source} holds a token of {len(token.encode())} bytes: a listener on "
            f"{host} needs one of at least {MIN_TOKEN_BYTES} (openssl rand -hex 32 > {source})"
        )


@dataclass(frozen=True)
class Exposure:
    """Where a listener listens and what guards it, as its flags give them."""

    host: str = LOOPBACK
    token_file: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None

    def token(self, flags: Flags = SERVER) -> str | None:
        """The token of the token file (None: none given). Refused or BadTokenFile (one
        line, naming `flags`) unless the TLS pair is whole, and the host is loopback or
        the token file and TLS are both given, the token long enough for it."""
        check_pair(self.tls_cert, self.tls_key, flags)
        check(self.host, self.token_file, self.tls_cert, flags)
        if self.token_file is None:
            return None
        token = read_token(self.token_file)
        check_strength(token, self.host, self.token_file)
        return token


class BearerToken:
    """`admits(header)`: the Authorization header's bytes are `Bearer TOKEN` (the scheme in
    any case, as RFC 7235 has it), the token compared in constant time."""

    def __init__(self, token: str) -> None:
        self._expected = token.encode()

    def admits(self, authorization: bytes) -> bool:
        scheme, _, given = authorization.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        return hmac.compare_digest(given.strip(b" "), self._expected)
