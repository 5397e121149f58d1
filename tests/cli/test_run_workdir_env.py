"""`vcflow run` starts containers in the directory it was run from (recorded on what it
applies, so the vcjobs a flow creates carry it too), resolves a relative `workingDir` from
there, and passes the host's environment with the container's `env` on top — real
processes, `vcflow run` as a child process run from a project directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vcflow.api import workdir

from . import flows
from .flows import DEADLINE, cli, jobflow


def template(name: str, command: str, extra: str = "") -> str:
    return flows.template(name, command=command, image="python", plugins=False, extra=extra)


def run_in(
    project: Path, state: Path, manifest: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "vcflow", "--state-dir", str(state), "run", "-f", str(manifest)]
    return subprocess.run(
        [*argv, "--no-live", "--timeout", str(DEADLINE)],
        cwd=project,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=DEADLINE * 2,
    )


def test_python3_train_py_runs_in_the_directory_vcflow_run_was_run_in(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "train.py").write_text("open('trained.txt', 'w').write('ok')\n")
    (project / "sub" / "where.py").write_text(
        "import os; open('cwd.txt', 'w').write(os.getcwd())\n"
    )
    manifest = project / "flow.yaml"
    manifest.write_text(
        template("train", "[python3, train.py]")
        + template("sub", "[python3, where.py]", "\n              workingDir: sub")
        + jobflow("ml", "train", "sub<train")
    )
    done = run_in(project, tmp_path / "state", manifest)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "trained.txt").read_text() == "ok"
    assert (project / "sub" / "cwd.txt").read_text() == str(project / "sub")
    jobs = cli(tmp_path / "state", "get", "vcjob", "ml-train", "-o", "json")
    assert jobs.returncode == 0, jobs.stderr
    assert json.loads(jobs.stdout)["metadata"]["annotations"][workdir.ANNOTATION] == str(project)


def test_the_host_environment_reaches_the_container_under_its_own_env(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script = (
        "import os; open('env.txt', 'w').write(repr({k: os.environ.get(k) for k in "
        "('FROM_HOST', 'OVERRIDDEN', 'VCFLOW_PRIVATE', 'VIRTUAL_ENV', 'CUDA_HOME')}))"
    )
    env = "\n              env: [{name: OVERRIDDEN, value: from-pod}]"
    manifest = project / "flow.yaml"
    manifest.write_text(
        template("e", json.dumps(["python3", "-c", script]), env) + jobflow("f", "e")
    )
    done = run_in(
        project,
        tmp_path / "state",
        manifest,
        FROM_HOST="host-value",
        OVERRIDDEN="from-host",
        VCFLOW_PRIVATE="vcflow's own",
        VIRTUAL_ENV="/opt/venv",
        CUDA_HOME="/usr/local/cuda",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = eval((project / "env.txt").read_text())  # a repr of a dict of str/None
    assert seen == {
        "FROM_HOST": "host-value",
        "OVERRIDDEN": "from-pod",
        "VCFLOW_PRIVATE": None,
        "VIRTUAL_ENV": "/opt/venv",
        "CUDA_HOME": "/usr/local/cuda",
    }
