"""The TLS pair (`serving.tls`): a server context of TLS 1.2 at least; a pair that does not
load is refused in one line naming both files."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import trustme

from vcflow.serving import Refused, tls


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    issued = trustme.CA().issue_cert("127.0.0.1")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    return cert, key


def test_a_pair_loads_into_a_server_context(pair: tuple[Path, Path]) -> None:
    context = tls.context(*pair)
    assert context.minimum_version is ssl.TLSVersion.TLSv1_2


def test_a_pair_that_does_not_load_is_refused(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    cert, key = pair
    for given, why in (
        ((junk, key), "not a PEM certificate and its key"),
        ((cert, junk), "not a PEM certificate and its key"),
        ((tmp_path / "missing", key), "no such file or directory"),
    ):
        with pytest.raises(Refused) as refused:
            tls.context(*given)
        assert str(refused.value) == (
            f"cannot load the TLS certificate {given[0]} or key {given[1]}: {why}"
        )
    with pytest.raises((OSError, ssl.SSLError)):
        tls.loaded(junk, key)
