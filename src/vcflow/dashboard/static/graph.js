// The DAG: laid out once by dagre (window.dagre, vendored), drawn as one SVG.
// Later updates touch only the classes and texts of the nodes they name; a
// `reload` from the server is the only thing that lays the graph out again.
import {phaseClass, phaseWord} from "./util.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_H = 46;
const CHAR_W = 7.4;          // ~13px system-ui; an estimate avoids measuring text (no reflow)
const MAX_LABEL = 32;        // longer names are cut with "…" (full name in aria-label)

// dagre's cost grows with nodes + dummy nodes (one per rank an edge crosses).
// Its default network-simplex ranker and its unbounded crossing-reduction
// sweeps take tens of seconds on 1,000 nodes (docs/dashboard.md has the
// figures), so bigger graphs get fastRanker below and, the biggest, dagre's
// initial DFS order without the sweeps.
export function layoutOptions(nodeCount, edgeCount) {
  const size = nodeCount + edgeCount;
  if (size <= 300) return {ranker: "network-simplex", order: "optimal"};
  if (size <= 1500) return {ranker: fastRanker, order: "optimal"};
  return {ranker: fastRanker, order: "initial"};
}

// A ranker for dagre's `ranker` option (a function of its internal graph):
// longest path from the sources, then nodes with at least as many outgoing as
// incoming edges are pulled right next to their successors, which shortens
// edges (fewer dummy nodes) the way network-simplex does, in linear time.
// Every edge keeps rank(w) - rank(v) >= minlen, as dagre requires.
export function fastRanker(g) {
  const nodes = g.nodes();
  const indeg = new Map();
  for (const v of nodes) indeg.set(v, g.inEdges(v).length);
  const order = [];
  const stack = nodes.filter((v) => indeg.get(v) === 0);
  while (stack.length) {                     // topological order (dagre made g acyclic)
    const v = stack.pop();
    order.push(v);
    for (const e of g.outEdges(v)) {
      indeg.set(e.w, indeg.get(e.w) - 1);
      if (indeg.get(e.w) === 0) stack.push(e.w);
    }
  }
  const rank = new Map();
  for (const v of order) {
    let r = 0;
    for (const e of g.inEdges(v)) r = Math.max(r, rank.get(e.v) + g.edge(e).minlen);
    rank.set(v, r);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const v = order[i], out = g.outEdges(v);
    if (!out.length || g.inEdges(v).length > out.length) continue;
    let m = Infinity;
    for (const e of out) m = Math.min(m, rank.get(e.w) - g.edge(e).minlen);
    if (m > rank.get(v)) rank.set(v, m);
  }
  for (const v of nodes) g.node(v).rank = rank.get(v);
}

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  if (attrs) for (const k in attrs) el.setAttribute(k, attrs[k]);
  return el;
}

function shortLabel(s) {
  return s.length > MAX_LABEL ? s.slice(0, MAX_LABEL - 1) + "…" : s;
}

export function subText(n) {
  let t = phaseWord(n.phase);
  if (n.items) t += ` · ${n.items.done}/${n.items.total}`;
  return t;
}

// Starts with the visible text (name, phase, items) so speech matches what is seen,
// then why the node waits (or was skipped or failed): the API's `reason`, which it
// gives only for nodes not Running or Completed.
export function ariaLabel(n) {
  let t = `${n.label || n.id}: ${phaseWord(n.phase)}`;
  if (n.items) t += ` · ${n.items.done}/${n.items.total} items done`;
  if (n.reason) t += ` — ${n.reason}`;
  if (n.kind === "when" || n.kind === "switch") t += `, ${n.kind}`;
  if (n.kind === "exit") t += ", on exit";
  if (n.critical) t += ", on the critical path";
  return t;
}

// The node's <title> (its hover tooltip): the full name, the phase and the reason, a line each.
export function titleText(n) {
  let t = `${n.label || n.id}\n${phaseWord(n.phase)}`;
  if (n.items) t += ` · ${n.items.done}/${n.items.total} items done`;
  if (n.reason) t += `\n${n.reason}`;
  return t;
}

function nodeClass(n, selected) {
  return `node ${phaseClass(n.phase)} kind-${n.kind || "job"}${n.critical ? " critical" : ""}` +
    (selected ? " selected" : "");
}

// A B-spline through dagre's edge points (d3's curveBasis): smooth, and unlike
// a curve through every point it never overshoots on long, steep edges.
function pathOf(pts) {
  const f = (v) => v.toFixed(1);
  if (pts.length < 3) return pts.map((p, i) => `${i ? "L" : "M"}${f(p.x)},${f(p.y)}`).join("");
  let x0 = pts[0].x, y0 = pts[0].y, x1 = pts[1].x, y1 = pts[1].y;
  let d = `M${f(x0)},${f(y0)}L${f((5 * x0 + x1) / 6)},${f((5 * y0 + y1) / 6)}`;
  const bezier = (x, y) => {
    d += `C${f((2 * x0 + x1) / 3)},${f((2 * y0 + y1) / 3)} ${f((x0 + 2 * x1) / 3)},${f((y0 + 2 * y1) / 3)} ` +
      `${f((x0 + 4 * x1 + x) / 6)},${f((y0 + 4 * y1 + y) / 6)}`;
    x0 = x1; y0 = y1; x1 = x; y1 = y;
  };
  for (let i = 2; i < pts.length; i++) bezier(pts[i].x, pts[i].y);
  bezier(x1, y1);
  return d + `L${f(x1)},${f(y1)}`;
}

// dagre's crossing sweeps also reorder when it gains nothing (ties flip with
// its left/right bias): b and c of a diamond a->{b,c}->d come out as c above b.
// Keep dagre's first order (the spec's order, depth first) unless the sweeps
// really cross fewer edges. (A dagre customOrder: `order` is dagre's own.)
function stableOrder(lg, order) {
  order(lg, {disableOptimalOrderHeuristic: true});
  const first = new Map(lg.nodes().map((v) => [v, lg.node(v).order]));
  const before = crossings(lg);
  order(lg, {});
  if (crossings(lg) >= before) for (const [v, o] of first) lg.node(v).order = o;
}

// Edge crossings between adjacent ranks (dagre's internal edges span one rank).
function crossings(lg) {
  const byRank = new Map();
  for (const e of lg.edges()) {
    const a = lg.node(e.v), b = lg.node(e.w);
    const r = Math.min(a.rank, b.rank);
    const pair = a.rank < b.rank ? [a.order, b.order] : [b.order, a.order];
    if (!byRank.has(r)) byRank.set(r, []);
    byRank.get(r).push(pair);
  }
  let n = 0;
  for (const list of byRank.values()) {
    list.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        if (list[j][0] > list[i][0] && list[j][1] < list[i][1]) n++;
      }
    }
  }
  return n;
}

function criticalPairs(path) {
  const s = new Set();
  for (let i = 0; i + 1 < (path || []).length; i++) s.add(path[i] + "\u0000" + path[i + 1]);
  return s;
}

// Lay out and draw; returns a handle for updates and keyboard moves.
// onOpen(id) is called on click, Enter or Space on a node.
export function drawGraph(container, data, onOpen) {
  const dagre = window.dagre;
  const t0 = performance.now();
  const opts = layoutOptions(data.nodes.length, data.edges.length);
  const g = new dagre.graphlib.Graph();
  g.setGraph({rankdir: "LR", nodesep: 18, ranksep: 56, edgesep: 10, marginx: 20, marginy: 20,
    ranker: opts.ranker});
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of data.nodes) {
    // Widest of the name (bold) and the phase line (smaller), estimated from lengths;
    // the phase line at its longest, as updates change it but never the layout.
    const longest = subText({phase: "Terminated", items: n.items && {done: n.items.total, total: n.items.total}});
    const chars = Math.max(Math.min(MAX_LABEL, (n.label || n.id).length), longest.length * 0.9 + 2);
    const w = Math.max(120, chars * CHAR_W + 26);
    g.setNode(n.id, {width: Math.round(w), height: NODE_H});
  }
  for (const e of data.edges) if (g.hasNode(e.source) && g.hasNode(e.target)) g.setEdge(e.source, e.target);
  dagre.layout(g, opts.order === "initial" ? {disableOptimalOrderHeuristic: true} : {customOrder: stableOrder});
  const tLayout = performance.now() - t0;

  const gw = Math.ceil(g.graph().width || 100), gh = Math.ceil(g.graph().height || 100);
  const root = svg("svg", {viewBox: `0 0 ${gw} ${gh}`, width: gw, height: gh, role: "group",
    "aria-label": `Graph of ${data.nodes.length} entries`, class: "dag"});
  const frag = document.createDocumentFragment();
  const defs = svg("defs");
  for (const [id, cls] of [["arrow", "arrow"], ["arrow-critical", "arrow critical"]]) {
    // userSpaceOnUse: the same arrow size whatever the stroke width
    const m = svg("marker", {id, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "9",
      markerHeight: "9", markerUnits: "userSpaceOnUse", orient: "auto-start-reverse", class: cls});
    m.append(svg("path", {d: "M0,0 L10,5 L0,10 z"}));
    defs.append(m);
  }
  frag.append(defs);

  const crit = criticalPairs(data.flow && data.flow.criticalPath);
  const edgeLayer = svg("g", {class: "edges", "aria-hidden": "true"});
  const edgeRefs = [];
  for (const e of g.edges()) {
    const isCrit = crit.has(e.v + "\u0000" + e.w);
    const p = svg("path", {d: pathOf(g.edge(e).points), class: isCrit ? "edge critical" : "edge",
      "marker-end": isCrit ? "url(#arrow-critical)" : "url(#arrow)"});
    p.dataset.source = e.v;
    p.dataset.target = e.w;
    edgeRefs.push(p);
    edgeLayer.append(p);
  }
  frag.append(edgeLayer);

  const nodeLayer = svg("g", {class: "nodes"});
  const refs = new Map();     // id -> {g, sub, title, node}
  const ranks = new Map();    // rank -> [ids by y], for Up/Down
  for (const n of data.nodes) {
    const L = g.node(n.id);
    const x = L.x - L.width / 2, y = L.y - L.height / 2;
    const el = svg("g", {class: nodeClass(n), id: "node-" + n.id, tabindex: "0", role: "button",
      "aria-label": ariaLabel(n), transform: `translate(${x.toFixed(1)},${y.toFixed(1)})`});
    el.dataset.id = n.id;
    el.dataset.phase = n.phase || "";
    el.dataset.kind = n.kind || "job";
    const title = svg("title");     // first child, as SVG asks
    title.textContent = titleText(n);
    el.append(title);
    el.append(svg("rect", {class: "box", width: L.width, height: L.height, rx: "6"}));
    if (n.kind === "exit") {
      el.append(svg("rect", {class: "box-inner", x: "3", y: "3", width: L.width - 6, height: L.height - 6, rx: "4"}));
    }
    // One <text>, two lines; the space between the tspans keeps the words apart
    // for assistive tech (the visible text must be part of the accessible name).
    const text = svg("text", {y: "19"});
    const label = svg("tspan", {class: "label", x: "12"});
    label.textContent = shortLabel(n.label || n.id);
    const sub = svg("tspan", {class: "sub", x: "12", dy: "17"});
    sub.textContent = subText(n);
    text.append(label, " ", sub);
    el.append(text);
    nodeLayer.append(el);
    refs.set(n.id, {g: el, sub, title, node: {...n}});
    const r = L.rank ?? Math.round(L.x);
    if (!ranks.has(r)) ranks.set(r, []);
    ranks.get(r).push({id: n.id, y: L.y});
  }
  for (const list of ranks.values()) list.sort((a, b) => a.y - b.y);
  const rankOf = new Map();
  for (const [r, list] of ranks) list.forEach((it, i) => rankOf.set(it.id, {r, i}));
  frag.append(nodeLayer);
  root.append(frag);
  container.replaceChildren(root);

  // One listener for all nodes (delegation).
  root.addEventListener("click", (ev) => {
    const el = ev.target.closest("g.node");
    if (el) onOpen(el.dataset.id);
  });
  root.addEventListener("keydown", (ev) => {
    const el = ev.target.closest && ev.target.closest("g.node");
    if (!el) return;
    const id = el.dataset.id;
    let next = null;
    switch (ev.key) {
      case "Enter": case " ": ev.preventDefault(); onOpen(id); return;
      case "ArrowRight": next = nearest(g.successors(id), id); break;
      case "ArrowLeft": next = nearest(g.predecessors(id), id); break;
      case "ArrowUp": case "ArrowDown": {
        const pos = rankOf.get(id), list = ranks.get(pos.r);
        const it = list[pos.i + (ev.key === "ArrowUp" ? -1 : 1)];
        next = it ? it.id : null;
        break;
      }
      case "Home": next = data.nodes.length ? data.nodes[0].id : null; break;
      default: return;
    }
    ev.preventDefault();
    if (next) focusNode(next);
  });

  // Among successors/predecessors, the one closest in y to the current node.
  function nearest(ids, from) {
    if (!ids || !ids.length) return null;
    const y = g.node(from).y;
    return ids.reduce((best, v) => Math.abs(g.node(v).y - y) < Math.abs(g.node(best).y - y) ? v : best);
  }

  function focusNode(id) {
    const r = refs.get(id);
    if (!r) return;
    r.g.focus({preventScroll: true});
    r.g.scrollIntoView({block: "nearest", inline: "nearest"});
  }

  let scale = 1;
  let selectedId = null;
  function zoom(f) {
    if (f === "fit") scale = Math.min(1, (container.clientWidth - 4) / gw, (container.clientHeight - 4) / gh);
    else if (f === "reset") scale = 1;
    else scale = Math.max(0.1, Math.min(2, scale * f));
    root.setAttribute("width", Math.round(gw * scale));
    root.setAttribute("height", Math.round(gh * scale));
  }

  // Scroll the box (not the page) so node id shows, without reading element boxes.
  function reveal(id) {
    const L = g.node(id);
    if (!L) return;
    container.scrollLeft = Math.max(0, (L.x - L.width) * scale - 40);
    container.scrollTop = Math.max(0, L.y * scale - container.clientHeight / 2);
  }

  return {
    layoutMs: tLayout,
    reveal,
    options: opts,
    refs,
    zoom,
    focusNode,
    // Apply one SSE node delta; returns the old phase when the phase changed.
    update(delta) {
      const r = refs.get(delta.id);
      if (!r) return undefined;
      const n = r.node, oldPhase = n.phase;
      for (const k of ["phase", "reason", "items", "critical", "started", "finished"]) {
        if (k in delta) n[k] = delta[k];
      }
      r.g.setAttribute("class", nodeClass(n, delta.id === selectedId));
      r.g.dataset.phase = n.phase || "";
      r.g.setAttribute("aria-label", ariaLabel(n));
      r.sub.textContent = subText(n);
      r.title.textContent = titleText(n);
      r.g.dataset.changed = String(performance.now());
      return oldPhase !== n.phase ? oldPhase : undefined;
    },
    setCriticalPath(path) {
      const pairs = criticalPairs(path);
      for (const p of edgeRefs) {
        const c = pairs.has(p.dataset.source + "\u0000" + p.dataset.target);
        if (c !== p.classList.contains("critical")) {
          p.classList.toggle("critical", c);
          p.setAttribute("marker-end", c ? "url(#arrow-critical)" : "url(#arrow)");
        }
      }
    },
    selected(id) {
      const old = selectedId && refs.get(selectedId);
      if (old) old.g.classList.remove("selected");
      selectedId = id || null;
      const r = id && refs.get(id);
      if (r) r.g.classList.add("selected");
    },
  };
}
