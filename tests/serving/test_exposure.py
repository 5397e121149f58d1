"""The exposure rule every listener keeps (`serving.exposure`): loopback is open, another
address needs a token file and TLS, a TLS pair is given whole, each refusal one line naming
the listener's own flags, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcflow.api.errors import InputError
from vcflow.serving import Refused, exposure

TOKEN, CERT = Path("token"), Path("tls.crt")
METRICS = exposure.Flags(
    token="--metrics-token-file",
    cert="--metrics-tls-cert",
    key="--metrics-tls-key",
    address="--metrics-addr",
    does="serve /metrics",
)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "localhost"])
def test_loopback_needs_neither_token_nor_tls(host: str) -> None:
    assert exposure.is_loopback(host)
    exposure.check(host, None, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.1", "example.com", ""])
def test_another_address_is_not_loopback(host: str) -> None:
    assert not exposure.is_loopback(host)


@pytest.mark.parametrize(("token", "cert"), [(None, None), (TOKEN, None), (None, CERT)])
def test_another_address_without_token_and_tls_is_refused(
    token: Path | None, cert: Path | None
) -> None:
    with pytest.raises(Refused) as refused:
        exposure.check("0.0.0.0", token, cert)
    assert str(refused.value) == (
        "refusing to listen on 0.0.0.0: a non-loopback address needs --token-file and "
        "--tls-cert/--tls-key (or listen on 127.0.0.1)"
    )


def test_another_address_with_token_and_tls_is_allowed() -> None:
    exposure.check("0.0.0.0", TOKEN, CERT)


def test_a_refusal_names_the_listeners_own_flags() -> None:
    with pytest.raises(Refused) as refused:
        exposure.check("0.0.0.0", None, None, METRICS)
    assert str(refused.value) == (
        "refusing to serve /metrics on 0.0.0.0: a non-loopback --metrics-addr needs "
        "--metrics-token-file and --metrics-tls-cert/--metrics-tls-key (or listen on 127.0.0.1)"
    )
    with pytest.raises(Refused, match=r"^--metrics-tls-cert and --metrics-tls-key go together"):
        exposure.check_pair(None, Path("k"), METRICS)


@pytest.mark.parametrize(("cert", "key"), [(CERT, None), (None, Path("tls.key"))])
def test_half_a_tls_pair_is_refused(cert: Path | None, key: Path | None) -> None:
    with pytest.raises(Refused) as refused:
        exposure.check_pair(cert, key)
    assert str(refused.value) == "--tls-cert and --tls-key go together: give both or neither"


def test_a_whole_pair_or_none_is_fine() -> None:
    exposure.check_pair(None, None)
    exposure.check_pair(CERT, Path("tls.key"))


def test_a_refusal_is_an_input_error_exit_1() -> None:
    assert issubclass(Refused, InputError) and Refused("x").exit_code == 1


def test_the_token_file_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("s3cret-but-long-enough\n")
    path.chmod(0o600)
    assert exposure.read_token(path) == "s3cret-but-long-enough"
    path.chmod(0o640)
    with pytest.raises(exposure.BadTokenFile, match="too open"):
        exposure.read_token(path)


def test_a_short_token_is_refused_off_loopback_only() -> None:
    exposure.check_strength("short", "127.0.0.1", TOKEN)
    with pytest.raises(exposure.BadTokenFile, match="needs one of at least 16"):
        exposure.check_strength("short", "0.0.0.0", TOKEN)


def test_the_bearer_check() -> None:
    token = exposure.BearerToken("abc")
    assert token.admits(b"Bearer abc") and token.admits(b"bearer abc")
    assert not token.admits(b"Bearer abd") and not token.admits(b"Basic abc")
