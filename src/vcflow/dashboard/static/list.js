// List page: all JobFlows in scope, filters kept in the hash, rows live over SSE.
import {getJSON, openStream, enc} from "./api.js";
import {h, badge, progress, age, duration, eta} from "./util.js";
import {setConn, announce} from "./live.js";

export function showList(main, route, session) {
  document.title = "JobFlows · vcflow";
  const rows = new Map();   // "ns/name" -> {row, tr}
  const nsInput = h("input", {id: "filter-namespace", type: "search", value: route.namespace,
    placeholder: "all namespaces", autocomplete: "off", list: session.namespaces ? "ns-list" : null});
  const selInput = h("input", {id: "filter-label", type: "search", value: route.labelSelector,
    placeholder: "e.g. team=ml,stage!=dev", autocomplete: "off"});
  const form = h("form", {class: "filters", role: "search", "aria-label": "Filter JobFlows"},
    h("div", {class: "field"}, h("label", {for: "filter-namespace"}, "Namespace"), nsInput),
    h("div", {class: "field"}, h("label", {for: "filter-label"}, "Label selector"), selInput),
    h("button", {type: "submit"}, "Apply"));
  if (session.namespaces) {
    form.append(h("datalist", {id: "ns-list"}, ...session.namespaces.map((n) => h("option", {value: n}))));
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    if (nsInput.value.trim()) q.set("namespace", nsInput.value.trim());
    if (selInput.value.trim()) q.set("labelSelector", selInput.value.trim());
    location.hash = "#/" + (q.toString() ? "?" + q : "");
  });

  const tbody = h("tbody");
  const table = h("table", {id: "flows", class: "flows"},
    h("caption", {class: "sr-only"}, "JobFlows"),
    h("thead", null, h("tr", null, ...["Namespace", "Name", "Phase", "Progress", "Age", "Duration", "ETA"]
      .map((t) => h("th", {scope: "col"}, t)))),
    tbody);
  const msg = h("p", {class: "msg", role: "status"});
  const count = h("span", {class: "muted count"});
  main.append(h("div", {class: "page-head"}, h("h1", null, "JobFlows"), count), form, msg,
    h("div", {class: "table-wrap"}, table));

  // A row's cells are made once; updates change their contents in place, so a
  // focused link keeps its focus while rows update.
  function makeRow(r, key) {
    const tds = Array.from({length: 7}, () => h("td"));
    tds[1].className = "name";
    tds[0].textContent = r.namespace;
    tds[1].append(h("a", {href: `#/flows/${enc(r.namespace)}/${enc(r.name)}`}, r.name));
    const tr = h("tr", {dataset: {flow: key}}, ...tds);
    fill(tr, r);
    return tr;
  }

  function fill(tr, r) {
    const td = tr.children;
    tr.dataset.phase = r.phase || "";
    td[2].replaceChildren(badge(r.phase));
    td[3].replaceChildren(progress(r.done, r.total));
    tick1(tr, r);
  }

  // The cells that move with the clock.
  function tick1(tr, r) {
    const td = tr.children;
    td[4].textContent = age(r.created);
    td[4].title = r.created || "";
    td[5].textContent = duration(r.started, r.finished);
    td[6].textContent = eta(r);
    td[6].title = r.eta || "";
  }

  function put(r) {
    const key = `${r.namespace}/${r.name}`;
    if (!matches(r)) { drop(key); return; }
    const old = rows.get(key);
    if (old) {
      if (old.row.phase !== r.phase && r.phase) announce(`${key}: ${r.phase}`);
      fill(old.tr, r);
      old.row = r;
      return;
    }
    const tr = makeRow(r, key);
    rows.set(key, {row: r, tr});
    // keep the table sorted by namespace then name
    const after = [...rows.keys()].sort().indexOf(key);
    tbody.insertBefore(tr, tbody.children[after] || null);
    updateCount();
  }

  function drop(key) {
    const old = rows.get(key);
    if (!old) return;
    old.tr.remove();
    rows.delete(key);
    updateCount();
  }

  function updateCount() {
    count.textContent = `${rows.size} flow${rows.size === 1 ? "" : "s"}`;
    msg.textContent = rows.size ? "" : "No JobFlows match.";
  }

  // The stream sends every flow of the namespace; the label filter is applied here too.
  function matches(r) {
    if (route.namespace && r.namespace !== route.namespace) return false;
    return labelMatch(r.labels || {}, route.labelSelector);
  }

  const ctl = new AbortController();
  let es = null;
  // (the list's query; the stream filters by namespace only)
  const q = new URLSearchParams();
  if (route.namespace) q.set("namespace", route.namespace);
  if (route.labelSelector) q.set("labelSelector", route.labelSelector);
  // Stream first, list after its `hello` (rows are changes since then); rows
  // before the list arrives wait in `early`; a later `hello` (reconnected)
  // reads the list again.
  let loaded = false;
  const early = [];
  function load() {
    getJSON("/ui/api/flows" + (q.toString() ? "?" + q : ""), ctl.signal).then((data) => {
      const keep = new Set(data.flows.map((r) => `${r.namespace}/${r.name}`));
      for (const key of [...rows.keys()]) if (!keep.has(key)) drop(key);
      for (const r of data.flows) put(r);
      for (const r of early.splice(0)) put(r);
      loaded = true;
      updateCount();
      document.documentElement.dataset.painted = "1";
      window.vcflowPaint = performance.now();
    }).catch((e) => {
      if (e.name === "AbortError") return;
      msg.textContent = e.message;
      msg.classList.add("error");
    });
  }
  let hellos = 0;
  const helloTimer = setTimeout(() => { if (!hellos) { hellos = 1; load(); } }, 3000);
  es = openStream({namespace: route.namespace}, {
    hello: () => { hellos += 1; clearTimeout(helloTimer); load(); },
    row: (r) => (loaded ? put(r) : early.push(r)),
    deleted: (d) => drop(`${d.namespace}/${d.name}`),
  }, setConn);

  // Ages and durations move with the clock.
  const tick = setInterval(() => { for (const v of rows.values()) tick1(v.tr, v.row); }, 15000);

  return {close() { ctl.abort(); if (es) es.close(); clearInterval(tick); clearTimeout(helloTimer); setConn(""); }};
}

// Kubernetes label selector subset: k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b).
export function labelMatch(labels, selector) {
  if (!selector || !selector.trim()) return true;
  const reqs = selector.match(/([^,(]+(\([^)]*\))?)/g) || [];
  for (let req of reqs) {
    req = req.trim();
    if (!req) continue;
    let m;
    if ((m = req.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const vals = m[3].split(",").map((s) => s.trim());
      const has = m[1] in labels && vals.includes(labels[m[1]]);
      if ((m[2] === "in") !== has) return false;
    } else if ((m = req.match(/^(.+?)\s*(==|!=|=)\s*(.*)$/))) {
      const k = m[1].trim(), v = m[3].trim();
      if (m[2] === "!=" ? labels[k] === v : labels[k] !== v) return false;
    } else if (req.startsWith("!")) {
      if (req.slice(1).trim() in labels) return false;
    } else if (!(req in labels)) {
      return false;
    }
  }
  return true;
}
