"""Fixtures of the dashboard's browser tests: Debian's headless Chromium (`chromium`, which
.ci/run installs) driven by Playwright for Python with `executable_path` (Playwright's own
browsers are never downloaded), and a page of a real `vcflow server` (tests/server's
`start_server`), logged in through the `#token=` link `vcflow dashboard` prints."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.sync_api import Browser, BrowserContext, Page, Request, sync_playwright
from tests.server.conftest import FLOW, Server, start_server

from .chromium import chromium_path

__all__ = ["FLOW", "Opened", "Server", "browser", "open_page", "start_server"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobflow"
#: milliseconds a page may take to show what the tests wait for (a loaded CI machine)
PAGE_DEADLINE = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for a test module (each test opens its own context)."""
    executable = chromium_path()
    with sync_playwright() as playwright:
        # (--no-sandbox: CI runs as root, where Chromium's sandbox refuses to start)
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Opened:
    """A logged-in page of `server`, and every URL it requested."""

    server: Server
    context: BrowserContext
    page: Page
    requests: list[str] = field(default_factory=list)

    def goto(self, route: str) -> None:
        """Open a route of the page (`#/flows/default/test`)."""
        self.page.goto(f"{self.server.url}/{route}")

    def flow(self, namespace: str, name: str) -> None:
        """Open a flow's page and wait until its graph is drawn."""
        self.goto(f"#/flows/{namespace}/{name}")
        self.page.wait_for_selector("#graph svg g.node", timeout=PAGE_DEADLINE)


OpenPage = Callable[..., Opened]


@pytest.fixture
def open_page(browser: Browser) -> Iterator[OpenPage]:
    """`open_page(server, bypass_csp=False)`: a new browser context on `server`, logged in
    with its token (the `#token=` fragment), on the flows list."""
    contexts: list[BrowserContext] = []

    def open_(server: Server, *, bypass_csp: bool = False) -> Opened:
        context = browser.new_context(
            ignore_https_errors=True,  # (the server's own CA; the page is what is tested)
            viewport={"width": 1280, "height": 800},
            bypass_csp=bypass_csp,
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(PAGE_DEADLINE)
        opened = Opened(server, context, page)

        def seen(request: Request) -> None:
            opened.requests.append(request.url)

        page.on("request", seen)
        page.goto(f"{server.url}/#token={server.token}")
        page.wait_for_selector("#flows", timeout=PAGE_DEADLINE)
        return opened

    yield open_
    for context in contexts:
        context.close()


def example_objects(script: str) -> list[dict[str, Any]]:
    """Volcano's example flow (examples/jobflow/: five entries a → b → c, d → e) with each
    template's `sleep 10s` replaced by `script`, its vcjobs retained."""
    out: list[dict[str, Any]] = []
    for path in sorted(EXAMPLE.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            if doc["kind"] == "JobFlow":  # (kept, so that their pods' logs can be read)
                doc["spec"]["jobRetainPolicy"] = "retain"
            if doc["kind"] == "JobTemplate":
                for task in doc["spec"]["tasks"]:
                    for container in task["template"]["spec"]["containers"]:
                        container["command"] = ["sh", "-c", script]
            out.append(doc)
    return out


def create(server: Server, objects: list[dict[str, Any]]) -> None:
    """Create `objects` (JobTemplates and JobFlows, namespace default) through the API."""
    with server.client() as client:
        for obj in objects:
            plural = {"JobTemplate": "jobtemplates", "JobFlow": "jobflows"}[obj["kind"]]
            obj.setdefault("metadata", {}).pop("namespace", None)
            response = client.post(f"{FLOW}/{plural}", json=obj)
            assert response.status_code == 201, response.text
