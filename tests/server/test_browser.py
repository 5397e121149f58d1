"""A page of another origin, opened in a real browser (headless Chromium, Debian's
`chromium`), cannot make `vcflow server` create a job — even a server started with
`--insecure-no-auth`, where only the cross-site rules stand in the way. Before them, a
`no-cors` fetch with a Blob body (no Content-Type) created a vcjob that ran as the
server's user."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
from tests.browser.chromium import chromium_path

from .conftest import BATCH, DEADLINE, Start, wait_until
from .test_default_auth import vcjob

PAGE = """<!doctype html>
<html><head><title>waiting</title></head><body><script>
const url = %(url)s;
const body = %(body)s;
const tries = [
  fetch(url, {method: "POST", mode: "no-cors", body: new Blob([body])}),
  fetch(url, {method: "POST", mode: "no-cors", body: body}),
  fetch(url, {method: "POST", mode: "no-cors", body: body,
              headers: {"Content-Type": "application/x-www-form-urlencoded"}}),
  fetch(url, {method: "POST", body: body, headers: {"Content-Type": "application/json"}}),
];
Promise.allSettled(tries).then(() => { document.title = "sent"; });
</script></body></html>
"""


@contextlib.contextmanager
def _page_server(root: Path) -> Iterator[str]:
    """A plain HTTP server of `root` on another loopback port: the other origin."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_of_another_origin_cannot_create_a_job(start_server: Start, tmp_path: Path) -> None:
    chromium = chromium_path()
    server = start_server("--insecure-no-auth")
    jobs = f"{server.url}{BATCH}/jobs"
    marker = tmp_path / "ran"
    root = tmp_path / "site"
    root.mkdir()
    job = vcjob("from-a-page", f"id > {marker}")
    (root / "index.html").write_text(
        PAGE % {"url": json.dumps(jobs), "body": json.dumps(json.dumps(job))}
    )
    with _page_server(root) as origin:
        shown = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000",
             "--dump-dom", f"{origin}/index.html"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert "<title>sent</title>" in shown.stdout, shown.stderr[-2000:]
    # every request reached the server and was refused there
    posts = wait_until(
        lambda: (
            [line for line in server.output().splitlines() if f"POST {BATCH}/jobs" in line]
            if server.output().count(f"POST {BATCH}/jobs") >= 3
            else None
        ),
        "the page's requests in the server's log",
    )
    assert all(" 403 " in line or " 415 " in line for line in posts), posts
    with httpx.Client(base_url=server.url, timeout=DEADLINE) as client:
        assert client.get(f"{BATCH}/jobs").json()["items"] == []
    assert not marker.exists()
