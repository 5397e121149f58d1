"""The dashboard in a real browser (headless Chromium) against a real `vcflow server`: the
example flow's nodes change colour as it runs and end green, a node's log shows its pod's
output, stop, retry and resubmit work from the page, the keyboard moves between nodes,
a waiting node's tooltip and label say why it waits, axe-core finds no serious violation,
and no request leaves the server."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
from PIL import Image
from playwright.sync_api import expect
from tests.server.conftest import FLOW, flow_phase, jobflow, template, wait_until

from .conftest import PAGE_DEADLINE, OpenPage, Server, create, example_objects

AXE = Path(__file__).resolve().parents[1] / "data" / "axe-core" / "axe.min.js"
RUN_DEADLINE = 120.0
UI = "/ui/api"
#: records each node's phases from now on (the one it has, then each change), by id
RECORD_PHASES = """() => {
  window.seenPhases = {};
  for (const node of document.querySelectorAll('#graph g.node')) {
    window.seenPhases[node.dataset.id] = [node.dataset.phase];
  }
  new MutationObserver((changes) => {
    for (const change of changes) {
      const node = change.target;
      const seen = window.seenPhases[node.dataset.id];
      if (seen[seen.length - 1] !== node.dataset.phase) seen.push(node.dataset.phase);
    }
  }).observe(document.querySelector('#graph svg'),
             {subtree: true, attributes: true, attributeFilter: ['data-phase']});
}"""
ALL_COMPLETED = """() => {
  const nodes = [...document.querySelectorAll('#graph g.node')];
  return nodes.length > 0 && nodes.every((n) => n.dataset.phase === 'Completed');
}"""
#: the fill of a node's shape, as `[r, g, b]`
NODE_FILL = """(id) => {
  const node = document.querySelector(`#graph g.node[data-id="${id}"]`);
  const shape = node.querySelector('rect, path, polygon, ellipse');
  const rgb = getComputedStyle(shape).fill.match(/\\d+/g).map(Number);
  return rgb.slice(0, 3);
}"""


def _node(id_: str) -> str:
    return f'#graph g.node[data-id="{id_}"]'


def test_the_example_flow_turns_green_on_the_page(
    start_server: Any, open_page: OpenPage, tmp_path: Path
) -> None:
    server: Server = start_server()
    opened = open_page(server)
    page = opened.page
    response = httpx.get(f"{server.url}/", verify=False)
    policy = response.headers.get("content-security-policy", "")
    assert "default-src 'none'" in policy and "script-src 'self'" in policy, policy

    create(server, example_objects("echo vcflow-log-line from $VCFLOW_ENTRY; sleep 3"))
    opened.flow("default", "test")
    ids = page.eval_on_selector_all("#graph g.node", "nodes => nodes.map(n => n.dataset.id)")
    assert sorted(ids) == ["a", "b", "c", "d", "e"]
    page.evaluate(RECORD_PHASES)
    page.wait_for_function(ALL_COMPLETED, timeout=RUN_DEADLINE * 1000)
    seen: dict[str, list[str]] = page.evaluate("() => window.seenPhases")
    for id_ in "bcde":  # (a may be running when the page opens; b to e cannot have run)
        assert seen[id_][0] != "Completed" and len(seen[id_]) >= 2, seen
    for id_ in "abcde":
        red, green, blue = page.evaluate(NODE_FILL, id_)
        assert green > red and green > blue, f"node {id_} is not green: {(red, green, blue)}"
    assert page.locator("#action-stop").count() == 1

    shot = tmp_path / "flow-page.png"
    page.screenshot(path=str(shot))
    _check_pixels(shot, tuple(page.evaluate(NODE_FILL, "e")))
    if os.environ.get("VCFLOW_SCREENSHOTS"):  # (how docs/img/dashboard-flow.png is made)
        shutil.copy(shot, Path(os.environ["VCFLOW_SCREENSHOTS"]) / "dashboard-flow.png")

    page.click(_node("a"))
    page.wait_for_selector("#panel", state="visible")
    page.wait_for_selector("#panel >> text=test-a-")  # (its pod listed)
    if page.locator("#log").count() == 0:  # (a log the page did not open by itself)
        page.locator("#panel button", has_text="Log").first.click()
    page.wait_for_function(
        "() => (document.querySelector('#log pre') || {}).textContent?.includes('vcflow-log-line')",
        timeout=PAGE_DEADLINE,
    )
    outside = [u for u in opened.requests if not u.startswith((server.url, "data:"))]
    assert not outside, f"the page requested other origins: {outside}"


def _check_pixels(path: Path, completed: tuple[int, ...]) -> None:
    """The screenshot is not blank and shows the Completed fill of the five nodes."""
    with Image.open(path) as image:
        raw = image.convert("RGB").tobytes()
    pixels = [tuple(raw[i : i + 3]) for i in range(0, len(raw), 3)]
    assert len(set(pixels)) > 20, "the screenshot is (nearly) blank"
    near = sum(1 for p in pixels if all(abs(a - b) <= 6 for a, b in zip(p, completed, strict=True)))
    assert near >= 5 * 200, f"only {near} pixels of the Completed fill {completed}"


def test_stop_retry_and_resubmit_from_the_page(start_server: Any, open_page: OpenPage) -> None:
    server: Server = start_server()
    opened = open_page(server)
    page = opened.page
    page.on("dialog", lambda dialog: dialog.accept())
    create(server, [template("slow", "sleep 300"), template("after", "true")])
    flow = jobflow("held", "slow", "after<slow")
    create(server, [flow])
    opened.flow("default", "held")
    page.wait_for_selector(f'{_node("slow")}[data-phase="Running"]', timeout=RUN_DEADLINE * 1000)

    page.click("#action-stop")
    with server.client() as client:
        wait_until(lambda: flow_phase(client, "held") == "Failed", "the stopped flow", RUN_DEADLINE)
    page.wait_for_function(
        f"() => document.querySelector('{_node('slow')}').dataset.phase !== 'Running'",
        timeout=PAGE_DEADLINE,
    )

    page.click("#action-retry")
    with server.client() as client:
        wait_until(
            lambda: (client.get(f"{FLOW}/jobflows/held").json().get("status") or {}).get(
                "lastRetry"
            ),
            "the retry recorded",
            RUN_DEADLINE,
        )
    page.wait_for_selector(f'{_node("slow")}[data-phase="Running"]', timeout=RUN_DEADLINE * 1000)

    page.click("#action-resubmit")
    with server.client() as client:

        def resubmitted() -> list[str]:
            found = client.get(f"{FLOW}/jobflows").json()
            return [
                i["metadata"]["name"] for i in found["items"] if i["metadata"]["name"] != "held"
            ]

        copies = wait_until(resubmitted, "the resubmitted flow", RUN_DEADLINE)
    assert copies[0].startswith("held-")


def test_a_waiting_node_says_why_in_its_title_and_label(
    start_server: Any, open_page: OpenPage, tmp_path: Path
) -> None:
    server: Server = start_server()
    gates = {name: tmp_path / f"{name}.go" for name in ("upstream", "middle")}
    create(
        server,
        [
            template(name, f"while [ ! -e {gate} ]; do sleep 0.05; done")
            for name, gate in gates.items()
        ]
        + [template("downstream", "true")],
    )
    create(server, [jobflow("why", "upstream", "middle<upstream", "downstream<upstream,middle")])
    graph = f"{UI}/namespaces/default/jobflows/why"

    def nodes(client: httpx.Client) -> dict[str, dict[str, Any]]:
        return {n["id"]: n for n in client.get(graph).json()["nodes"]}

    def waiting_while(client: httpx.Client, running: str, was: str = "") -> dict[str, Any] | None:
        """downstream's node once `running` runs and downstream has a reason other than
        `was`, else None."""
        found = nodes(client)
        reason = found["downstream"]["reason"]
        ready = found[running]["phase"] == "Running" and reason and reason != was
        return found["downstream"] if ready else None

    with server.client() as client:
        first = wait_until(lambda: waiting_while(client, "upstream"), "downstream waiting")
    reason = first["reason"]
    assert "upstream" in reason and "middle" in reason, reason

    opened = open_page(server)
    page = opened.page
    opened.flow("default", "why")
    node = page.locator(_node("downstream"))
    title = page.locator(f"{_node('downstream')} > title")
    expect(title).to_contain_text(f"downstream {first['phase']} {reason}", timeout=PAGE_DEADLINE)
    expect(node).to_have_attribute(
        "aria-label", re.compile(re.escape(reason)), timeout=PAGE_DEADLINE
    )

    gates["upstream"].touch()  # upstream ends; downstream now waits for middle only (live)
    with server.client() as client:
        second = wait_until(lambda: waiting_while(client, "middle", reason), "middle running")
    assert second["reason"] != reason and "middle" in second["reason"], second
    expect(title).to_contain_text(second["reason"], timeout=PAGE_DEADLINE)
    expect(title).not_to_contain_text(reason)
    expect(node).to_have_attribute(
        "aria-label", re.compile(re.escape(second["reason"])), timeout=PAGE_DEADLINE
    )
    expect(page.locator(f"{_node('middle')} > title")).to_have_text(
        "middle Running", timeout=PAGE_DEADLINE
    )

    gates["middle"].touch()
    with server.client() as client:
        wait_until(lambda: flow_phase(client, "why") == "Succeed", "the flow done", RUN_DEADLINE)
        final = nodes(client)
    for id_, got in final.items():
        assert got["phase"] == "Completed" and got["reason"] is None, got
        expect(page.locator(f"{_node(id_)} > title")).to_have_text(
            f"{id_} Completed", timeout=PAGE_DEADLINE
        )
        expect(page.locator(_node(id_))).to_have_attribute(
            "aria-label", re.compile(rf"^{id_}: Completed(, [a-z ]+)*$"), timeout=PAGE_DEADLINE
        )


def test_keyboard_moves_between_nodes(start_server: Any, open_page: OpenPage) -> None:
    server: Server = start_server("--controllers", "off")
    create(server, [template(t, "true") for t in "abcd"])
    create(server, [jobflow("diamond", "a", "b<a", "c<a", "d<b,c")])
    opened = open_page(server)
    page = opened.page
    opened.flow("default", "diamond")

    for _ in range(60):  # Tab reaches the graph
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.matches('#graph g.node')"):
            break
    else:
        raise AssertionError("Tab never reached a node of the graph")

    def focused() -> str:
        return str(page.evaluate("() => document.activeElement.dataset.id || ''"))

    page.focus(_node("a"))
    page.keyboard.press("ArrowRight")
    first = focused()
    assert first in {"b", "c"}
    page.keyboard.press("ArrowDown")  # (the other node of the rank: below, else above)
    if focused() == first:
        page.keyboard.press("ArrowUp")
    assert focused() == ({"b", "c"} - {first}).pop()
    page.keyboard.press("ArrowRight")
    assert focused() == "d"
    page.keyboard.press("ArrowLeft")
    assert focused() in {"b", "c"}
    page.keyboard.press("Enter")
    page.wait_for_selector("#panel", state="visible")
    label = page.get_attribute("#panel", "aria-label") or ""
    assert focused() in label or label.endswith(("b", "c")), label
    page.keyboard.press("Escape")
    page.wait_for_selector("#panel", state="hidden")


def test_axe_finds_no_serious_violation(start_server: Any, open_page: OpenPage) -> None:
    server: Server = start_server("--controllers", "off")
    create(server, [template(t, "true") for t in "abcd"])
    create(server, [jobflow("diamond", "a", "b<a", "c<a", "d<b,c")])
    opened = open_page(server, bypass_csp=True)  # (to load axe, which the page's CSP refuses)
    page = opened.page
    source = AXE.read_text()
    found: dict[str, list[str]] = {}
    for route, ready in (("#/", "#flows"), ("#/flows/default/diamond", "#graph g.node")):
        opened.goto(route)
        page.wait_for_selector(ready)
        if route != "#/":
            page.click(_node("b"))
            page.wait_for_selector("#panel", state="visible")
        if not page.evaluate("() => typeof window.axe === 'object'"):
            page.add_script_tag(content=source)
        violations = page.evaluate(
            "async () => (await axe.run(document)).violations"
            ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
            ".map(v => `${v.id}: ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)"
        )
        found[route] = violations
    assert found == {"#/": [], "#/flows/default/diamond": []}


def test_a_page_without_the_token_asks_for_it(start_server: Any, browser: Any) -> None:
    server: Server = start_server("--controllers", "off")
    context = browser.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_DEADLINE)
        page.goto(f"{server.url}/")
        page.wait_for_selector("#login-token")
        page.fill("#login-token", "not-the-token")
        page.click("#login-submit")
        time.sleep(0.5)
        assert page.locator("#flows").count() == 0
        page.fill("#login-token", server.token or "")
        page.click("#login-submit")
        page.wait_for_selector("#flows")
        cookies = {c["name"]: c for c in context.cookies()}
        cookie = cookies["vcflow-dashboard"]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert cookie["value"] != server.token  # (a key made from it, not the token itself)
    finally:
        context.close()
