// vcflow dashboard: boot, session/login and hash routing.
//   #/                        list page (filters: #/?namespace=NS&labelSelector=SEL)
//   #/flows/NS/NAME[?entry=E] flow page, node panel open on E
//   #token=...                log in with that token, then drop it from the URL
import {getJSON, postJSON, setUnauthorizedHandler, ApiError} from "./api.js";
import {h, clear} from "./util.js";
import {setConn} from "./live.js";
import {showList} from "./list.js";
import {showFlow} from "./flow.js";

const main = document.getElementById("main");
const session = {readOnly: true, namespaces: null, host: "server"};
let current = null;     // the page shown: {route, close(), update(route)?}

function parseRoute() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query] = raw.split("?", 2);
  const params = new URLSearchParams(query || "");
  const m = path.match(/^\/flows\/([^/]+)\/([^/]+)\/?$/);
  if (m) return {page: "flow", ns: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]),
    entry: params.get("entry")};
  return {page: "list", namespace: params.get("namespace") || "",
    labelSelector: params.get("labelSelector") || ""};
}

function route() {
  const r = parseRoute();
  // Same flow, only ?entry= changed: let the flow page open/close the panel in place.
  if (current && current.route.page === "flow" && r.page === "flow" &&
      current.route.ns === r.ns && current.route.name === r.name && current.update) {
    current.route = r;
    current.update(r);
    return;
  }
  if (current && current.close) current.close();
  clear(main);
  document.documentElement.removeAttribute("data-painted");
  current = r.page === "flow" ? showFlow(main, r, session) : showList(main, r, session);
  current.route = r;
}

function showLogin(message) {
  if (current && current.close) current.close();
  current = null;
  setConn("");
  document.getElementById("logout").hidden = true;
  clear(main);
  const input = h("input", {id: "login-token", type: "password", name: "token",
    autocomplete: "current-password", required: true, "aria-describedby": "login-help"});
  const msg = h("p", {id: "login-msg", class: "msg error", role: "alert"}, message || "");
  msg.hidden = !message;
  const form = h("form", {class: "login card", "aria-labelledby": "login-title"},
    h("h1", {id: "login-title"}, "Sign in"),
    h("p", {id: "login-help", class: "muted"},
      "Paste the access token of the vcflow server (the `vcflow dashboard` command prints a login link)."),
    h("label", {for: "login-token"}, "Token"), input,
    h("button", {id: "login-submit", type: "submit", class: "primary"}, "Sign in"),
    msg);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await login(input.value.trim());
      boot();
    } catch (e) {
      msg.textContent = e.message;
      msg.hidden = false;
      input.focus();
    }
  });
  main.append(form);
  input.focus();
}

async function login(token) {
  await postJSON("/ui/login", {token});
}

async function logout() {
  try { await postJSON("/ui/logout", {}); } catch (_) { /* the cookie is gone anyway */ }
  showLogin();
}

async function boot() {
  let s;
  try {
    s = await getJSON("/ui/api/session");
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return showLogin();
    clear(main).append(h("p", {class: "msg error", role: "alert"}, "Cannot reach the dashboard API: " + e.message));
    return;
  }
  Object.assign(session, s);
  document.documentElement.dataset.readonly = s.readOnly ? "1" : "0";
  document.getElementById("logout").hidden = false;
  route();
}

async function start() {
  setUnauthorizedHandler(() => showLogin("Your session has expired; sign in again."));
  document.getElementById("logout").addEventListener("click", logout);
  window.addEventListener("hashchange", () => { if (main.querySelector("#login-token") === null) route(); });
  // #token=... (printed by `vcflow dashboard`): log in, then remove it from the URL and history.
  const m = location.hash.match(/^#token=([^&]+)/);
  if (m) {
    history.replaceState(null, "", location.pathname + location.search + "#/");
    try {
      await login(decodeURIComponent(m[1]));
    } catch (e) {
      return showLogin(e.message);
    }
  }
  boot();
}

start();
