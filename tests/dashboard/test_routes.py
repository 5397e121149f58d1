"""The dashboard as `vcflow server` serves it (docs/dashboard.md), against a real server
process: the page open to all, its data behind the token or the session cookie (which
never opens a Kubernetes API path), its headers on every answer, the cross-site and
content-type rules on writes, read-only and off modes, the event stream following a
flow, the actions doing what the CLI verbs do, and a pod's log."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import httpx
from tests.server.conftest import (
    FLOW,
    Server,
    Start,
    flow_phase,
    jobflow,
    template,
    wait_until,
)

from vcflow.dashboard import web
from vcflow.dashboard.stream import COALESCE

from .sse import Events

UI = "/ui/api"
FLOWS = UI + "/namespaces/default/jobflows"


def create(client: httpx.Client, flow: dict[str, Any], *templates: dict[str, Any]) -> None:
    for body in templates:
        made = client.post(f"{FLOW}/jobtemplates", json=body)
        assert made.status_code in (201, 409), made.text
    made = client.post(f"{FLOW}/jobflows", json=flow)
    assert made.status_code == 201, made.text


def started(server: Server) -> str:
    """The server's output once its start lines are out ("" before)."""
    text = server.out.read_text()
    return text if "INFO" in server.err.read_text() or text.count("\n") >= 2 else ""


def secured(answer: httpx.Response) -> None:
    assert answer.headers["content-security-policy"] == web.CSP
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"


def test_login_sets_a_cookie_that_opens_the_dashboard_but_not_the_api(
    start_server: Start,
) -> None:
    server = start_server()
    said = wait_until(lambda: started(server), "the start lines")
    assert f"vcflow server: dashboard at {server.url}/ " in said
    with server.client(token="") as anyone:
        page = anyone.get("/")
        assert page.status_code == 200 and "<html" in page.text
        assert page.headers["cache-control"] == "no-cache" and page.headers["etag"]
        secured(page)
        static = anyone.get("/ui/static/index.html")
        assert static.status_code == 200 and static.headers["cache-control"] == "no-cache"
        secured(static)
        escaped = anyone.get("/ui/static/..%2F..%2Fapp.py")
        assert escaped.status_code == 404 and "create_app" not in escaped.text
        refused = anyone.get(UI + "/session")
        assert refused.status_code == 401 and refused.json()["kind"] == "Status"
        secured(refused)
        wrong = anyone.post("/ui/login", json={"token": "nope"})
        assert wrong.status_code == 401
        assert "vcflow-dashboard" not in wrong.headers.get("set-cookie", "")
        login = anyone.post("/ui/login", json={"token": server.token})
        assert login.status_code == 204, login.text
        cookie = login.headers["set-cookie"]
        assert server.token is not None
        value = hmac.new(server.token.encode(), b"vcflow dashboard session", hashlib.sha256)
        assert cookie.startswith(f"vcflow-dashboard={value.hexdigest()};")
        for word in ("HttpOnly", "Path=/", "SameSite=strict", "Secure"):
            assert word.lower() in cookie.lower(), cookie
        assert anyone.cookies.get("vcflow-dashboard") == value.hexdigest()
        session = anyone.get(UI + "/session")
        assert session.status_code == 200, session.text
        assert session.json() == {"readOnly": False, "namespaces": None, "host": "server"}
        secured(session)
        # the cookie never authenticates the Kubernetes API
        assert anyone.get(f"{FLOW}/jobflows").status_code == 401
        assert anyone.get("/api/v1/namespaces/default/pods").status_code == 401
        out = anyone.post("/ui/logout")
        assert out.status_code == 204
        assert anyone.get(UI + "/session").status_code == 401
    with server.client() as client:  # (the bearer token, as scripts send it)
        assert client.get(UI + "/flows").json() == {"flows": []}
        missing = client.get(FLOWS + "/nope")
        assert missing.status_code == 404 and missing.json()["kind"] == "Status"
        secured(missing)
        # writes: JSON only, same-origin only
        typed = client.post(
            FLOWS + "/nope/stop", content=b"{}", headers={"Content-Type": "text/plain"}
        )
        assert typed.status_code == 415, typed.text
        secured(typed)
        crossed = client.post(
            FLOWS + "/nope/stop", json={}, headers={"Origin": "https://evil.example"}
        )
        assert crossed.status_code == 403 and "cross-origin" in crossed.json()["message"]
        secured(crossed)
        fetched = client.get(UI + "/flows", headers={"Sec-Fetch-Site": "cross-site"})
        assert fetched.status_code == 403
        big = client.post(FLOWS + "/nope/stop", json={"x": "y" * (web.MAX_BODY + 1)})
        assert big.status_code == 413
        # a link followed from elsewhere opens the page (it holds no data)
        linked = client.get(
            "/", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
        )
        assert linked.status_code == 200


def test_read_only_refuses_the_actions_and_off_serves_no_dashboard(start_server: Start) -> None:
    server = start_server("--dashboard", "read-only", "--runtime", "none")
    with server.client() as client:
        create(client, jobflow("f", "ro"), template("ro", "sleep 30"))
        assert client.get(UI + "/session").json()["readOnly"] is True
        assert client.get(FLOWS + "/f").json()["readOnly"] is True
        for action in ("stop", "retry", "resubmit"):
            refused = client.post(f"{FLOWS}/f/{action}", json={})
            assert refused.status_code == 403, refused.text
            assert refused.json()["message"] == "the dashboard is read-only (--read-only)"
        annotations = client.get(f"{FLOW}/jobflows/f").json()["metadata"]["annotations"]
        assert "vcflow.io/stop" not in annotations
    server.stop()
    off = start_server("--dashboard", "off", "--runtime", "none", state_dir=server.state_dir)
    assert "dashboard" not in wait_until(lambda: started(off), "the start line")
    with off.client(token="") as anyone:
        assert anyone.get("/").status_code == 401  # (the API's answer, as before)
    with off.client() as client:
        assert client.get(UI + "/session").status_code == 404


def test_the_stream_follows_a_flow_and_the_log_route_reads_a_pod(start_server: Start) -> None:
    server = start_server()
    with server.client() as client, server.client() as streaming, server.client() as listing:
        listed = Events(listing, UI + "/stream?namespace=default")
        listed.until(lambda event, data: event == "hello", "the list's hello")
        create(
            client,
            jobflow("live", "first", "then<first"),
            template("first", "sleep 2; echo hello-from-the-dashboard"),
            template("then", "true"),
        )
        graph = client.get(FLOWS + "/live").json()
        assert [n["id"] for n in graph["nodes"]] == ["first", "then"]
        assert graph["edges"] == [{"source": "first", "target": "then", "label": ""}]
        events = Events(streaming, UI + "/stream?namespace=default&flow=live")
        assert events.status == 200, events.status
        assert events.headers["content-type"].startswith("text/event-stream")
        assert events.headers["content-security-policy"] == web.CSP
        seen = events.until(lambda event, data: event == "hello", "hello")
        assert seen[0][0] == "hello" and seen[0][1]["resourceVersion"].isdigit()
        frames = events.until(
            lambda event, data: (
                event == "nodes"
                and any(n["id"] == "first" and n["phase"] == "Completed" for n in data["nodes"])
            ),
            "first Completed",
        )
        rows = [data for event, data in frames if event == "row"]
        assert rows and rows[-1]["name"] == "live" and rows[-1]["total"] == 2
        for event, data in frames:
            if event == "nodes":
                assert data["name"] == "live"
                for node in data["nodes"]:
                    assert set(node) == {
                        "id",
                        "phase",
                        "reason",
                        "items",
                        "critical",
                        "started",
                        "finished",
                    }
        # only changed nodes: a frame never repeats a node as it was last sent
        last: dict[str, Any] = {}
        for event, data in frames:
            for node in data["nodes"] if event == "nodes" else []:
                assert last.get(node["id"]) != node
                last[node["id"]] = node
        wait_until(lambda: flow_phase(client, "live") == "Succeed", "the flow to succeed")
        log = client.get(
            UI + "/namespaces/default/pods/live-first-t-0/log", params={"tailLines": "5"}
        )
        assert log.status_code == 200, log.text
        assert "hello-from-the-dashboard" in log.text
        secured(log)
        entry = client.get(FLOWS + "/live/entries/first").json()
        assert entry["entry"]["phase"] == "Completed"
        (vcjob,) = entry["vcjobs"]
        assert [p["name"] for p in vcjob["pods"]] == ["live-first-t-0"]
        assert vcjob["pods"][0]["containers"] == ["main"]
        # the list page's stream: a row for the new flow, `deleted` once it is gone
        listed.until(lambda event, data: event == "row" and data["name"] == "live", "its row")
        assert client.delete(f"{FLOW}/jobflows/live").status_code == 200
        gone = {"namespace": "default", "name": "live"}
        listed.until(lambda event, data: event == "deleted" and data == gone, "deleted")
        bad = client.get(UI + "/namespaces/default/pods/..%2Fx/log")
        assert bad.status_code in (400, 404)
        assert COALESCE <= 0.2
        # the server's stop ends the open stream, and the server exits 0
        assert server.stop() == 0
        events.until(lambda event, data: event == "closed", "the stream's end")


def test_the_actions_do_what_the_cli_verbs_do(start_server: Start) -> None:
    server = start_server()
    with server.client() as client:
        create(client, jobflow("long", "nap"), template("nap", "sleep 60"))
        wait_until(lambda: flow_phase(client, "long") == "Running", "the flow to run")
        early = client.post(FLOWS + "/long/retry", json={"restartSuccessful": False})
        assert early.status_code == 409
        assert early.json()["message"] == (
            "jobflow.flow.volcano.sh/long is Running: only a Failed flow is retried "
            "(vcflow resubmit jobflow long runs it again as a new flow)"
        )
        stopped = client.post(FLOWS + "/long/stop", json={})
        assert stopped.status_code == 200, stopped.text
        assert stopped.json() == {"message": "jobflow.flow.volcano.sh/long stopping"}
        annotations = client.get(f"{FLOW}/jobflows/long").json()["metadata"]["annotations"]
        assert "vcflow.io/stop" in annotations
        wait_until(lambda: flow_phase(client, "long") == "Failed", "the flow to stop")
        retried = client.post(FLOWS + "/long/retry", json={"restartSuccessful": False})
        assert retried.status_code == 200, retried.text
        assert retried.json() == {"message": "jobflow.flow.volcano.sh/long retried"}
        annotations = client.get(f"{FLOW}/jobflows/long").json()["metadata"]["annotations"]
        assert "vcflow.io/retry" in annotations and "vcflow.io/stop" not in annotations
        copied = client.post(FLOWS + "/long/resubmit", json={"name": "long-again"})
        assert copied.status_code == 200, copied.text
        assert copied.json() == {
            "message": "jobflow.flow.volcano.sh/long-again created",
            "name": "long-again",
        }
        again = client.get(f"{FLOW}/jobflows/long-again").json()
        assert again["metadata"]["annotations"]["vcflow.io/resubmitted-from"] == "long"
        taken = client.post(FLOWS + "/long/resubmit", json={"name": "long-again"})
        assert taken.status_code == 409
        made = client.post(FLOWS + "/long/resubmit", json={"name": None}).json()
        assert made["name"].startswith("long-")
        for name in ("long-again", made["name"]):
            assert client.post(f"{FLOWS}/{name}/stop", json={}).status_code == 200
