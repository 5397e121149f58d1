"""`vcflow server` under requests with made-up HTTP methods (issue 21, item 3): a bare server
(`--runtime none --controllers off --insecure-no-auth`, so each request reaches the routes),
N requests on one kept-alive connection, each with a method of its own (`X000000`,
`X000001`, ...), then one scrape of `/metrics`. Prints the server's RSS before and after the
requests and after the scrape, and the scrape's size: before the verb label came from a
bounded set, each method made a series of its own.

Run: `.venv/bin/python bench/methods_bench.py [--requests N] [--src DIR]`; `--src` runs the
server of another checkout's `src` (e.g. `git archive 948b07c src | tar -x -C /tmp/before`,
then `--src /tmp/before/src`; a checkout that has no `--insecure-no-auth` serves plain HTTP
without a token by default, and gets no such flag). Figures go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

FLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"


def rss_mib(pid: int) -> float:
    found = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    assert found is not None
    return int(found.group(1)) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--src", help="the src directory of another checkout to run")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = args.src
    flags = ["--runtime", "none", "--controllers", "off", "--log-level", "warning"]
    probe = subprocess.run(
        [sys.executable, "-m", "vcflow", "server", "--help"], env=env, capture_output=True
    )
    if b"--insecure-no-auth" in probe.stdout:
        flags.append("--insecure-no-auth")
    with tempfile.TemporaryDirectory(prefix="vcflow-methods-bench-") as tmp:
        state = Path(tmp) / "state"
        command = [sys.executable, "-m", "vcflow", "server", "--state-dir", str(state)]
        proc = subprocess.Popen(
            [*command, "--port", "0", *flags],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while not (state / "server.json").exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("vcflow server did not start")
                time.sleep(0.1)
            url = json.loads((state / "server.json").read_text())["url"]
            with httpx.Client(base_url=url, timeout=30) as client:
                client.get(FLOWS)
                before = rss_mib(proc.pid)
                began = time.perf_counter()
                for i in range(args.requests):
                    client.request(f"X{i:06d}", FLOWS)
                took = time.perf_counter() - began
                after = rss_mib(proc.pid)
                scrape = len(client.get("/metrics").content)
                scraped = rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(
        f"{args.requests} made-up methods in {took:.1f} s: RSS {before:.0f} -> {after:.0f} MiB, "
        f"/metrics {scrape:,} bytes, RSS after the scrape {scraped:.0f} MiB"
    )


if __name__ == "__main__":
    main()
