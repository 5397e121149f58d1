// Node panel: one entry's vcjobs, pods, conditions, attempts, outputs, events,
// a per-pod log (tail 200, then Follow streams with fetch + ReadableStream) and,
// for a `for` entry, its items paged 200 at a time.
import {getJSON, enc} from "./api.js";
import {h, clear, badge, fmtTime, duration} from "./util.js";

const PAGE = 200;
const LOG_MAX = 2_000_000;   // characters kept in the log view (old text is dropped)

export function openPanel(box, base, ns, node, onClose) {
  const entryPath = `${base}/entries/${enc(node.id)}`;
  const ctl = new AbortController();
  let log = null;            // {abort()} of the log view in use
  let refreshTimer = null;
  let logClosed = false;     // the user closed the log: no automatic one again

  box.setAttribute("role", "region");
  box.setAttribute("aria-label", `entry ${node.id}`);
  const body = h("div", {class: "panel-body"}, h("p", {class: "muted"}, "Loading…"));
  const closeBtn = h("button", {type: "button", class: "close", "aria-label": "Close panel"}, "×");
  closeBtn.addEventListener("click", onClose);
  clear(box).append(h("div", {class: "panel-head"}, h("h2", null, node.label || node.id), closeBtn), body);

  async function load() {
    let d;
    try {
      d = await getJSON(entryPath, ctl.signal);
    } catch (e) {
      if (e.name !== "AbortError") clear(body).append(h("p", {class: "msg error", role: "alert"}, e.message));
      return;
    }
    render(d);
  }

  function render(d) {
    const e = d.entry || node;
    const keepLog = body.querySelector("#log");
    const parts = [
      h("dl", {class: "kv"},
        kv("Phase", badge(e.phase)), kv("Kind", e.kind || "job"), kv("Template", e.template || "—"),
        e.reason ? kv("Reason", e.reason) : null,
        kv("Started", fmtTime(e.started) || "—"), kv("Finished", fmtTime(e.finished) || "—"),
        kv("Duration", duration(e.started, e.finished) || "—")),
    ];
    if (d.items || e.items) parts.push(itemsSection(d.items || e.items));
    for (const j of d.vcjobs || []) parts.push(jobSection(j));
    if (!(d.vcjobs || []).length && !(d.items || e.items)) parts.push(h("p", {class: "muted"}, "No vcjob yet."));
    parts.push(eventsSection(d.events || []));
    clear(body).append(...parts);
    // A refresh keeps an open log view as it is (and its stream running).
    if (keepLog) {
      const slot = body.querySelector(`.log-slot[data-pod="${CSS.escape(keepLog.dataset.pod)}"]`);
      if (slot) slot.replaceWith(keepLog);
      else if (log) { log.abort(); log = null; }
    }
    // The first pod's log shows at once: it is what one opens an entry for.
    if (!body.querySelector("#log") && !logClosed) {
      const li = body.querySelector("ul.pods > li");
      if (li) showLog(li, li.dataset.pod, li.dataset.container);
    }
  }

  function kv(k, v) {
    return h("div", null, h("dt", null, k), h("dd", null, v));
  }

  function jobSection(j) {
    const sec = h("section", {class: "job", "aria-label": `vcjob ${j.name}`},
      h("h3", null, "vcjob ", h("code", null, j.name), " ", badge(j.phase)),
      h("dl", {class: "kv"}, kv("Started", fmtTime(j.started) || "—"), kv("Finished", fmtTime(j.finished) || "—"),
        kv("Retries", String(j.retryCount ?? 0))));
    if ((j.attempts || []).length) {
      sec.append(h("h4", null, "Attempts"), table(["#", "Phase", "Started", "Finished", "Exit", "Reason"],
        j.attempts.map((a) => [String(a.attempt), badge(a.phase), fmtTime(a.started), fmtTime(a.finished),
          a.exitCode === null || a.exitCode === undefined ? "" : String(a.exitCode), a.reason || ""])));
    }
    if ((j.conditions || []).length) {
      sec.append(h("h4", null, "Conditions"), table(["Type", "Status", "Reason", "Message", "Time"],
        j.conditions.map((c) => [c.type, c.status, c.reason || "", c.message || "", fmtTime(c.time)])));
    }
    const outs = Object.entries(j.outputs || {});
    if (outs.length) {
      sec.append(h("h4", null, "Outputs"), h("dl", {class: "kv outputs"}, ...outs.map(([k, v]) => kv(k, h("code", null, v)))));
    }
    if ((j.pods || []).length) {
      sec.append(h("h4", null, "Pods"));
      const ul = h("ul", {class: "pods"});
      for (const p of j.pods) {
        const containers = p.containers && p.containers.length ? p.containers : [""];
        const li = h("li", {dataset: {pod: p.name, container: containers[0]}}, h("div", {class: "pod-line"}, h("code", null, p.name), " ", badge(p.phase),
          p.node ? h("span", {class: "muted"}, ` on ${p.node}`) : "",
          h("span", {class: "muted"}, " ", duration(p.started, p.finished))));
        for (const c of containers) {
          const b = h("button", {type: "button", class: "small"}, `Log${containers.length > 1 ? " " + c : ""}`);
          b.addEventListener("click", () => showLog(li, p.name, c));
          li.firstChild.append(" ", b);
        }
        li.append(h("div", {class: "log-slot", dataset: {pod: p.name}}));
        ul.append(li);
      }
      sec.append(ul);
    }
    return sec;
  }

  function table(cols, rows) {
    return h("div", {class: "table-wrap"}, h("table", {class: "mini"},
      h("thead", null, h("tr", null, ...cols.map((c) => h("th", {scope: "col"}, c)))),
      h("tbody", null, ...rows.map((r) => h("tr", null, ...r.map((c) => h("td", null, c)))))));
  }

  function eventsSection(events) {
    const sec = h("section", {class: "events", "aria-label": "Events"}, h("h3", null, "Events"));
    if (!events.length) sec.append(h("p", {class: "muted"}, "No events."));
    else sec.append(table(["Type", "Reason", "Object", "Message", "Time"],
      events.map((e) => [h("span", {class: e.type === "Warning" ? "warn" : ""}, e.type), e.reason || "",
        e.object || "", e.message || "", fmtTime(e.time)])));
    return sec;
  }

  // A `for` entry's items, paged from .../items.
  function itemsSection(counts) {
    const sec = h("section", {class: "items", "aria-label": "Items"},
      h("h3", null, `Items ${counts.done}/${counts.total}`));
    const tbody = h("tbody");
    const more = h("button", {type: "button", class: "small"}, "Load more");
    const info = h("p", {class: "muted", role: "status"});
    let offset = 0;
    async function page() {
      more.disabled = true;
      try {
        const r = await getJSON(`${entryPath}/items?offset=${offset}&limit=${PAGE}`, ctl.signal);
        for (const it of r.items) {
          tbody.append(h("tr", {dataset: {index: String(it.index)}}, h("td", null, String(it.index)),
            h("td", null, h("code", null, it.job || "")), h("td", null, badge(it.phase)),
            h("td", null, duration(it.started, it.finished))));
        }
        offset += r.items.length;
        info.textContent = `${offset} of ${r.total} shown`;
        more.hidden = offset >= r.total || r.items.length === 0;
      } catch (e) {
        if (e.name !== "AbortError") info.textContent = e.message;
      } finally {
        more.disabled = false;
      }
    }
    more.addEventListener("click", page);
    sec.append(h("div", {class: "table-wrap items-list", tabindex: "0", role: "region", "aria-label": "items list"}, h("table", {class: "mini"},
      h("thead", null, h("tr", null, ...["#", "vcjob", "Phase", "Duration"].map((c) => h("th", {scope: "col"}, c)))),
      tbody)), info, more);
    page();
    return sec;
  }

  // The log view: one at a time, under its pod.
  function showLog(li, pod, container) {
    if (log) log.abort();
    const old = box.querySelector("#log");
    if (old) old.replaceWith(h("div", {class: "log-slot", dataset: {pod: old.dataset.pod}}));
    const pre = h("pre", {tabindex: "0"});   // focusable: it scrolls
    const follow = h("input", {type: "checkbox", id: "log-follow"});
    const st = h("span", {class: "muted", role: "status"});
    const hide = h("button", {type: "button", class: "small hide"}, "Hide");
    const view = h("div", {id: "log", class: "log", dataset: {pod}, role: "region", "aria-label": `log of ${pod}`},
      h("div", {class: "log-bar"}, h("strong", null, `${pod}${container ? " / " + container : ""}`),
        h("label", {for: "log-follow", class: "check"}, follow, " Follow"), st, hide),
      pre);
    hide.addEventListener("click", () => {
      if (lc) lc.abort();
      logClosed = true;
      log = null;
      view.replaceWith(h("div", {class: "log-slot", dataset: {pod}}));
    });
    li.querySelector(".log-slot").replaceWith(view);
    let lc = null;
    const path = (extra) => `/ui/api/namespaces/${enc(ns)}/pods/${enc(pod)}/log?` +
      new URLSearchParams({...(container ? {container} : {}), ...extra});

    async function stream(follows) {
      if (lc) lc.abort();
      lc = new AbortController();
      st.textContent = follows ? "following…" : "loading…";
      try {
        const res = await fetch(path(follows ? {tailLines: "0", follow: "1"} : {tailLines: "200"}),
          {credentials: "same-origin", signal: lc.signal});
        if (!res.ok) {
          let m = `${res.status}`;
          try { m = (await res.json()).message || m; } catch (_) { /* plain text */ }
          throw new Error(m);
        }
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        if (!follows) pre.textContent = "";
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          append(value);
        }
        st.textContent = follows ? "ended" : "";
        if (follows) follow.checked = false;
      } catch (e) {
        if (e.name !== "AbortError") st.textContent = e.message;
      }
    }

    function append(text) {
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.append(text);
      if (pre.textContent.length > LOG_MAX) pre.textContent = pre.textContent.slice(-LOG_MAX / 2);
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    }

    follow.addEventListener("change", () => {
      if (follow.checked) stream(true);
      else { if (lc) lc.abort(); st.textContent = ""; }
    });
    log = {abort() { if (lc) lc.abort(); }};
    stream(false);
  }

  load();
  closeBtn.focus({preventScroll: true});

  return {
    // SSE said this entry changed: refetch (coalesced to one request per second).
    refresh() {
      if (refreshTimer) return;
      refreshTimer = setTimeout(() => { refreshTimer = null; load(); }, 1000);
    },
    close() {
      ctl.abort();
      if (log) log.abort();
      clearTimeout(refreshTimer);
    },
  };
}
