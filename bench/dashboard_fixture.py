"""A stand-in for the dashboard backend, for working on the page without a cluster.

Serves src/vcflow/dashboard/static/ at / and /ui/static/, and canned data on the
/ui/api paths of the dashboard contract (docs/dashboard.md): flows `demo` (a small
flow with every node kind), `bigN`, `recentN`, `layersN`, `chainN` (N entries,
e.g. big1000; see big()), a fake SSE
stream that moves a few nodes every second, pod logs (follow streams a line a
second) and the actions. Token: `secret`.

    python bench/dashboard_fixture.py --port 8091 [--read-only] [--no-auth]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from vcflow.dashboard.session import COOKIE, cookie_value

STATIC = Path(__file__).resolve().parents[2] / "src" / "vcflow" / "dashboard" / "static"
TOKEN = "secret"
SESSION = cookie_value(TOKEN)
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".txt": "text/plain"}
PHASES = ["Completed", "Running", "Pending", "Waiting", "Failed", "Skipped", "Backoff"]
NOW = datetime.now(UTC)


def ts(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def node(nid: str, phase: str, kind: str = "job", **kw: Any) -> dict[str, Any]:
    n = {
        "id": nid,
        "label": nid.removeprefix("onExit:"),
        "template": "tpl-" + nid.removeprefix("onExit:"),
        "phase": phase,
        "reason": None,
        "kind": kind,
        "items": None,
        "critical": False,
        "started": ts(30) if phase not in ("Waiting", "Pending", "") else None,
        "finished": ts(10) if phase in ("Completed", "Failed", "Skipped") else None,
    }
    n.update(kw)
    return n


def demo() -> dict[str, Any]:
    nodes = [
        node("prepare-data", "Completed", critical=True),
        node("download-weights", "Completed"),
        node(
            "train-shards",
            "Running",
            "for",
            items={"done": 4321, "total": 10000},
            critical=True,
        ),
        node("check-quality", "Waiting", "when", reason="waiting for train-shards"),
        node("pick-target", "Pending", "switch", reason="waiting for check-quality"),
        node("evaluate", "Waiting", reason="waiting for train-shards", critical=True),
        node("publish-model-to-registry", "Waiting", reason="waiting for evaluate"),
        node("lint-config", "Failed"),
        node("legacy-export", "Skipped", "when", reason="when: params.legacy == 'true' is false"),
        node("retry-flaky", "Backoff"),
        node("onExit:notify", "", "exit"),
    ]
    edges = [
        ("prepare-data", "train-shards"),
        ("download-weights", "train-shards"),
        ("prepare-data", "lint-config"),
        ("prepare-data", "legacy-export"),
        ("train-shards", "check-quality"),
        ("train-shards", "evaluate"),
        ("check-quality", "pick-target"),
        ("evaluate", "publish-model-to-registry"),
        ("pick-target", "publish-model-to-registry"),
        ("lint-config", "retry-flaky"),
    ]
    return graph("default", "demo", nodes, edges, ["prepare-data", "train-shards", "evaluate"])


def big(shape: str, n: int, seed: int = 42) -> dict[str, Any]:
    """big: 1-3 dependencies on any earlier entry; recent: 1-3 among the 40 before;
    layers: 50 wide, 2 dependencies in the layer before; chain: one long line."""
    rnd = random.Random(seed)
    nodes = [node(f"step-{i:04d}", rnd.choice(PHASES)) for i in range(n)]
    edges = []
    for i in range(1, n):
        if shape == "chain":
            preds = [i - 1]
        elif shape == "layers":
            layer = i // 50
            preds = [(layer - 1) * 50 + rnd.randrange(50) for _ in range(2)] if layer else []
        elif shape == "recent":
            preds = [max(0, i - 1 - rnd.randrange(40)) for _ in range(1 + rnd.randrange(3))]
        else:
            preds = [rnd.randrange(i) for _ in range(1 + rnd.randrange(3))]
        edges += [(f"step-{p:04d}", f"step-{i:04d}") for p in preds]
    return graph("default", f"{shape}{n}", nodes, sorted(set(edges)), [])


def graph(
    ns: str, name: str, nodes: list[dict[str, Any]], edges: list[tuple[str, str]], crit: list[str]
) -> dict[str, Any]:
    done = sum(1 for n in nodes if n["phase"] in ("Completed", "Skipped"))
    flow = row(ns, name, "Running", done, len(nodes))
    flow.update({"reason": None, "message": None, "criticalPath": crit, "resourceVersion": "100"})
    return {
        "flow": flow,
        "nodes": nodes,
        "edges": [{"source": s, "target": t, "label": ""} for s, t in edges],
        "readOnly": False,
    }


def row(ns: str, name: str, phase: str, done: int, total: int, **kw: Any) -> dict[str, Any]:
    r = {
        "namespace": ns,
        "name": name,
        "uid": hashlib.md5(f"{ns}/{name}".encode()).hexdigest(),
        "phase": phase,
        "done": done,
        "total": total,
        "created": ts(95),
        "started": ts(90),
        "finished": None,
        "labels": {"team": "ml"},
        "eta": None,
        "etaSeconds": 1260.0 if phase == "Running" else None,
    }
    r.update(kw)
    return r


GRAPHS: dict[str, dict[str, Any]] = {"default/demo": demo()}
ROWS = [
    GRAPHS["default/demo"]["flow"],
    row("default", "nightly-etl", "Completed", 12, 12, finished=ts(3), etaSeconds=None),
    row("default", "sweep-lr", "Failed", 7, 12, finished=ts(40), etaSeconds=None),
    row("research", "ablation-a", "Pending", 0, 5, started=None, etaSeconds=None),
    row("research", "ablation-b", "", 0, 3, started=None, etaSeconds=None, labels={}),
    row("prod", "release-2026-12", "Terminated", 3, 9, finished=ts(60), etaSeconds=None),
]


def get_graph(ns: str, name: str) -> dict[str, Any] | None:
    key = f"{ns}/{name}"
    m = re.fullmatch(r"(big|recent|layers|chain)(\d+)", name)
    if key not in GRAPHS and m:
        GRAPHS[key] = big(m.group(1), int(m.group(2)))
    return GRAPHS.get(key)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    read_only = False
    no_auth = False

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle_one_request(self) -> None:
        # a browser that leaves mid-answer (navigation, a test's end) is no error
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def head(self, code: int, ctype: str, length: int | None = None, **extra: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-cache")
        for k, v in extra.items():
            self.send_header(k.replace("_", "-"), v)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def json(self, code: int, body: Any, **extra: str) -> None:
        data = json.dumps(body).encode()
        self.head(code, "application/json", len(data), **extra)
        self.wfile.write(data)

    def status(self, code: int, message: str) -> None:
        self.json(code, {"kind": "Status", "apiVersion": "v1", "code": code, "message": message})

    def authed(self) -> bool:
        if self.no_auth:
            return True
        cookie = self.headers.get("Cookie", "")
        bearer = self.headers.get("Authorization", "")
        return f"{COOKIE}={SESSION}" in cookie or bearer == f"Bearer {TOKEN}"

    def do_GET(self) -> None:
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        p = u.path
        if p == "/" or p.startswith("/ui/static/"):
            f = STATIC / ("index.html" if p == "/" else p.removeprefix("/ui/static/"))
            if not f.resolve().is_relative_to(STATIC) or not f.is_file():
                return self.status(404, "not found")
            data = f.read_bytes()
            self.head(200, TYPES.get(f.suffix, "application/octet-stream"), len(data))
            self.wfile.write(data)
            return
        if not p.startswith("/ui/api/"):
            return self.status(404, "not found")
        if not self.authed():
            return self.status(401, "Unauthorized")
        if p == "/ui/api/session":
            return self.json(
                200, {"readOnly": self.read_only, "namespaces": None, "host": "server"}
            )
        if p == "/ui/api/flows":
            ns = q.get("namespace", "")
            return self.json(200, {"flows": [r for r in ROWS if not ns or r["namespace"] == ns]})
        if p == "/ui/api/stream":
            return self.stream(q.get("namespace", ""), q.get("flow", ""))
        m = re.fullmatch(r"/ui/api/namespaces/([^/]+)/pods/([^/]+)/log", p)
        if m:
            return self.log(unquote(m.group(2)), q)
        m = re.fullmatch(
            r"/ui/api/namespaces/([^/]+)/jobflows/([^/]+)(/entries/([^/]+)(/items)?)?", p
        )
        if not m:
            return self.status(404, "not found")
        g = get_graph(unquote(m.group(1)), unquote(m.group(2)))
        if g is None:
            return self.status(404, f'jobflows.flow.volcano.sh "{m.group(2)}" not found')
        if not m.group(3):
            return self.json(200, dict(g, readOnly=self.read_only))
        entry = unquote(m.group(4))
        n = next((x for x in g["nodes"] if x["id"] == entry), None)
        if n is None:
            return self.status(404, f'entry "{entry}" not found')
        if m.group(5):
            return self.items(n, int(q.get("offset", 0)), min(int(q.get("limit", 200)), 1000))
        return self.json(200, detail(n))

    def items(self, n: dict[str, Any], offset: int, limit: int) -> None:
        counts = n["items"] or {"done": 0, "total": 0}
        total = counts["total"]
        out = []
        for i in range(offset, min(total, offset + limit)):
            phase = (
                "Completed"
                if i < counts["done"]
                else ("Running" if i < counts["done"] + 8 else "Pending")
            )
            out.append(
                {
                    "index": i,
                    "job": f"{n['label']}-{i}",
                    "phase": phase,
                    "started": ts(20) if phase != "Pending" else None,
                    "finished": ts(19) if phase == "Completed" else None,
                }
            )
        self.json(200, {"total": total, "items": out})

    def log(self, pod: str, q: dict[str, str]) -> None:
        self.head(200, "text/plain; charset=utf-8", Transfer_Encoding="chunked")
        try:
            if q.get("follow"):
                for i in range(600):
                    self.chunk(
                        f"{datetime.now(UTC).isoformat()} {pod}: step {i} loss={1 / (i + 2):.4f}\n"
                    )
                    time.sleep(1)
            else:
                tail = int(q.get("tailLines", 200))
                self.chunk("".join(f"line {i} of {pod}: epoch {i // 10} ok\n" for i in range(tail)))
            self.chunk("")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def stream(self, ns: str, flow: str) -> None:
        self.head(200, "text/event-stream", Transfer_Encoding="chunked")
        try:
            self.chunk('event: hello\ndata: {"resourceVersion": "100"}\n\n')
            g = get_graph(ns, flow) if flow else None
            rnd = random.Random()
            for _ in range(1800):
                time.sleep(1)
                if g:
                    changed = []
                    # demo: only its `for` node and retry-flaky move (tests click the others)
                    pool = (
                        g["nodes"]
                        if flow != "demo"
                        else [n for n in g["nodes"] if n["id"] in ("train-shards", "retry-flaky")]
                    )
                    for n in rnd.sample(pool, min(3, len(pool))):
                        if n["kind"] == "for" and n["items"]:
                            n["items"]["done"] = min(n["items"]["total"], n["items"]["done"] + 37)
                            changed.append({"id": n["id"], "items": n["items"]})
                            continue
                        n["phase"] = rnd.choice(
                            PHASES if flow != "demo" else ["Backoff", "Running"]
                        )
                        changed.append(
                            {
                                k: n[k]
                                for k in (
                                    "id",
                                    "phase",
                                    "reason",
                                    "items",
                                    "critical",
                                    "started",
                                    "finished",
                                )
                            }
                        )
                    f = g["flow"]
                    frame = {
                        "namespace": ns,
                        "name": flow,
                        "phase": f["phase"],
                        "eta": None,
                        "etaSeconds": f["etaSeconds"],
                        "criticalPath": f["criticalPath"],
                        "nodes": changed,
                    }
                    self.chunk(f"event: nodes\ndata: {json.dumps(frame)}\n\n")
                else:
                    r = rnd.choice(ROWS)
                    if r["phase"] == "Running" and r["done"] < r["total"]:
                        r["done"] += 1
                    self.chunk(f"event: row\ndata: {json.dumps(r)}\n\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self) -> None:
        u = urlparse(self.path)
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        if u.path == "/ui/login":
            token = json.loads(body or b"{}").get("token")
            if token != TOKEN:
                return self.status(401, "invalid token")
            self.head(
                204,
                "text/plain",
                0,
                Set_Cookie=f"{COOKIE}={SESSION}; HttpOnly; SameSite=Strict; Path=/",
            )
            return
        if u.path == "/ui/logout":
            self.head(204, "text/plain", 0, Set_Cookie=f"{COOKIE}=; Max-Age=0; Path=/")
            return
        if not self.authed():
            return self.status(401, "Unauthorized")
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
            return self.status(415, "Content-Type must be application/json")
        m = re.fullmatch(
            r"/ui/api/namespaces/([^/]+)/jobflows/([^/]+)/(stop|retry|resubmit)", u.path
        )
        if not m:
            return self.status(404, "not found")
        if self.read_only:
            return self.status(403, "the dashboard is read-only (--read-only)")
        name, verb = unquote(m.group(2)), m.group(3)
        if verb == "retry" and name == "demo":
            return self.status(409, f"jobflow {name} is Running: retry needs a Failed flow")
        if verb == "resubmit":
            return self.json(
                200, {"message": f"jobflow.flow.volcano.sh/{name}-2 created", "name": f"{name}-2"}
            )
        return self.json(200, {"message": f"jobflow.flow.volcano.sh/{name} stopping"})


def detail(n: dict[str, Any]) -> dict[str, Any]:
    jobs = []
    if n["kind"] != "for" and n["phase"] not in ("Waiting", "Pending", "Skipped", ""):
        name = f"demo-{n['label']}"
        jobs.append(
            {
                "name": name,
                "phase": n["phase"],
                "started": n["started"],
                "finished": n["finished"],
                "retryCount": 1,
                "conditions": [
                    {
                        "type": "Running",
                        "status": "True",
                        "reason": "",
                        "message": "",
                        "time": ts(29),
                    },
                ],
                "attempts": [
                    {
                        "attempt": 1,
                        "phase": "Failed",
                        "started": ts(30),
                        "finished": ts(29.5),
                        "exitCode": 137,
                        "reason": "OOMKilled",
                    },
                    {
                        "attempt": 2,
                        "phase": n["phase"],
                        "started": ts(29),
                        "finished": n["finished"],
                        "exitCode": None,
                        "reason": None,
                    },
                ],
                "pods": [
                    {
                        "name": f"{name}-worker-0",
                        "phase": "Running",
                        "node": "node-a",
                        "containers": ["main"],
                        "started": ts(29),
                        "finished": None,
                    },
                    {
                        "name": f"{name}-worker-1",
                        "phase": "Running",
                        "node": "node-b",
                        "containers": ["main", "sidecar"],
                        "started": ts(29),
                        "finished": None,
                    },
                ],
                "outputs": {"model-uri": "s3://bucket/models/42", "accuracy": "0.913"},
            }
        )
    events = [
        {
            "type": "Normal",
            "reason": "Created",
            "message": "created vcjob",
            "time": ts(30),
            "object": f"vcjob/demo-{n['label']}",
        },
        {
            "type": "Warning",
            "reason": "BackOff",
            "message": "container main restarted (OOMKilled)",
            "time": ts(29.5),
            "object": "pod/x",
        },
    ]
    return {"entry": n, "vcjobs": jobs, "events": events, "items": n["items"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8091)
    ap.add_argument("--read-only", action="store_true")
    ap.add_argument("--no-auth", action="store_true")
    a = ap.parse_args()
    Handler.read_only = a.read_only
    Handler.no_auth = a.no_auth
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    print(f"http://127.0.0.1:{a.port}/#token={TOKEN}", flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.shutdown()


if __name__ == "__main__":
    main()
