"""The dashboard in headless Chromium (Debian's `chromium`, driven by Playwright): how long
the flow page takes to first paint, and how long a node's phase change takes to show, for

  small   Volcano's example flow (five entries): the baseline, measured in the same run
  dag     a 1,000-entry flow, a random layered DAG (each entry after 1-3 of the 40 before it)
  for     a flow `prep -> sweep -> report` whose `sweep` entry fans out over 10,000 items

`vcflow server --controllers off` holds the flows, so nothing runs them: the bench writes
their status (an entry's condition, as the flow controller would) through the API and
times, in the page, when the node shows it. First paint is the page's own mark
(`window.vcflowPaint`, milliseconds from the navigation's start, page load + data + layout
+ drawing); a change is the time from just before the status write to the node's
`data-changed` mark (both clocks are this machine's).

    .venv/bin/python bench/dashboard_bench.py                  # every case, 5 loads, 10 changes
    .venv/bin/python bench/dashboard_bench.py --cases dag --loads 3 --changes 5 --json

Needs the dev extras (Playwright) and `chromium` on PATH; never downloads a browser.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, BrowserContext, sync_playwright

FLOW = "/apis/flow.volcano.sh/v1alpha1/namespaces/default"
TIMEOUT_MS = 60_000


@dataclass
class Server:
    url: str
    token: str
    proc: subprocess.Popen[bytes]

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}"},
            verify=False,  # (the server's own CA; the bench reads only)
            timeout=60.0,
        )


@contextlib.contextmanager
def server(vcflow: str) -> Iterator[Server]:
    """`vcflow server --controllers off` on a fresh state directory."""
    with tempfile.TemporaryDirectory(prefix="vcflow-dash-bench-") as tmp:
        state = Path(tmp) / "state"
        proc = subprocess.Popen(
            [vcflow, "server", "--state-dir", str(state), "--port", "0", "--controllers", "off"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            end = time.monotonic() + 60
            while True:
                try:
                    info = json.loads((state / "server.json").read_text())
                    if info.get("pid") == proc.pid:
                        break
                except (OSError, ValueError):
                    pass
                if proc.poll() is not None or time.monotonic() > end:
                    raise SystemExit("vcflow server did not start")
                time.sleep(0.05)
            token = Path(info["tokenFile"]).read_text().strip()
            yield Server(str(info["url"]), token, proc)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def template(name: str) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox", "command": ["true"]}
    task = {"name": "t", "replicas": 1, "template": {"spec": {"containers": [container]}}}
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {"minAvailable": 1, "tasks": [task]},
    }


def flow(name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name},
        "spec": {"jobRetainPolicy": "retain", "flows": entries},
    }


def small() -> list[dict[str, Any]]:
    deps = {"b": ["a"], "c": ["b"], "d": ["b"], "e": ["c", "d"]}
    entries = [
        {"name": n, "template": "t", **({"dependsOn": {"targets": deps[n]}} if n in deps else {})}
        for n in "abcde"
    ]
    return [flow("small", entries)]


def dag(size: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    entries: list[dict[str, Any]] = []
    for i in range(size):
        entry: dict[str, Any] = {"name": f"e{i:05d}", "template": "t"}
        if i:
            before = range(max(0, i - 40), i)
            targets = sorted(rng.sample(list(before), min(len(before), rng.randint(1, 3))))
            entry["dependsOn"] = {"targets": [f"e{j:05d}" for j in targets]}
        entries.append(entry)
    return [flow("dag", entries)]


def fan_out(items: int) -> list[dict[str, Any]]:
    return [
        flow(
            "sweep",
            [
                {"name": "prep", "template": "t"},
                {
                    "name": "sweep",
                    "template": "t",
                    "dependsOn": {"targets": ["prep"]},
                    "for": {"items": list(range(items)), "parallelism": 50},
                },
                {"name": "report", "template": "t", "dependsOn": {"targets": ["sweep"]}},
            ],
        )
    ]


CASES = {"small": ("small", "c"), "dag": ("dag", None), "for": ("sweep", "sweep")}


def set_phase(client: httpx.Client, name: str, job: str, phase: str) -> None:
    """Write one condition of flow `name`'s status, as its controller would."""
    body = {"status": {"conditions": {job: {"phase": phase}}}}
    done = client.patch(
        f"{FLOW}/jobflows/{name}/status",
        json=body,
        headers={"Content-Type": "application/merge-patch+json"},
    )
    done.raise_for_status()


def first_paint(context: BrowserContext, url: str, name: str) -> float:
    """Open the flow page in a new tab (a whole load); its first-paint mark in ms."""
    page = context.new_page()
    try:
        page.goto(f"{url}/#/flows/default/{name}")
        page.wait_for_function("() => window.vcflowPaint !== undefined", timeout=TIMEOUT_MS)
        return float(page.evaluate("() => window.vcflowPaint"))
    finally:
        page.close()


def change_shown(
    context: BrowserContext, srv: Server, name: str, node: str, jobs: list[str], *, fan: bool
) -> list[float]:
    """Milliseconds from each status write to the node's repaint (`data-changed`)."""
    page = context.new_page()
    out: list[float] = []
    try:
        page.goto(f"{srv.url}/#/flows/default/{name}")
        page.wait_for_function("() => window.vcflowPaint !== undefined", timeout=TIMEOUT_MS)
        selector = f'#graph g.node[data-id="{node}"]'
        with srv.client() as client:
            for i, job in enumerate(jobs):
                before = page.get_attribute(selector, "data-changed")
                # (a `for` node shows its items completed: each change completes one more)
                phase = "Running" if i % 2 == 0 and not fan else "Completed"
                start = time.time() * 1000
                set_phase(client, name, job, phase)
                page.wait_for_function(
                    "([sel, before]) => document.querySelector(sel).dataset.changed !== before"
                    " && document.querySelector(sel).dataset.changed !== undefined",
                    arg=[selector, before],
                    timeout=TIMEOUT_MS,
                )
                shown = page.evaluate(
                    "(sel) => performance.timeOrigin + Number(document.querySelector(sel)"
                    ".dataset.changed)",
                    selector,
                )
                out.append(float(shown) - start)
    finally:
        page.close()
    return out


def run_case(browser: Browser, srv: Server, case: str, args: argparse.Namespace) -> dict[str, Any]:
    name, node = CASES[case]
    objects = {
        "small": small,
        "dag": lambda: dag(args.entries, args.seed),
        "for": lambda: fan_out(args.items),
    }[case]()
    with srv.client() as client:
        for obj in objects:
            client.post(f"{FLOW}/jobflows", json=obj).raise_for_status()
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1440, "height": 900})
    try:
        login = context.new_page()
        login.goto(f"{srv.url}/#token={srv.token}")
        login.wait_for_selector("#flows", timeout=TIMEOUT_MS)
        login.close()
        paints = [first_paint(context, srv.url, name) for _ in range(args.loads)]
        rng = random.Random(args.seed)
        if case == "dag":
            node = f"e{rng.randrange(args.entries):05d}"
            jobs = [f"{name}-{node}"] * args.changes
        elif case == "for":
            picked = rng.sample(range(args.items), args.changes)
            jobs = [f"{name}-sweep-{i}" for i in picked]
        else:
            jobs = [f"{name}-{node}"] * args.changes
        assert node is not None
        changes = change_shown(context, srv, name, node, jobs, fan=case == "for")
    finally:
        context.close()
    return {"case": case, "paint_ms": paints, "change_ms": changes}


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):7.0f} {max(values):7.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="small,dag,for")
    parser.add_argument("--loads", type=int, default=5, help="page loads per case")
    parser.add_argument("--changes", type=int, default=10, help="phase changes per case")
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--vcflow", default=str(Path(sys.executable).with_name("vcflow")))
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not on PATH (apt-get install chromium)")
    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            for case in args.cases.split(","):
                with server(args.vcflow) as srv:
                    with srv.client() as client:
                        client.post(f"{FLOW}/jobtemplates", json=template("t")).raise_for_status()
                    results.append(run_case(browser, srv, case, args))
        finally:
            browser.close()
    if args.json:
        print(json.dumps({"machine": platform.node(), "results": results}, indent=2))
        return
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
        f"{len(os.sched_getaffinity(0))} CPUs"
    )
    print(f"{'case':8} {'paint p50':>9} {'max':>7} {'change p50':>10} {'max':>7}  (ms)")
    base = None
    for found in results:
        paint = statistics.median(found["paint_ms"])
        base = paint if found["case"] == "small" else base
        ratio = f"  paint {paint / base:.2f}x small" if base and found["case"] != "small" else ""
        print(
            f"{found['case']:8} {summary(found['paint_ms'])}  {summary(found['change_ms'])}{ratio}"
        )


if __name__ == "__main__":
    main()
