"""Flows run by a real `vcflow server` alone: applied through the API they run to Succeed;
a pod's log streams while it runs; SIGTERM leaves the pods running and a restart adopts
them; after SIGKILL a restart finishes the flow with every pod run once; another process's
writes are reconciled; one control plane per state directory."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import yaml
from tests.cli.flows import processes_with

from vcflow.server import advertise

from .conftest import (
    BATCH,
    CORE,
    DEADLINE,
    FLOW,
    Start,
    alive,
    flow_phase,
    jobflow,
    lines,
    pod_servers,
    template,
    wait_until,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "jobflow"


def post_all(client: httpx.Client, objects: list[dict[str, object]]) -> None:
    for obj in objects:
        plural = {"JobFlow": "jobflows", "JobTemplate": "jobtemplates"}[str(obj["kind"])]
        answer = client.post(f"{FLOW}/{plural}", json=obj)
        assert answer.status_code == 201, answer.text


def succeeded(client: httpx.Client, name: str, deadline: float = DEADLINE) -> None:
    wait_until(
        lambda: flow_phase(client, name) in ("Succeed", "Failed"), f"flow {name} to end", deadline
    )
    assert flow_phase(client, name) == "Succeed"


def test_an_example_applied_through_the_api_runs_to_succeed(start_server: Start) -> None:
    server = start_server()
    objects = [d for d in yaml.safe_load_all((EXAMPLES / "diamond" / "flow.yaml").read_text()) if d]
    with server.client() as client:
        post_all(client, objects)
        succeeded(client, "diamond")
        jobs = client.get(f"{BATCH}/jobs").json()["items"]
        assert {j["metadata"]["name"]: j["status"]["state"]["phase"] for j in jobs} == {
            "diamond-split": "Completed",
            "diamond-left": "Completed",
            "diamond-right": "Completed",
            "diamond-join": "Completed",
        }
        log = client.get(f"{CORE}/pods/diamond-join-main-0/log")
        assert log.status_code == 200 and log.text == "join\n"
        assert log.headers["content-type"].startswith("text/plain")


def test_a_followed_log_streams_while_the_pod_runs(start_server: Start, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    script = f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; echo second"
    server = start_server()
    with server.client() as client:
        post_all(client, [template("a", script), jobflow("f", "a")])
        pod = f"{CORE}/pods/f-a-t-0"
        wait_until(lambda: client.get(f"{pod}/log").text == "first\n", "the first line")
        with client.stream("GET", f"{pod}/log?follow=true") as answer:
            assert answer.status_code == 200
            chunks = answer.iter_text()
            assert next(chunks) == "first\n"  # while the pod waits for the gate
            assert client.get(pod).json()["status"]["phase"] == "Running"
            gate.touch()
            assert "".join(chunks) == "second\n"  # then the stream ends with the container
        assert client.get(f"{pod}/log?tailLines=1").text == "second\n"
        assert client.get(f"{pod}/log?container=nope").status_code == 400
        assert client.get(f"{CORE}/pods/nope/log").status_code == 404
        succeeded(client, "f")


def _runs(marks: Path) -> list[str]:
    return sorted(lines(marks))


def test_sigterm_leaves_the_pods_running_and_a_restart_adopts_them(
    start_server: Start, tmp_path: Path
) -> None:
    marks, gate = tmp_path / "marks", tmp_path / "gate"
    script = f"echo $HOSTNAME >> {marks}; while [ ! -e {gate} ]; do sleep 0.05; done"
    server = start_server()
    with server.client() as client:
        post_all(client, [template("a", script), template("b", f"echo $HOSTNAME >> {marks}"),
                          jobflow("f", "a", "b<a")])  # fmt: skip
        wait_until(lambda: lines(marks), "pod a to start")
        log = f"{CORE}/pods/f-a-t-0/log?follow=true"
        with (
            client.stream("GET", f"{FLOW}/jobflows?watch=true") as watch,
            client.stream("GET", log) as followed,
        ):
            assert watch.status_code == 200 and followed.status_code == 200
            assert server.stop(signal.SIGTERM) == 0
            # both streams were ended by the server, not cut off when its grace ran out
            # (the flow's status may still be written once as the pod runs: MODIFIED)
            types = [json.loads(line)["type"] for line in watch.iter_lines() if line]
            assert types[:1] == ["ADDED"] and set(types) <= {"ADDED", "MODIFIED"}, types
            assert followed.read() == b""  # (pod a writes no log)
    assert not (server.state_dir / "server.json").exists()
    assert not (server.state_dir / "kubeconfig").exists()
    pod_pids = processes_with(str(gate))
    assert pod_pids, "pod a was terminated by the stop"
    assert pod_servers(server.state_dir), "the pod server went with the control plane"
    again = start_server()
    gate.touch()
    with again.client() as client:
        succeeded(client, "f")
    assert _runs(marks) == ["f-a-t-0", "f-b-t-0"]  # a ran once: adopted, not rerun


def test_after_sigkill_a_restart_finishes_the_flow_running_each_pod_once(
    start_server: Start, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    script = f"echo $HOSTNAME >> {marks}; sleep 1"
    server = start_server()
    with server.client() as client:
        post_all(client, [template("a", script), template("b", script), template("c", script),
                          jobflow("f", "a", "b<a", "c<b")])  # fmt: skip
        wait_until(lambda: len(lines(marks)) >= 2, "job b to start")
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    again = start_server()
    with again.client() as client:
        succeeded(client, "f")
    assert _runs(marks) == ["f-a-t-0", "f-b-t-0", "f-c-t-0"]


def test_writes_of_other_processes_are_reconciled_and_one_control_plane_runs(
    start_server: Start, tmp_path: Path
) -> None:
    server = start_server()
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(yaml.safe_dump_all([template("a", "true"), jobflow("f", "a")]))
    vcflow = [sys.executable, "-m", "vcflow", "--state-dir", str(server.state_dir)]
    applied = subprocess.run([*vcflow, "apply", "-f", str(manifest)], capture_output=True,
                             text=True, timeout=DEADLINE)  # fmt: skip
    assert applied.returncode == 0, applied.stderr
    with server.client() as client:
        succeeded(client, "f")
    pid = server.proc.pid
    run = subprocess.run([*vcflow, "run", "-f", str(manifest), "--no-live"], capture_output=True,
                         text=True, timeout=DEADLINE)  # fmt: skip
    # `run` on a state directory a server owns follows the server's run (remote mode):
    # no second control plane, the flow ended there already
    assert run.returncode == 0, run.stderr
    assert "flow f Succeed" in run.stdout
    second = subprocess.run([*vcflow, "server", "--port", "0"], capture_output=True, text=True,
                            timeout=DEADLINE)  # fmt: skip
    assert second.returncode == 1 and f"process {pid} (vcflow server)" in second.stderr
    assert json.loads((server.state_dir / "server.json").read_text())["pid"] == pid
    assert alive(pid)


def test_a_client_finds_the_running_server_and_not_a_killed_one(start_server: Start) -> None:
    server = start_server("--runtime", "none")
    found = advertise.running(server.state_dir)
    assert found is not None and found.url == server.url and found.pid == server.proc.pid
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    assert (server.state_dir / "server.json").exists()  # (left behind by the kill)
    assert advertise.running(server.state_dir) is None


def test_log_of_the_previous_run_and_of_an_attempt(start_server: Start, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = f"if [ -e {marker} ]; then echo second; else touch {marker}; echo first; exit 1; fi"
    restarting = template("a", script)
    restarting["spec"]["tasks"][0]["template"]["spec"]["restartPolicy"] = "OnFailure"
    server = start_server()
    with server.client() as client:
        post_all(client, [restarting, jobflow("f", "a")])
        succeeded(client, "f")
        pod = f"{CORE}/pods/f-a-t-0/log"
        assert client.get(pod).text == "second\n"
        assert client.get(f"{pod}?previous=true").text == "first\n"
        assert client.get(f"{pod}?attempt=1").text == "second\n"
        assert client.get(f"{pod}?attempt=-1&previous=true").text == "first\n"
        none = client.get(f"{pod}?attempt=2")
        assert none.status_code == 400
        assert none.json()["message"] == 'pod "f-a-t-0" has no attempt 2: the attempts known are 1'
        assert client.get(f"{pod}?tailLines=x").status_code == 400


def test_pods_are_scheduled_against_this_machines_cpus(start_server: Start, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    whole = str(os.cpu_count() or 1)  # each job asks for every CPU: one runs at a time
    objects = [template(n, f"echo start >> {marks}; sleep 0.3; echo end >> {marks}") for n in "ab"]
    for obj in objects:
        container = obj["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
        container["resources"] = {"requests": {"cpu": whole}}
    server = start_server()
    with server.client() as client:
        post_all(client, [*objects, jobflow("f", "a", "b")])
        succeeded(client, "f")
    assert lines(marks) == ["start", "end", "start", "end"]


def test_many_followed_quiet_logs_do_not_stop_other_requests(
    start_server: Start, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    server = start_server()
    with server.client(limits=httpx.Limits(max_connections=None)) as client:
        post_all(client, [template("a", f"while [ ! -e {gate} ]; do sleep 0.05; done"),
                          jobflow("f", "a")])  # fmt: skip
        pod = f"{CORE}/pods/f-a-t-0"
        wait_until(lambda: _phase(client, pod) == "Running", "pod a to run")
        with contextlib.ExitStack() as streams:
            for _ in range(FOLLOWERS):  # more than the server's worker threads
                answer = streams.enter_context(client.stream("GET", f"{pod}/log?follow=true"))
                assert answer.status_code == 200
            assert client.get(f"{FLOW}/jobflows/f", timeout=5.0).status_code == 200
            gate.touch()
        succeeded(client, "f")


FOLLOWERS = 45


def _phase(client: httpx.Client, pod: str) -> str:
    answer = client.get(pod)
    return str(answer.json()["status"].get("phase")) if answer.status_code == 200 else ""
