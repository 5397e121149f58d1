"""The credentials `vcflow server` makes for itself when none are given, as Jupyter and k3s
do: a random bearer token, a self-signed CA and a serving certificate that CA signs, kept in
`<state dir>/serving/` (owner-only, written atomically, never through a link).

Made once and reused, so a kubeconfig copied from an earlier start keeps working; the
serving certificate is made anew (under the same CA) when it nears its end or does not name
every host it must, the CA when it nears its own end or its key is gone. Used by
`serve.serve`; `names_of` gives the names a certificate (given or made) is valid for, which
`crosssite` accepts in `Host`.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from vcflow.api.errors import VcflowError
from vcflow.podserver import ownership, podfs
from vcflow.serving.exposure import read_token
from vcflow.serving.listening import WILDCARDS

DIRECTORY = "serving"
TOKEN, CA_CERT, CA_KEY, CERT, KEY = "token", "ca.crt", "ca.key", "tls.crt", "tls.key"
#: the names a made certificate is valid for: the loopback listener's (a non-loopback
#: listener needs a certificate of the operator's, `serve.check_exposure`)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
CA_DAYS = 3650
CERT_DAYS = 365
#: a certificate with less left than this is made anew at the next start
RENEW_BEFORE = datetime.timedelta(days=30)
TOKEN_BYTES = 32  # random bytes, as 43 URL-safe characters


class Unusable(VcflowError):
    """A credential file that cannot be read, or is not the user's; `why` without the path."""

    def __init__(self, message: str, why: str = "") -> None:
        super().__init__(message)
        self.why = why or message


@dataclass(frozen=True)
class Made:
    """The files of the made credentials; `token` is the token file's content."""

    token: str | None
    token_file: Path | None
    ca_file: Path | None
    cert_file: Path | None
    key_file: Path | None


def ensure(state_dir: Path, *, token: bool, tls: bool) -> Made:
    """The token (`token`) and the CA and serving certificate (`tls`) of `state_dir`,
    made if missing, stale or unreadable as ours."""
    where = state_dir / DIRECTORY
    try:
        ownership.make_dir(str(where))
        made_token = _token(where) if token else None
        if tls:
            _certificates(where)
    except ownership.Unsafe as exc:
        raise Unusable(str(exc)) from None
    except OSError as exc:
        raise Unusable(f"cannot write the server's credentials in {where}: {exc}") from None
    return Made(
        token=made_token,
        token_file=where / TOKEN if token else None,
        ca_file=where / CA_CERT if tls else None,
        cert_file=where / CERT if tls else None,
        key_file=where / KEY if tls else None,
    )


def accepted_hosts(host: str, cert_file: Path | None) -> frozenset[str]:
    """The names a listener on `host` accepts in a request's `Host` (the DNS-rebinding
    guard): loopback's, `host` itself unless it is a wildcard, and the certificate's;
    Unusable when the certificate does not load."""
    hosts = set(LOOPBACK_NAMES)
    if host not in WILDCARDS:
        hosts.add(host.strip("[]").lower())
    if cert_file is not None:
        hosts |= names_of(cert_file)
    return frozenset(hosts)


def names_of(cert_file: Path) -> frozenset[str]:
    """The DNS names and IP addresses (as text) a PEM certificate's subjectAltName holds."""
    try:
        cert = x509.load_pem_x509_certificate(podfs.read_bytes(str(cert_file)))
    except OSError as exc:
        why = (exc.strerror or str(exc)).lower()
        raise Unusable(f"cannot read the TLS certificate {cert_file}: {why}", why) from None
    except ValueError:
        why = "not a PEM certificate"
        raise Unusable(f"cannot read the TLS certificate {cert_file}: {why}", why) from None
    try:
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return frozenset()
    dns = alt.get_values_for_type(x509.DNSName)
    ips = [str(ip) for ip in alt.get_values_for_type(x509.IPAddress)]
    return frozenset(name.lower() for name in [*dns, *ips])


def _token(where: Path) -> str:
    path = where / TOKEN
    if path.exists() or path.is_symlink():
        return read_token(path)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    podfs.write_bytes(str(path), f"{token}\n".encode(), fsync=True)
    return token


def _certificates(where: Path) -> None:
    now = datetime.datetime.now(datetime.UTC)
    ca = _load_pair(where / CA_CERT, where / CA_KEY)
    if ca is None or ca[0].not_valid_after_utc - now < RENEW_BEFORE:
        ca = _make_ca(now)
        _write_pair(where / CA_CERT, where / CA_KEY, *ca)
        serving = None
    else:
        serving = _load_pair(where / CERT, where / KEY)
    if serving is None or not _still_good(serving[0], ca[0], now):
        cert, key = _make_serving(ca[0], ca[1], now)
        _write_pair(where / CERT, where / KEY, cert, key)


def _still_good(cert: x509.Certificate, ca: x509.Certificate, now: datetime.datetime) -> bool:
    if cert.issuer != ca.subject or cert.not_valid_after_utc - now < RENEW_BEFORE:
        return False
    try:
        cert.verify_directly_issued_by(ca)
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, TypeError, x509.ExtensionNotFound, InvalidSignature):
        return False
    held = {*alt.get_values_for_type(x509.DNSName)}
    held |= {str(ip) for ip in alt.get_values_for_type(x509.IPAddress)}
    return held >= set(LOOPBACK_NAMES)


def _load_pair(
    cert_file: Path, key_file: Path
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    """The certificate and key, or None when either is missing or is not one we made
    (a refusal of `ownership` if another user owns them or they are links)."""
    for path in (cert_file, key_file):
        if not path.exists() and not path.is_symlink():
            return None
        ownership.check(str(path), os.lstat(path), ownership.FILE)
    try:
        cert = x509.load_pem_x509_certificate(podfs.read_bytes(str(cert_file)))
        key = serialization.load_pem_private_key(podfs.read_bytes(str(key_file)), None)
    except (ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    return cert, key


def _write_pair(
    cert_file: Path, key_file: Path, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> None:
    pem_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    podfs.write_bytes(str(key_file), pem_key, fsync=True)
    podfs.write_bytes(str(cert_file), cert.public_bytes(serialization.Encoding.PEM), fsync=True)


def _make_ca(now: datetime.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"vcflow-server-ca@{int(now.timestamp())}")]
    )
    cert = (
        _builder(name, name, key, now, CA_DAYS)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _make_serving(
    ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, now: datetime.datetime
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vcflow-server")])
    cert = (
        _builder(subject, ca.subject, key, now, CERT_DAYS)
        .add_extension(
            x509.SubjectAlternativeName(list(_alt_names(LOOPBACK_NAMES))), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    now: datetime.datetime,
    days: int,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))  # (clocks a little behind)
        .not_valid_after(now + datetime.timedelta(days=days))
    )


def _alt_names(names: Iterable[str]) -> Iterable[x509.GeneralName]:
    for name in names:
        try:
            yield x509.IPAddress(ipaddress.ip_address(name))
        except ValueError:
            yield x509.DNSName(name)
