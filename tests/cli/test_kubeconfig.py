"""The CLI against a cluster: `--kubeconfig F` (and `--context NAME`) sends every verb
through the Kubernetes API of that kubeconfig's context, printing what it prints embedded
(describe's per-job table with its waiting reasons too). Against a real `vcflow server`
process, reached through the kubeconfig it writes; errors are one line, exit 1."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from vcflow.cli.app import app

from .conftest import EXAMPLE, Vc
from .test_remote import Server, same_eventually, served  # noqa: F401 (the fixture)


def _through(kubeconfig: Path, *more: str) -> object:
    runner = CliRunner()

    def invoke(*args: str | Path) -> Result:
        return runner.invoke(app, [*(str(a) for a in args), "--kubeconfig", str(kubeconfig), *more])

    return invoke


def test_every_verb_through_a_kubeconfig_prints_as_embedded(
    served: Server,  # noqa: F811
    vc: Vc,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("VCFLOW_TOKEN", raising=False)  # the kubeconfig holds the token
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "never-read"))
    kube = _through(served.state_dir / "kubeconfig")
    applied = same_eventually(kube, vc, "apply", "-f", EXAMPLE)  # type: ignore[arg-type]
    assert "jobflow.flow.volcano.sh/test created" in applied[1]
    for args in (
        ("get", "jf"),
        ("get", "vcjob", "-o", "wide"),
        ("get", "jt", "a", "-o", "yaml"),
        ("describe", "vcjob", "test-a"),
        ("logs", "test-a-default-0"),
        ("retry", "jobflow", "test"),  # not Failed: refused alike
    ):
        same_eventually(kube, vc, *args)  # type: ignore[arg-type]
    # describe's per-job table with its waiting reasons, as through --server: the server's
    # controllers leave test-a (no status: no runtime) out of the flow's status, embedded
    # ones list it as unknown (a difference of the server's, not of the client's)
    server = _through(served.state_dir / "kubeconfig", "--server", served.url)
    described = same_eventually(kube, server, "describe", "jf", "test")  # type: ignore[arg-type]
    assert "test-b Waiting Dependencies waiting for all of: a" in described[1]
    assert same_eventually(kube, vc, "stop", "jobflow", "test")[0] == 0  # type: ignore[arg-type]
    same_eventually(kube, vc, "get", "jf")  # type: ignore[arg-type]
    deleted = same_eventually(kube, vc, "delete", "-f", EXAMPLE)  # type: ignore[arg-type]
    assert deleted[0] == 0


def test_context_picks_the_cluster(served: Server, tmp_path: Path) -> None:  # noqa: F811
    """Two contexts: the current one reaches nothing; `--context` names the server's."""
    config = yaml.safe_load((served.state_dir / "kubeconfig").read_text())
    name = config["current-context"]
    config["clusters"].append({"name": "dead", "cluster": {"server": f"http://{_closed()}"}})
    config["contexts"].append({"name": "dead", "context": {"cluster": "dead", "user": name}})
    config["current-context"] = "dead"
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(config))
    dead = CliRunner().invoke(app, ["--kubeconfig", str(path), "get", "jf"])
    assert dead.exit_code == 1 and "was refused" in dead.stderr
    found = CliRunner().invoke(app, ["--kubeconfig", str(path), "--context", name, "get", "jf"])
    assert (found.exit_code, found.stderr) == (0, "No resources found in default namespace.\n")


def _closed() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://ADDRESS"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: here, context: {cluster: c, user: u}}]
current-context: here
"""


@pytest.mark.parametrize(
    ("file", "args", "said"),
    [
        (None, (), "cannot read kubeconfig {path}: no such file or directory"),
        ("garbage: [\n", (), "kubeconfig {path} is not YAML (line 2)"),
        (KUBECONFIG, ("--context", "other"), 'kubeconfig {path}: context "other" does not exist'),
        (KUBECONFIG, (), "the connection to the server ADDRESS was refused"),
    ],
    ids=["missing", "not-yaml", "no-such-context", "unreachable"],
)
def test_a_bad_kubeconfig_is_one_line(
    tmp_path: Path, file: str | None, args: tuple[str, ...], said: str
) -> None:
    path = tmp_path / "config"
    address = _closed()
    if file is not None:
        path.write_text(file.replace("ADDRESS", address))
    result = CliRunner().invoke(app, ["--kubeconfig", str(path), *args, "get", "jf"])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert said.format(path=path).replace("ADDRESS", address) in result.stderr


def test_context_without_kubeconfig_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["--context", "x", "get", "jf"])
    assert result.exit_code == 2 and "needs --kubeconfig" in result.stderr
