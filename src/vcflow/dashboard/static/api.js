// HTTP helpers for /ui/api (cookie session), errors as Kubernetes Status.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function errorOf(res) {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body && body.message) message = body.message;
  } catch (_) { /* not JSON: keep the status line */ }
  return new ApiError(res.status, message);
}

// Every 401 after login means the session is gone: the app shows the login form.
let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

export async function getJSON(path, signal) {
  const res = await fetch(path, {credentials: "same-origin", signal,
    headers: {Accept: "application/json"}});
  if (res.status === 401) onUnauthorized();
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

export async function postJSON(path, body) {
  const res = await fetch(path, {method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", Accept: "application/json"},
    body: JSON.stringify(body)});
  if (res.status === 401 && !path.startsWith("/ui/login")) onUnauthorized();
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

export const enc = encodeURIComponent;

export function flowPath(ns, name) {
  return `/ui/api/namespaces/${enc(ns)}/jobflows/${enc(name)}`;
}

// Server-Sent Events on /ui/api/stream; handlers: {row, nodes, deleted, reload, hello}.
// EventSource reconnects by itself; onState reports "live"/"reconnecting".
export function openStream(params, handlers, onState) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const es = new EventSource("/ui/api/stream" + (q.toString() ? "?" + q : ""));
  for (const [name, fn] of Object.entries(handlers)) {
    es.addEventListener(name, (ev) => {
      let data = null;
      try { data = JSON.parse(ev.data); } catch (_) { return; }
      fn(data);
    });
  }
  es.onopen = () => onState && onState("live");
  es.onerror = () => onState && onState(es.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
  return es;
}
