"""A flow applied by a real kubectl through a real `vcflow server` runs its relative command
in the server's working directory — the directory the server started in, or the one
`--working-dir` names — as a flow applied by `vcflow apply` runs in the directory it was
applied from; the directory is recorded on the objects (`vcflow.io/working-dir`), and one a
manifest records is kept."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from vcflow.api import workdir

from .conftest import DEADLINE, Start, jobflow, server_command, template
from .test_kubectl import Kubectl, kubectl_binary, write


def _script(directory: Path) -> None:
    directory.mkdir()
    script = directory / "script.sh"
    script.write_text('#!/bin/sh\necho "ran in $(pwd)"\n')
    script.chmod(0o755)


def _kubectl(start_server: Start, tmp_path: Path, *flags: str, cwd: Path) -> Kubectl:
    server = start_server(*flags, cwd=cwd)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "KUBECONFIG": str(server.state_dir / "kubeconfig")}
    return Kubectl(kubectl_binary(), env)


def _succeeds(kube: Kubectl, flow: str) -> None:
    end = time.monotonic() + DEADLINE
    phase = ""
    while phase not in ("Succeed", "Failed"):
        assert time.monotonic() < end, f"the flow did not end: {phase!r}"
        time.sleep(0.1)
        phase = kube.ok("get", "jf", flow, "-o", "jsonpath={.status.state.phase}")
    assert phase == "Succeed", kube.ok("describe", "jf", flow)


def _recorded(kube: Kubectl, kind: str, name: str) -> str:
    key = workdir.ANNOTATION.replace(".", "\\.")
    return kube.ok("get", kind, name, "-o", f"jsonpath={{.metadata.annotations.{key}}}")


def test_a_relative_command_runs_in_the_directory_the_server_started_in(
    start_server: Start, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    _script(work)
    kube = _kubectl(start_server, tmp_path, cwd=work)
    manifest = write(tmp_path / "flow.yaml", template("a", "./script.sh"), jobflow("rel", "a"))
    kube.ok("apply", "-f", str(manifest))
    _succeeds(kube, "rel")
    assert kube.ok("logs", "rel-a-t-0") == f"ran in {work}\n"
    assert _recorded(kube, "jf", "rel") == str(work)
    assert _recorded(kube, "jobtemplate", "a") == str(work)


def test_working_dir_names_another_directory_and_a_recorded_one_is_kept(
    start_server: Start, tmp_path: Path
) -> None:
    work, mine = tmp_path / "work", tmp_path / "mine"
    _script(work)
    _script(mine)
    kube = _kubectl(start_server, tmp_path, "--working-dir", str(work), cwd=tmp_path)
    named = jobflow("named", "b")
    named["metadata"]["annotations"] = {workdir.ANNOTATION: str(mine)}
    manifest = write(
        tmp_path / "flow.yaml",
        template("a", "./script.sh"),
        template("b", "./script.sh"),
        jobflow("rel", "a"),
        named,
    )
    kube.ok("apply", "-f", str(manifest))
    _succeeds(kube, "rel")
    _succeeds(kube, "named")
    assert kube.ok("logs", "rel-a-t-0") == f"ran in {work}\n"
    assert kube.ok("logs", "named-b-t-0") == f"ran in {mine}\n"
    # kubectl apply again: nothing to change (the recorded directory is not the manifest's)
    again = kube.ok("apply", "-f", str(manifest))
    assert "jobflow.flow.volcano.sh/rel unchanged\n" in again
    assert _recorded(kube, "jf", "rel") == str(work)


def test_a_working_dir_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        server_command(tmp_path / "state", "--port", "0", "--working-dir", str(tmp_path / "no")),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == f"--working-dir {tmp_path / 'no'}: not a directory\n"
