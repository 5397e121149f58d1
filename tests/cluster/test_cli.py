"""vcflow's CLI (`vcflow --kubeconfig F ...`, remote mode: the cluster's API, the operator
doing the work) and kubectl on a real control plane, side by side: apply, `get -w` seeing the
flow's phases change, wait, get, describe (the flow's Events in the order they happened), and
logs — which this cluster cannot give: kwok runs no containers and serves no kubelet API,
so the API server answers 500 `no preferred addresses found`; both tools say so, and exit 1."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from typing import Any

from tests.cluster.deployed import Scene, jobflow, manifest, template

HEADER = ["NAME", "STATUS", "AGE"]
KLOG = re.compile(r"[IWEF]\d{4} ")
CYCLE = "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG: cycle a → b → a"


class Watcher:
    """A `get -w` process whose output lines are collected as they come."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def stop(self, signum: int) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        code = self.proc.wait(timeout=30)
        self._thread.join(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code


def rows(lines: list[str]) -> list[list[str]]:
    """The lines' words, but for kubectl's -v log lines (klog's `I1202 00:00:00.000000 ...`)."""
    return [line.split() for line in lines if line.strip() and not KLOG.match(line)]


def phases(lines: list[str]) -> list[str]:
    """The STATUS column of a `get jf -w`'s rows, repeats and the empty one left out."""
    found: list[str] = []
    for row in rows(lines):
        if row == HEADER or row[0].startswith("No"):
            continue
        status = row[1] if len(row) == 3 else ""
        if status and (not found or found[-1] != status):
            found.append(status)
    return found


def until_succeed(lines: list[str]) -> list[list[str]]:
    """A `get jf -w`'s flow rows (NAME, STATUS) up to the first Succeed."""
    found: list[list[str]] = []
    for row in rows(lines):
        if row[0] == "w":
            found.append(row[:2] if len(row) == 3 else row[:1])
            if found[-1][1:] == ["Succeed"]:
                break
    return found


def ageless(table: str) -> list[list[str]]:
    """A table's cells, cut where its header's words start (a cell may be blank), without
    its AGE column (two commands a second apart differ there)."""
    header, *lines = [line for line in table.splitlines() if line.strip()]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    ends = [*starts[1:], None]
    found = [
        [line[a:b].strip() for a, b in zip(starts, ends, strict=True)] for line in [header, *lines]
    ]
    at = found[0].index("AGE")
    return [row[:at] + row[at + 1 :] for row in found]


def events(described: str) -> list[str]:
    """The messages of `describe`'s Events table, in its order."""
    table = described.split("Events:", 1)[1].splitlines()
    return [line.split("vcflow", 1)[1].strip() for line in table if " vcflow " in line]


def test_apply_watch_wait_get_and_describe_with_vcflow_and_kubectl(scene: Scene) -> None:
    scene.operator()
    ns = scene.namespace
    watchers = {
        "vcflow": Watcher(scene.vcflow.popen("get", "jf", "-w", "-n", ns)),
        # (-v=6: its requests logged, so the test knows when its watch is open)
        "kubectl": Watcher(scene.kubectl.popen("-n", ns, "get", "jf", "-w", "-v=6")),
    }
    try:
        scene.wait(
            lambda: (
                any("No resources found" in line for line in watchers["vcflow"].lines)
                and any(
                    "watch=true" in line and "200 OK" in line for line in watchers["kubectl"].lines
                )
            ),
            lambda: (
                f"both watches to be open: {watchers['vcflow'].lines} {watchers['kubectl'].lines}"
            ),
        )
        text = manifest(template("a"), template("b"), jobflow("w", "a", "b<a"))
        applied = scene.vcflow.ok("apply", "-n", ns, "-f", "-", input=text)
        assert applied.splitlines() == [
            "jobtemplate.flow.volcano.sh/a created",
            "jobtemplate.flow.volcano.sh/b created",
            "jobflow.flow.volcano.sh/w created",
        ]
        met = scene.vcflow.ok(
            "wait", "jf/w", "--for", "jsonpath={.status.state.phase}=Succeed", "-n", ns,
            "--timeout", "60s",
        )  # fmt: skip
        assert met == "jobflow.flow.volcano.sh/w condition met\n"
        met = scene.kubectl.ok(
            "-n", ns, "wait", "--for=jsonpath={.status.state.phase}=Succeed", "jf/w",
            "--timeout=60s",
        )  # fmt: skip
        assert met == "jobflow.flow.volcano.sh/w condition met\n"
        scene.wait(
            lambda: all(phases(w.lines)[-1:] == ["Succeed"] for w in watchers.values()),
            "both watches to see Succeed",
        )
    finally:
        codes = {
            "vcflow": watchers["vcflow"].stop(signal.SIGINT),
            "kubectl": watchers["kubectl"].stop(signal.SIGTERM),
        }
    assert codes["vcflow"] == 130
    for name, watcher in watchers.items():
        assert phases(watcher.lines) == ["Pending", "Running", "Succeed"], (name, watcher.lines)
        shown = rows(watcher.lines)
        assert HEADER in shown, (name, watcher.lines)
    # the same rows to Succeed, but for their ages (and kubectl's header on its first row);
    # (a write after it may reach one watch before the other is stopped)
    assert until_succeed(watchers["vcflow"].lines) == until_succeed(watchers["kubectl"].lines)

    for kind in ("jf", "vcjob", "jt"):
        mine = ageless(scene.vcflow.ok("get", kind, "-n", ns, "-o", "wide"))
        theirs = ageless(scene.kubectl.ok("-n", ns, "get", kind, "-o", "wide"))
        if kind == "jf":  # JOBS: vcflow computes it; a CRD column can only print a field
            # ETA: vcflow's own column (the flow controller's estimates), `-` once ended
            assert (mine[0].pop(), mine[1].pop()) == ("ETA", "-")
            assert (mine[1].pop(), theirs[1].pop()) == ("2/2", '["w-a","w-b"]')
        assert mine == theirs, kind
    assert rows(scene.vcflow.ok("get", "jf", "w", "-n", ns).splitlines())[1][:2] == ["w", "Succeed"]

    created = ["create a job named w-a!", "create a job named w-b!"]
    assert events(scene.vcflow.ok("describe", "jf", "w", "-n", ns)) == created
    described = scene.kubectl.ok("-n", ns, "describe", "jf", "w")
    assert "    Phase:  Succeed" in described
    assert events(described) == created  # in the order they happened (Events' names)
    shown = scene.kubectl.ok(
        "-n", ns, "get", "events", "--field-selector", "involvedObject.name=w",
        "-o", "jsonpath={.items[*].message}",
    )  # fmt: skip
    assert shown.split("!")[:2] == ["create a job named w-a", " create a job named w-b"]


def test_the_cli_shows_the_webhooks_refusal(scene: Scene) -> None:
    flow = jobflow("loop", "a<b", "b<a")
    refused = scene.vcflow.run("apply", "-n", scene.namespace, "-f", "-", input=manifest(flow))
    assert refused.returncode == 1
    assert CYCLE in refused.stderr, refused.stderr
    assert not scene.kube.items(
        f"/apis/flow.volcano.sh/v1alpha1/namespaces/{scene.namespace}/jobflows"
    )


def test_logs_say_why_this_cluster_has_none(scene: Scene) -> None:
    """kwok runs no containers and serves no logs (its nodes have no address the API server
    could reach a kubelet at): kubectl prints kube-apiserver's 500; vcflow prints the same
    and what it means, for one pod and for each pod of a flow, and exits 1."""
    scene.operator()
    ns = scene.namespace
    scene.apply(template("a", replicas=2), jobflow("l", "a"))
    scene.wait_phase("l", "Succeed")
    pods = sorted(p["metadata"]["name"] for p in scene.pods("volcano.sh/job-name=l-a"))
    assert pods == ["l-a-work-0", "l-a-work-1"]
    theirs = scene.kubectl.run("-n", ns, "logs", pods[0])
    assert theirs.returncode == 1
    assert theirs.stderr.startswith("Error from server"), theirs.stderr
    said = theirs.stderr.strip().split(": ", 1)[1]  # no preferred addresses found; ...
    mine = scene.vcflow.run("logs", pods[0], "-n", ns)
    assert (mine.returncode, mine.stdout) == (1, "")
    pod: dict[str, Any] = next(p for p in scene.pods() if p["metadata"]["name"] == pods[0])
    node = pod["spec"]["nodeName"]
    assert mine.stderr == (
        f"Error from server (InternalError): {said} (the API server reads a pod's log from "
        f"the kubelet of node {node}, and could not)\n"
    )
    flow = scene.vcflow.run("logs", "jobflow/l", "-n", ns)
    assert (flow.returncode, flow.stdout) == (1, "")
    lines = flow.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in lines] == [f"pod/{p}" for p in pods]
    assert all(said in line for line in lines), lines
    selector = f"volcano.sh/createdByJobFlow={ns}.l"
    scene.wait(lambda: len(scene.pods(selector)) == 2, "the operator to label the flow's pods")
    selected = scene.kubectl.run("-n", ns, "logs", "-l", selector)
    assert selected.returncode == 1 and said in selected.stderr
