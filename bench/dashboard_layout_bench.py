"""Time dagre's layout of 1,000-node graphs in headless Chromium, per layout option,
and the dashboard's time to first paint of a 1,000-node flow (fixture backend).

    python bench/dashboard_layout_bench.py [--chromium /usr/bin/chromium] [--slow]

--slow adds dagre's default network-simplex ranker (tens of seconds per graph).
"""

from __future__ import annotations

import argparse
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dashboard_fixture as fixture_server

# Same graph shapes as the fixture's bigN / layersN / chainN flows, built in the page.
BENCH_JS = """
async ([shapes, configs]) => {
  const {fastRanker} = await import("/ui/static/graph.js");
  function rng(seed) {
    return () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  }
  function build(shape, n, r) {
    const edges = [];
    for (let i = 1; i < n; i++) {
      let preds;
      if (shape === "chain") preds = [i - 1];
      else if (shape === "layers") {
        const L = Math.floor(i / 50);
        preds = L ? [0, 1].map(() => (L - 1) * 50 + Math.floor(r() * 50)) : [];
      }
      else if (shape === "recent") {
        const back = () => Math.max(0, i - 1 - Math.floor(r() * 40));
        preds = Array.from({length: 1 + Math.floor(r() * 3)}, back);
      }
      else preds = Array.from({length: 1 + Math.floor(r() * 3)}, () => Math.floor(r() * i));
      for (const p of preds) edges.push(["n" + p, "n" + i]);
    }
    return edges;
  }
  const out = [];
  for (const [name, ranker, sweeps] of configs) {
    const row = {name, ms: {}};
    for (const shape of shapes) {
      const g = new dagre.graphlib.Graph();
      g.setGraph({rankdir: "LR", nodesep: 18, ranksep: 56, edgesep: 10,
                  ranker: ranker === "fast" ? fastRanker : ranker});
      g.setDefaultEdgeLabel(() => ({}));
      for (let i = 0; i < 1000; i++) g.setNode("n" + i, {width: 150, height: 46});
      for (const [a, b] of build(shape, 1000, rng(42))) g.setEdge(a, b);
      const t = performance.now();
      dagre.layout(g, sweeps ? {} : {disableOptimalOrderHeuristic: true});
      row.ms[shape + " (" + g.edgeCount() + " edges)"] = Math.round(performance.now() - t);
    }
    out.push(row);
  }
  return out;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--slow", action="store_true")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), fixture_server.Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_port}"
    configs = [
        ["tight-tree", "tight-tree", True],
        ["longest-path", "longest-path", True],
        ["tight-tree, no sweeps", "tight-tree", False],
        ["fastRanker", "fast", True],
        ["fastRanker, no sweeps", "fast", False],
    ]
    if a.slow:
        configs.insert(0, ["network-simplex (default)", "network-simplex", True])
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=a.chromium, args=["--no-sandbox"])
        pg = b.new_page(viewport={"width": 1440, "height": 900})
        pg.goto(base + "/#token=" + fixture_server.TOKEN)
        pg.wait_for_selector("#flows tr")
        print("dagre.layout, 1,000 nodes, ms:")
        for row in pg.evaluate(BENCH_JS, [["big", "recent", "layers", "chain"], configs]):
            print(f"  {row['name']:<26}", "  ".join(f"{k}={v}" for k, v in row["ms"].items()))
        print("page, first paint of a 1,000-node flow (ms since navigation; layout ms):")
        for name in ("big1000", "recent1000", "layers1000", "chain1000"):
            for _ in range(3):
                pg.goto("about:blank")
                pg.goto(f"{base}/#/flows/default/{name}")
                pg.wait_for_selector(
                    'html[data-painted="1"] #graph svg g.node', state="attached", timeout=60000
                )
                paint = pg.evaluate("window.vcflowPaint")
                layout = pg.get_attribute("#graph", "data-layout-ms")
                print(f"  {name:<12} paint={paint:.0f} layout={layout}")
        b.close()
    srv.shutdown()


if __name__ == "__main__":
    main()
