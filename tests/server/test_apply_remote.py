"""Remote `vcflow apply` through a real `vcflow server` (issue 21, items 6 and 7): the
server's `Warning` headers stay within kube-apiserver's bounds (`warncap`), so a flow of
many entries applied with its templates reaches every Python client; the dry-run judges a
flow against the input's own templates; concurrent applies sharing a new template all
succeed (AlreadyExists of an identical object is `unchanged`); and a write that fails
midway undoes what the apply wrote before it."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from vcflow.api import warncap, workdir
from vcflow.api.errors import ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.cli.remote import owning_server
from vcflow.kubestore import KubeStore
from vcflow.kubestore.client import Response
from vcflow.server.routes import warning_headers

from .conftest import FLOW, Server, Start, jobflow, template, wait_until

DEADLINE = 180.0  # (20 CLI processes on a loaded 2-core machine)


# --- the cap itself -------------------------------------------------------------------------


def _texts(values: list[str]) -> list[str]:
    """The texts of `299 - "text"` values, unquoted (the bounds are of the texts)."""
    quoted = [v.removeprefix('299 - "').removesuffix('"') for v in values]
    return [re.sub(r"\\(.)", r"\1", q) for q in quoted]


def test_warnings_that_fit_are_kept_whole() -> None:
    long = "x" * (warncap.MAX_ITEM * 3)
    assert warncap.capped(["a", long, "a", ""]) == ["a", long]


def test_many_warnings_are_cut_and_counted() -> None:
    given = [f"warning number {i}: " + "y" * 300 for i in range(200)]
    found = warncap.capped(given)
    assert len(found) <= warncap.MAX_COUNT
    assert sum(len(t) for t in found) <= warncap.MAX_TOTAL
    assert all(len(t) <= warncap.MAX_ITEM for t in found)
    assert found[:-1] == [t[: warncap.MAX_ITEM] for t in given[: len(found) - 1]]
    assert found[-1] == f"{200 - (len(found) - 1)} more warnings not shown"


def test_many_short_warnings_stay_fewer_headers_than_python_reads() -> None:
    values = warning_headers([f"w{i}" for i in range(1000)])
    assert len(values) == warncap.MAX_COUNT
    assert _texts(values)[-1] == f"{1000 - warncap.MAX_COUNT + 1} more warnings not shown"


# --- 200 warnings through the server ----------------------------------------------------------


def _cli(state_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vcflow", "--state-dir", str(state_dir), *args]


@contextmanager
def _running(commands: list[list[str]], cwd: Path) -> Iterator[list[subprocess.Popen[str]]]:
    """The commands started together; killed at the end however the test ends."""
    procs: list[subprocess.Popen[str]] = []
    try:
        for command in commands:
            procs.append(
                subprocess.Popen(
                    command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
            )
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


def _run(server: Server, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    with _running([_cli(server.state_dir, *args)], cwd) as (proc,):
        out, err = proc.communicate(timeout=DEADLINE)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _big(count: int, namespace: str | None = None) -> list[dict[str, Any]]:
    """`count` templates with an unknown field each, and one flow of `count` entries with an
    unknown field each: a warning per template and `count` for the flow."""
    docs: list[dict[str, Any]] = []
    for i in range(count):
        doc = template(f"t{i:03d}", "true")
        doc["spec"][f"bogus{i}"] = 1
        docs.append(doc)
    flow = jobflow("big", *(f"t{i:03d}" for i in range(count)))
    for i, entry in enumerate(flow["spec"]["flows"]):
        entry[f"odd{i}"] = 1
    docs.append(flow)
    if namespace is not None:
        for doc in docs:
            doc["metadata"]["namespace"] = namespace
    return docs


def _store(server: Server) -> KubeStore:
    """A KubeStore on the server, found as the CLI finds it (server.json)."""
    remote = owning_server(server.state_dir)
    assert remote is not None, "no server owns the state directory"
    return remote.connect()


def test_200_warnings_applied_through_the_server_in_one_apply(
    start_server: Start, tmp_path: Path
) -> None:
    server = start_server("--runtime", "none")
    manifest = tmp_path / "big.yaml"
    manifest.write_text(yaml.safe_dump_all(_big(100)))
    done = _run(server, tmp_path, "apply", "-f", str(manifest), "--validate=warn")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" created\n") == 101
    assert "jobflow.flow.volcano.sh/big created" in done.stdout
    warnings = done.stderr.splitlines()
    assert all(w.startswith("Warning: ") for w in warnings), done.stderr
    for i in range(100):  # one answer each: all of them
        assert f'unknown field "spec.bogus{i}"' in done.stderr
    flow = [w for w in warnings if "JobFlow default/big" in w]
    assert len(flow) == warncap.MAX_COUNT
    shown = warncap.MAX_COUNT - 1
    assert flow[-1].endswith(f"JobFlow default/big: {100 - shown} more warnings not shown")
    assert all("TemplateNotFound" not in w for w in warnings)
    with server.client() as http:
        listed = http.get(f"{FLOW}/jobtemplates").json()["items"]
        assert len(listed) == 100
        assert len(http.get(f"{FLOW}/jobflows/big").json()["spec"]["flows"]) == 100


def test_unknown_fields_through_the_server_by_validate(start_server: Start, tmp_path: Path) -> None:
    """`--validate` through a server as embedded: strict (the default) refuses before
    anything is sent, ignore leaves out the server's unknown-field warnings too."""
    server = start_server("--runtime", "none")
    manifest = tmp_path / "small.yaml"
    manifest.write_text(yaml.safe_dump_all(_big(2)))
    refused = _run(server, tmp_path, "apply", "-f", str(manifest))
    assert refused.returncode == 1, refused.stdout
    assert 'unknown field "spec.bogus0"' in refused.stderr
    with server.client() as http:
        assert http.get(f"{FLOW}/jobtemplates").json()["items"] == []
    done = _run(server, tmp_path, "apply", "-f", str(manifest), "--validate=ignore")
    assert done.returncode == 0, done.stderr
    assert "unknown field" not in done.stderr
    assert done.stdout.count(" created\n") == 3


def test_python_clients_read_an_answer_of_200_warnings(start_server: Start) -> None:
    """The flow alone, dry-run where its templates are not: a warning per entry for its
    unknown field and one for its missing template — within the bounds, read by httpx and
    by the `kubernetes` package (KubeStore's client)."""
    server = start_server("--runtime", "none")
    flow = _big(100)[-1]
    path = f"{FLOW}/jobflows"
    with server.client() as http:
        answer = http.post(path, params={"dryRun": "All"}, json=flow)
    assert answer.status_code == 201, answer.text
    values = answer.headers.get_list("warning")
    texts = _texts(values)
    assert len(values) <= warncap.MAX_COUNT
    assert sum(len(t) for t in texts) <= warncap.MAX_TOTAL
    assert texts[-1] == f"{200 - len(texts) + 1} more warnings not shown"
    with _store(server) as store:
        got: Response = store.client.request("POST", path, query=[("dryRun", "All")], body=flow)
    assert got.status == 201
    assert list(got.warnings) == texts


def test_a_flow_is_judged_against_the_templates_of_its_input(
    start_server: Start, tmp_path: Path
) -> None:
    """A patch that makes the input's own template invalid: refused by the dry-run, as
    embedded, with nothing written (the server alone would find the template missing)."""
    server = start_server("--runtime", "none")
    flow = jobflow("f", "a")
    flow["spec"]["flows"][0]["patch"] = {"jobSpec": {"minAvailable": 5}}
    manifest = tmp_path / "f.yaml"
    manifest.write_text(yaml.safe_dump_all([template("a", "true"), flow]))
    done = _run(server, tmp_path, "apply", "-f", str(manifest))
    assert done.returncode == 1, done.stdout
    assert "JobFlow default/f" in done.stderr and "after patch" in done.stderr, done.stderr
    with server.client() as http:
        assert http.get(f"{FLOW}/jobtemplates").json()["items"] == []
        assert http.get(f"{FLOW}/jobflows").json()["items"] == []


def test_a_refusal_prints_the_servers_warnings_before_the_error(
    start_server: Start, tmp_path: Path
) -> None:
    """A flow of missing templates, applied again with an entry more: the server refuses
    the spec update (422) and sends the review's warnings beside it (`Warning` headers);
    the CLI prints them, with file and line, before the error, as kubectl does."""
    server = start_server("--runtime", "none")
    manifest = tmp_path / "f.yaml"
    head = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: f\n"
    manifest.write_text(head + "spec:\n  flows:\n  - name: a\n")
    created = _run(server, tmp_path, "apply", "-f", str(manifest))
    assert created.returncode == 0, created.stderr
    manifest.write_text(head + "spec:\n  flows:\n  - name: a\n  - name: b\n")
    done = _run(server, tmp_path, "apply", "-f", str(manifest))
    assert done.returncode == 1, done.stdout
    missing = "not found; the entry will wait (TemplateNotFound) until it is created"
    assert done.stderr.splitlines() == [
        f'Warning: {manifest}:7: JobFlow default/f: spec.flows[0].name: JobTemplate "a" {missing}',
        f'Warning: {manifest}:8: JobFlow default/f: spec.flows[1].name: JobTemplate "b" {missing}',
        f"{manifest}:5: JobFlow default/f: spec: jobflow spec updates are not supported (a flow "
        "runs its spec once: delete the flow first, or run it again as a new flow with vcflow "
        "resubmit jobflow f [-p NAME=VALUE])",
    ]


# --- concurrency and undo ---------------------------------------------------------------------


def test_20_concurrent_applies_sharing_a_new_template_all_succeed(
    start_server: Start, tmp_path: Path
) -> None:
    server = start_server("--runtime", "none")
    commands = []
    for i in range(20):
        manifest = tmp_path / f"f{i}.yaml"
        manifest.write_text(
            yaml.safe_dump_all([template("shared", "true"), jobflow(f"f{i}", "shared")])
        )
        commands.append(_cli(server.state_dir, "apply", "-f", str(manifest)))
    ended: list[tuple[int, str, str]] = []
    with _running(commands, tmp_path) as procs:
        for proc in procs:
            out, err = proc.communicate(timeout=DEADLINE)
            ended.append((proc.returncode, out, err))
    for code, _, err in ended:
        assert code == 0, err
    outs = [out for _, out, _ in ended]
    assert sum("jobtemplate.flow.volcano.sh/shared created" in o for o in outs) == 1
    assert sum("jobtemplate.flow.volcano.sh/shared unchanged" in o for o in outs) == 19
    for i, out in enumerate(outs):
        assert f"jobflow.flow.volcano.sh/f{i} created" in out
    with server.client() as http:
        flows = http.get(f"{FLOW}/jobflows").json()["items"]
        assert sorted(f["metadata"]["name"] for f in flows) == sorted(f"f{i}" for i in range(20))
        assert [
            t["metadata"]["name"] for t in http.get(f"{FLOW}/jobtemplates").json()["items"]
        ] == ["shared"]


def _objects(*docs: dict[str, Any]) -> list[Resource]:
    """The models of `docs`, with the working directory recorded as `vcflow apply` records
    it (else the server records its own, and the next apply of the same input changes it)."""
    models: dict[str, type[Resource]] = {"JobTemplate": JobTemplate, "JobFlow": JobFlow}
    objects = [models[doc["kind"]].model_validate(doc) for doc in docs]
    workdir.stamp(objects, str(Path.cwd()))
    return objects


class _Meanwhile:
    """Another writer's `act`, run just before this store's first real write matching
    (method, path suffix): the race an apply meets between its reads and its writes."""

    def __init__(self, store: KubeStore, method: str, suffix: str, act: Any) -> None:
        self.request = store.client.request
        self.method, self.suffix, self.act, self.done = method, suffix, act, False
        store.client.request = self  # type: ignore[method-assign]

    def __call__(self, method: str, path: str, **options: Any) -> Response:
        query = options.get("query") or ()
        if (
            not self.done
            and method == self.method
            and path.endswith(self.suffix)
            and ("dryRun", "All") not in query
        ):
            self.done = True
            self.act()
        return self.request(method, path, **options)


def test_an_identical_object_created_meanwhile_is_unchanged(start_server: Start) -> None:
    server = start_server("--runtime", "none")
    shared = template("shared", "true")
    with _store(server) as store, _store(server) as other:
        _Meanwhile(store, "POST", "/jobtemplates", lambda: other.apply(_objects(shared)))
        results = store.apply(_objects(shared, jobflow("f", "shared")))
    assert [r.outcome for r in results] == ["unchanged", "created"]


def test_an_object_changed_meanwhile_is_applied_over(start_server: Start) -> None:
    server = start_server("--runtime", "none")
    mine, theirs = template("shared", "true"), template("shared", "false")
    with _store(server) as store, _store(server) as other:
        _Meanwhile(store, "POST", "/jobtemplates", lambda: other.apply(_objects(theirs)))
        results = store.apply(_objects(mine))
        assert [r.outcome for r in results] == ["configured"]
        stored = store.get(JobTemplate, "default", "shared")
    command = stored.spec.tasks[0].template.spec.containers[0].command  # type: ignore[index,union-attr]
    assert command == ["sh", "-c", "true"]


def test_a_failing_later_write_undoes_what_the_apply_wrote(start_server: Start) -> None:
    """Another writer's flow of the same name and another spec comes between the dry-run
    and the write: the update is refused (a flow's spec does not change), and the template
    this apply created is deleted, the one it changed written back."""
    server = start_server("--runtime", "none")
    with _store(server) as store, _store(server) as other:
        store.apply(_objects(template("kept", "echo old")))
        before = store.get(JobTemplate, "default", "kept")
        theirs = jobflow("f", "kept")
        _Meanwhile(store, "POST", "/jobflows", lambda: other.apply(_objects(theirs)))
        given = _objects(template("kept", "echo new"), template("new", "true"), jobflow("f", "new"))
        with pytest.raises(ValidationFailed) as refused:
            store.apply(given)
        assert "jobflow spec updates are not supported" in str(refused.value)
        assert store.names(JobTemplate, "default") == ["kept"]
        after = store.get(JobTemplate, "default", "kept")
        assert after.spec == before.spec, str(refused.value)
        assert [e.name for e in store.get(JobFlow, "default", "f").flows] == ["kept"]


def test_what_cannot_be_undone_is_said(start_server: Start) -> None:
    """A template created by this apply that another writer's flow already uses stays
    (the server refuses its delete), and the error says so."""
    server = start_server("--runtime", "none")
    with _store(server) as store, _store(server) as other:

        def race() -> None:  # (their flow, unfinished, uses the template just made)
            other.apply(_objects(jobflow("theirs", "new")))
            wait_until(lambda: other.get(JobFlow, "default", "theirs").phase, "its phase")
            other.apply(_objects(jobflow("f", "new")))

        _Meanwhile(store, "POST", "/jobflows", race)
        with pytest.raises(ValidationFailed) as refused:
            store.apply(_objects(template("new", "true"), jobflow("f", "new", "x<new")))
        text = str(refused.value)
        assert "JobTemplate default/new: created by this apply and left so: " in text, text
        assert "theirs use it; stop or delete them first" in text
        assert store.names(JobTemplate, "default") == ["new"]
