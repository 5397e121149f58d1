// Small DOM and formatting helpers shared by the page modules.

// h("td", {class: "x", dataset: {flow: "a"}}, "text", child) -> element.
// Never sets inline style attributes (the CSP forbids them).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "dataset") Object.assign(el.dataset, v);
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

// Entry phases, plus flow (Succeed, Terminating) and pod (Succeeded) ones.
const PHASES = new Set(["Completed", "Running", "Pending", "Waiting", "Backoff",
  "Failed", "Terminated", "Aborted", "Skipped", "Succeed", "Succeeded", "Terminating"]);

// CSS class for a phase colour; unknown or empty phases share one class.
export function phaseClass(phase) {
  return "phase-" + (PHASES.has(phase) ? phase : "unknown");
}

export function phaseWord(phase) {
  return phase || "Unknown";
}

export function badge(phase) {
  return h("span", {class: "badge " + phaseClass(phase)}, phaseWord(phase));
}

// "3m 12s", "2h 5m", "4d 3h" — two units at most.
export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) return "";
  let s = Math.max(0, Math.round(seconds));
  const units = [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]];
  const parts = [];
  for (const [u, n] of units) {
    if (s >= n || (u === "s" && parts.length === 0)) {
      parts.push(Math.floor(s / n) + u);
      s %= n;
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

export function secondsSince(ts, now = Date.now()) {
  if (!ts) return null;
  return (now - Date.parse(ts)) / 1000;
}

export function age(ts) {
  const s = secondsSince(ts);
  return s === null ? "" : fmtDuration(s);
}

// Run time: started -> finished, or -> now while running.
export function duration(started, finished) {
  if (!started) return "";
  const end = finished ? Date.parse(finished) : Date.now();
  return fmtDuration((end - Date.parse(started)) / 1000);
}

export function eta(row) {
  if (row.finished) return "";
  if (row.etaSeconds !== null && row.etaSeconds !== undefined) return "in " + fmtDuration(row.etaSeconds);
  if (row.eta) return "in " + fmtDuration(-secondsSince(row.eta));
  return "";
}

export function fmtTime(ts) {
  if (!ts) return "";
  const d = new Date(ts);
  return isNaN(d) ? ts : d.toLocaleString();
}

// Progress "7/12" with a bar; the bar is an SVG-free <progress> (no inline style).
export function progress(done, total) {
  const wrap = h("span", {class: "progress"});
  const bar = h("progress", {max: String(total || 1), value: String(done || 0),
    "aria-label": `${done} of ${total} entries finished`});
  wrap.append(bar, h("span", {class: "progress-text"}, `${done}/${total}`));
  return wrap;
}
