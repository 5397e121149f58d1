"""What a web page can make a browser send is refused, the token notwithstanding: a forged
`Host` (DNS rebinding), another `Origin`, `Sec-Fetch-Site: cross-site`, a body of a type a
form can send; and no request, authenticated or not, grows the server's state (the
metrics' labels come from bounded sets)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from .conftest import CORE, FLOW, Server, Start, template

MADE_UP_METHODS = 20_000


@pytest.fixture
def server(start_server: Start) -> Server:
    return start_server("--runtime", "none", "--controllers", "off")


def _port(server: Server) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


def test_a_host_that_is_not_loopback_nor_the_certificates_is_refused(server: Server) -> None:
    port = _port(server)
    with server.client() as client:
        for host in ("evil.example", f"evil.example:{port}", "10.0.0.1", "[::2]:1", "a:b:c"):
            answer = client.get(f"{CORE}/secrets", headers={"Host": host})
            assert answer.status_code == 403, host
            assert answer.json()["reason"] == "Forbidden"
            assert "is not accepted" in answer.json()["message"]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
            assert client.get(f"{CORE}/secrets", headers={"Host": host}).status_code == 200, host


def test_another_origin_or_a_cross_site_fetch_is_refused(server: Server) -> None:
    own = server.url  # https://127.0.0.1:PORT
    with server.client() as client:
        for origin in ("http://evil.example", "null", own.replace("https", "http"),
                       f"https://127.0.0.1:{_port(server) + 1}"):  # fmt: skip
            answer = client.post(
                f"{FLOW}/jobtemplates", json=template("a", "true"), headers={"Origin": origin}
            )
            assert answer.status_code == 403, origin
            assert "cross-origin request refused" in answer.json()["message"]
        for site in ("cross-site", "same-site"):
            answer = client.get(f"{FLOW}/jobflows", headers={"Sec-Fetch-Site": site})
            assert answer.status_code == 403, site
        assert client.get(f"{FLOW}/jobtemplates").json()["items"] == []
        # the server's own pages (the dashboard to come) are same-origin
        same = {"Origin": own, "Sec-Fetch-Site": "same-origin"}
        assert client.get(f"{FLOW}/jobflows", headers=same).status_code == 200
        made = client.post(f"{FLOW}/jobtemplates", json=template("a", "true"), headers=same)
        assert made.status_code == 201


def test_a_write_needs_a_json_type_when_a_browser_could_have_sent_it(server: Server) -> None:
    body = json.dumps(template("a", "true"))
    with server.client() as client:
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
            answer = client.post(
                f"{FLOW}/jobtemplates", content=body, headers={"Content-Type": kind}
            )
            assert answer.status_code == 415, kind
        # no type from a browser (a Blob body in a no-cors fetch): refused
        browser = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors"}
        assert client.post(f"{FLOW}/jobtemplates", content=body, headers=browser).status_code == 415
        assert client.get(f"{FLOW}/jobtemplates").json()["items"] == []
        # no type from a program (the official Python client sends none on create): JSON
        assert client.post(f"{FLOW}/jobtemplates", content=body).status_code == 201


def _rss_kib(pid: int) -> int:
    found = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    assert found is not None
    return int(found.group(1))


def _made_up(client: httpx.Client, count: int, start: int) -> None:
    for i in range(start, start + count):
        answer = client.request(f"X{i:06d}", f"{FLOW}/jobflows")
        assert answer.status_code in (401, 405), answer.status_code


def test_requests_with_made_up_methods_leave_memory_and_metrics_flat(server: Server) -> None:
    """Before, each method became a label value: 20,000 of them took the server from 78 to
    222 MB and the next scrape to 5.6 GB."""
    with server.client(token="") as anonymous, server.client() as client:
        _made_up(anonymous, 1_000, 0)  # (warm: the first requests allocate caches)
        client.get("/metrics")  # (and the first scrape makes its own series)
        metrics = client.get("/metrics").text
        rss = _rss_kib(server.proc.pid)
        _made_up(anonymous, MADE_UP_METHODS, 1_000)
        after = client.get("/metrics").text
        grown = _rss_kib(server.proc.pid) - rss
    assert len(after) - len(metrics) < 1_000, "the metrics grew with the methods"
    assert 'verb="OTHER"' in after and "X000001" not in after
    assert grown < 16 * 1024, f"RSS grew by {grown} KiB"
