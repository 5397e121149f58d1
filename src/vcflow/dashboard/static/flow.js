// Flow page: header (phase, progress, ETA, critical path), actions, the DAG and the node panel.
import {getJSON, postJSON, openStream, flowPath, enc} from "./api.js";
import {h, clear, badge, progress, duration, eta, fmtTime, phaseClass} from "./util.js";
import {setConn, announce} from "./live.js";
import {drawGraph} from "./graph.js";
import {openPanel} from "./panel.js";

const LEGEND = ["Completed", "Running", "Pending", "Waiting", "Backoff", "Failed",
  "Terminated", "Skipped", ""];

export function showFlow(main, route, session) {
  const {ns, name} = route;
  document.title = `${name} · vcflow`;
  const base = flowPath(ns, name);
  let data = null, graph = null, panel = null, es = null, closed = false;

  const head = h("div", {class: "flow-head"});
  const msg = h("p", {id: "action-msg", class: "msg", role: "status", "aria-live": "polite"});
  const graphBox = h("div", {id: "graph", class: "graph", "aria-label": "Flow graph"});
  const status = h("p", {class: "muted graph-status", role: "status"}, "Loading…");
  const panelBox = h("aside", {id: "panel", class: "panel", hidden: true});
  const legend = h("ul", {class: "legend", "aria-label": "Legend"},
    ...LEGEND.map((p) => h("li", null, h("span", {class: "swatch " + phaseClass(p), "aria-hidden": "true"}), p || "Unknown")),
    h("li", null, h("span", {class: "swatch dashed", "aria-hidden": "true"}), "when / switch"),
    h("li", null, h("span", {class: "swatch double", "aria-hidden": "true"}), "on exit"),
    h("li", null, h("span", {class: "swatch crit", "aria-hidden": "true"}), "critical path"));
  const zoomBar = h("div", {class: "zoom", role: "toolbar", "aria-label": "Zoom"},
    h("button", {type: "button", "data-zoom": "out", "aria-label": "Zoom out"}, "−"),
    h("button", {type: "button", "data-zoom": "in", "aria-label": "Zoom in"}, "+"),
    h("button", {type: "button", "data-zoom": "fit"}, "Fit"),
    h("button", {type: "button", "data-zoom": "1"}, "100%"));
  zoomBar.addEventListener("click", (ev) => {
    const b = ev.target.closest("button");
    if (!b || !graph) return;
    const z = b.dataset.zoom;
    if (z === "fit") graph.zoom("fit");
    else if (z === "1") graph.zoom("reset");
    else graph.zoom(z === "in" ? 1.25 : 0.8);
  });

  main.append(
    h("nav", {class: "crumbs", "aria-label": "Breadcrumb"},
      h("a", {href: "#/"}, "JobFlows"), " / ", h("span", null, ns), " / ",
      h("span", {"aria-current": "page"}, name)),
    head, msg,
    h("div", {class: "flow-body"},
      h("section", {class: "graph-wrap", "aria-label": "Entries"},
        h("div", {class: "graph-tools"}, legend, zoomBar), status, graphBox),
      panelBox));

  // The title row (with the action buttons) is made once; updates redraw only
  // the badge and the facts, so a focused button keeps its focus.
  const badgeSlot = h("span");
  const facts = h("dl", {class: "facts"});
  const flowMsg = h("p", {class: "flow-msg"});
  let headMade = false;

  function renderHead() {
    const f = data.flow;
    if (!headMade) {
      headMade = true;
      const actions = h("div", {class: "actions"});
      if (!data.readOnly && !session.readOnly) {
        actions.append(
          h("button", {type: "button", id: "action-stop", class: "danger"}, "Stop"),
          h("button", {type: "button", id: "action-retry"}, "Retry"),
          h("button", {type: "button", id: "action-resubmit"}, "Resubmit"));
      }
      clear(head).append(h("div", {class: "title-row"}, h("h1", null, name), badgeSlot, actions),
        facts, flowMsg);
    }
    badgeSlot.replaceChildren(badge(f.phase));
    const crit = (f.criticalPath || []);
    facts.replaceChildren(
      fact("Progress", progress(f.done, f.total)),
      fact("Started", f.started ? fmtTime(f.started) : "—"),
      fact("Duration", duration(f.started, f.finished) || "—"),
      fact("ETA", eta(f) || (f.finished ? "finished" : "—")),
      fact("Critical path", crit.length ? crit.join(" → ") : "—", "crit-path"));
    flowMsg.textContent = [f.reason, f.message].filter(Boolean).join(": ");
    flowMsg.hidden = !flowMsg.textContent;
  }

  function fact(k, v, cls) {
    return h("div", {class: "fact " + (cls || "")}, h("dt", null, k), h("dd", null, v));
  }

  head.addEventListener("click", async (ev) => {
    const b = ev.target.closest("button[id^=action-]");
    if (!b) return;
    const verb = b.id.slice("action-".length);
    if (verb === "stop" && !confirm(`Stop JobFlow ${ns}/${name}? Its running jobs are terminated.`)) return;
    const body = verb === "stop" ? {} : verb === "retry" ? {restartSuccessful: false} : {name: null};
    b.disabled = true;
    msg.className = "msg";
    msg.textContent = `${verb}…`;
    try {
      const res = await postJSON(`${base}/${verb}`, body);
      msg.textContent = (res && res.message) || `${verb}: done`;
      msg.classList.add("ok");
      if (verb === "resubmit" && res && res.name) {
        msg.append(" ", h("a", {href: `#/flows/${enc(ns)}/${enc(res.name)}`}, `Open ${res.name}`));
      }
    } catch (e) {
      msg.textContent = e.message;
      msg.classList.add("error");
    } finally {
      b.disabled = false;
    }
  });

  function openEntry(id) {
    if (!data) return;
    const q = id ? `?entry=${enc(id)}` : "";
    const want = `#/flows/${enc(ns)}/${enc(name)}${q}`;
    if (location.hash !== want) location.hash = want;   // routes back into update()
    else showPanel(id);
  }

  function showPanel(id) {
    if (panel) { panel.close(); panel = null; }
    if (graph) graph.selected(id);
    if (!id) { panelBox.hidden = true; clear(panelBox); return; }
    const node = data.nodes.find((n) => n.id === id);
    if (!node) { panelBox.hidden = true; return; }
    panelBox.hidden = false;
    panel = openPanel(panelBox, base, ns, node, () => {
      openEntry(null);
      if (graph) graph.focusNode(id);
    });
  }

  document.addEventListener("keydown", onEscape);
  function onEscape(ev) {
    if (ev.key === "Escape" && !panelBox.hidden) {
      const id = route.entry;
      openEntry(null);
      if (graph && id) graph.focusNode(id);
    }
  }

  async function load() {
    status.textContent = "Loading…";
    status.hidden = false;
    try {
      data = await getJSON(base);
    } catch (e) {
      status.textContent = e.message;
      status.classList.add("error");
      return;
    }
    if (closed) return;
    renderHead();
    status.textContent = `Laying out ${data.nodes.length} entries…`;
    // Let the message paint before a long layout blocks the thread.
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    if (closed) return;
    graph = drawGraph(graphBox, data, openEntry);
    status.hidden = true;
    graphBox.dataset.layoutMs = graph.layoutMs.toFixed(0);
    // Big graphs: start where the action is (critical path, else a running entry).
    const start = (data.flow.criticalPath || [])[0] ||
      (data.nodes.find((n) => n.phase === "Running") || data.nodes[0] || {}).id;
    if (start && !route.entry) graph.reveal(start);
    requestAnimationFrame(() => {
      document.documentElement.dataset.painted = "1";
      window.vcflowPaint = performance.now();
    });
    if (route.entry) { showPanel(route.entry); graph.reveal(route.entry); }
  }

  function onNodes(d) {
    if (!data || d.namespace !== ns || d.name !== name) return;
    const f = data.flow;
    for (const k of ["phase", "eta", "etaSeconds", "criticalPath"]) if (k in d) f[k] = d[k];
    if (!graph) return;
    const changes = [];
    for (const delta of d.nodes || []) {
      const old = graph.update(delta);
      const n = data.nodes.find((x) => x.id === delta.id);
      if (n) Object.assign(n, delta);
      if (old !== undefined && delta.phase) changes.push(`${delta.id} ${delta.phase}`);
    }
    if (d.criticalPath) graph.setCriticalPath(d.criticalPath);
    renderHead();
    if (changes.length) announce(changes.join(", "));
    if (panel && d.nodes && d.nodes.some((x) => x.id === route.entry)) panel.refresh();
  }

  function onRow(r) {
    if (!data || r.namespace !== ns || r.name !== name) return;
    const old = data.flow.phase;
    Object.assign(data.flow, r);
    renderHead();
    if (old !== r.phase && r.phase) announce(`Flow ${name}: ${r.phase}`);
  }

  async function reload() {
    if (panel) { panel.close(); panel = null; }
    graph = null;
    clear(graphBox);
    await load();
  }

  // Frames carry changes since the stream's `hello`. The graph is read at once,
  // alongside the stream, for a fast first paint; once both the graph is drawn
  // and `hello` has come, one re-read (resync, no new layout) catches what
  // changed between the two. Frames before the graph is drawn wait in `early`.
  // A later `hello` (EventSource reconnected) resyncs the same way.
  let hello = false, resyncDue = false;
  const early = [];
  es = openStream({namespace: ns, flow: name}, {
    hello: () => {
      hello = true;
      if (graph) resync(); else resyncDue = true;
    },
    nodes: (d) => (graph ? onNodes(d) : early.push(d)),
    row: onRow,
    reload,
    deleted: (d) => {
      if (d.namespace !== ns || d.name !== name) return;
      msg.className = "msg error";
      msg.textContent = `JobFlow ${ns}/${name} was deleted.`;
      announce(msg.textContent);
    },
  }, setConn);
  load().then(flush);

  function flush() {
    if (!graph) return;
    for (const d of early.splice(0)) onNodes(d);
    if (resyncDue && hello) { resyncDue = false; resync(); }
  }

  // Apply a fresh read as node updates; a different node set is a reload.
  async function resync() {
    let fresh;
    try { fresh = await getJSON(base); } catch (_) { return; }
    if (closed || !graph) return;
    const ids = (g) => g.nodes.map((n) => n.id).sort().join("\n");
    if (ids(fresh) !== ids(data)) { reload(); return; }
    onRow(fresh.flow);
    onNodes({namespace: ns, name, criticalPath: fresh.flow.criticalPath, nodes: fresh.nodes.filter((n) => {
      const old = data.nodes.find((x) => x.id === n.id);
      return !old || old.phase !== n.phase || JSON.stringify(old.items) !== JSON.stringify(n.items) ||
        old.critical !== n.critical || old.reason !== n.reason;
    })});
  }

  const tick = setInterval(() => { if (data) renderHead(); }, 15000);

  return {
    update(r) { route = r; showPanel(r.entry); },
    close() {
      closed = true;
      if (es) es.close();
      if (panel) panel.close();
      clearInterval(tick);
      document.removeEventListener("keydown", onEscape);
      setConn("");
    },
  };
}
