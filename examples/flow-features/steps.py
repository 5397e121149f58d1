"""The steps of examples/flow-features/flow.yaml, one per subcommand. They share files in
./run/ (the directory `vcflow run` was run in, then run/): plain python3, no network but
this machine's loopback."""

from __future__ import annotations

import http.server
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

RUN = Path("run")
PORT_FILE = RUN / "serve.port"
STOP = RUN / "stop"


def prepare() -> None:
    RUN.mkdir(exist_ok=True)
    for stale in (PORT_FILE, STOP):
        stale.unlink(missing_ok=True)
    (RUN / "data.json").write_text(json.dumps({"rows": list(range(10))}))
    print("prepared 10 rows")


def serve() -> None:
    """Serve run/data.json on a free port; the port goes to run/serve.port once the server
    has warmed up (a second and a half: a client that comes at once finds no server yet)."""
    data = (RUN / "data.json").read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            print("served", self.path, flush=True)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    time.sleep(1.5)
    written = PORT_FILE.with_suffix(".tmp")
    written.write_text(str(server.server_address[1]))
    written.rename(PORT_FILE)
    print("serving on port", server.server_address[1], flush=True)
    end = time.monotonic() + 120
    while not STOP.exists():
        if time.monotonic() > end:
            sys.exit("nobody told the server to stop")
        time.sleep(0.05)
    server.shutdown()


def fetch() -> None:
    """Ask the server for the data: fails (exit 1) while it is not serving yet."""
    if not PORT_FILE.exists():
        sys.exit("the server is not serving yet")
    port = int(PORT_FILE.read_text())
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/data", timeout=5) as answer:
        rows = json.loads(answer.read())["rows"]
    (RUN / "fetched.json").write_text(json.dumps({"sum": sum(rows)}))
    print("fetched", len(rows), "rows")


def report() -> None:
    print("sum of the rows:", json.loads((RUN / "fetched.json").read_text())["sum"])
    STOP.touch()  # the server's work is done


def alert() -> None:
    print("fetch failed for good: look at its logs (vcflow logs --attempts)", file=sys.stderr)
    STOP.touch()


if __name__ == "__main__":
    {"prepare": prepare, "serve": serve, "fetch": fetch, "report": report, "alert": alert}[
        sys.argv[1]
    ]()
