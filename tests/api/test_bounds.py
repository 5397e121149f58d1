"""Input bounds (`vcflow.api.bounds`, applied by `loading`): alias bombs, huge files and deep
nesting are refused in one line naming the file; a large legitimate flow still loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from vcflow.api import bounds, loading, yamlreader
from vcflow.api.errors import ParseError

HEAD = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: a}\n"
BASES = [pytest.param(yaml.SafeLoader, id="pure-python")]
if yaml.__with_libyaml__:
    BASES.insert(0, pytest.param(yaml.CSafeLoader, id="libyaml"))


@pytest.fixture(params=BASES)
def base(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type[Any]:
    monkeypatch.setattr(loading, "KubeSafeLoader", yamlreader.kube_loader(request.param))
    return request.param  # type: ignore[no-any-return]


def billion_laughs(levels: int = 12, width: int = 10) -> str:
    """Each level names the one below `width` times: width**levels scalars from ~1 KB.
    Built by anything that walks the data (a model, a JSON dump), it never ends."""
    lines = [HEAD, f"x0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    lines.append(f"spec: {{tasks: *a{levels - 1}}}")
    return "\n".join(lines) + "\n"


def refused(text: str, source: str = "bomb.yaml") -> str:
    with pytest.raises(ParseError) as info:
        loading.parse_text(text, source)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_billion_laughs_is_refused(base: type[Any]) -> None:
    assert refused(billion_laughs()) == (
        "bomb.yaml:1: invalid YAML: aliases expand the document to more than 5,000,000 nodes"
    )


def test_merge_keys_count_as_aliases(base: type[Any]) -> None:
    text = billion_laughs().replace("spec: {tasks: *a11}", "b: &m {k: *a11}\nspec: {<<: *m}")
    assert "aliases expand the document to more than" in refused(text)


def test_an_alias_to_a_big_string_is_refused(base: type[Any]) -> None:
    """A few uses of one 1 MiB scalar are ~1 GB once dumped: text is bounded too."""
    big = "x" * (1024 * 1024)
    text = f"{HEAD}a: &s {big}\nspec: [{', '.join(['*s'] * 1000)}]\n"
    assert refused(text).endswith("aliases expand the document to more than 64 MiB of text")


def test_bombs_are_refused_in_later_documents_too(base: type[Any]) -> None:
    message = refused(HEAD + "---\n" + billion_laughs())
    assert message.startswith("bomb.yaml:5 (document 2): invalid YAML: aliases expand")


@pytest.mark.parametrize(
    ("text", "source", "message"),
    [
        pytest.param("[" * 100_000, "deep.yaml", "deep.yaml: invalid YAML", id="yaml-flow"),
        pytest.param(
            "a:\n" + "".join(" " * i + "- \n" for i in range(1, 2000)),
            "deep.yaml",
            "deep.yaml: invalid YAML",
            id="yaml-block",
        ),
        pytest.param("[" * 100_000, "deep.json", "deep.json: invalid JSON", id="json"),
        pytest.param(
            json.dumps({"kind": "JobTemplate", "spec": {"x": json.loads("[" * 900 + "]" * 900)}}),
            "deep.json",
            "deep.json: invalid JSON",
            id="json-that-parses",
        ),
        pytest.param(
            "kind: JobTemplate\nspec: {x: " + "[" * 101 + "]" * 101 + "}\n",
            "deep.yaml",
            "deep.yaml: invalid YAML",
            id="yaml-just-too-deep",
        ),
    ],
)
def test_deep_nesting_is_one_line(base: type[Any], text: str, source: str, message: str) -> None:
    assert refused(text, source) == f"{message}: nested too deeply (more than 100 levels)"


def test_nesting_up_to_the_bound_is_read(base: type[Any]) -> None:
    depth = bounds.MAX_DEPTH - 1  # the document's own mapping is a level
    (doc,) = loading.parse_text("a: " + "[" * depth + "]" * depth + "\n", "x.yaml")
    assert doc.data["a"] == json.loads("[" * depth + "]" * depth)


def test_a_file_over_the_size_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_bytes(b"# " + b"x" * bounds.MAX_FILE_BYTES + b"\n")
    with pytest.raises(ParseError) as info:
        loading.read_documents([str(path)])
    assert str(info.value) == f"{path}: larger than 32 MiB, the most vcflow reads from one file"


def test_an_endless_file_is_refused() -> None:
    with pytest.raises(ParseError, match=r"^/dev/zero: larger than 32 MiB"):
        loading.read_documents(["/dev/zero"])


def test_a_large_flow_sharing_anchors_loads(base: type[Any]) -> None:
    """7,000 entries, each naming a shared patch and dependsOn through aliases: ~280,000
    nodes once expanded, far inside the alias bounds (and, as JSON, ~1.4 MiB: within the
    1.5 MiB an object may be; 10,000 such entries make a flow the Kubernetes API refuses)."""
    patch = (
        "patch: &p {jobSpec: {tasks: [{name: main, template: {spec: {containers: "
        "[{name: c, env: [{name: A, value: '1'}, {name: B, value: '2'}]}]}}}]}}"
    )
    lines = [
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: big}\nspec:",
        "  flows:",
        f"  - {{name: e00000, {patch}, dependsOn: &d {{targets: [root]}}}}",
    ]
    lines += [f"  - {{name: e{i:05d}, patch: *p, dependsOn: *d}}" for i in range(1, 7_000)]
    (doc,) = loading.parse_text("\n".join(lines) + "\n", "big.yaml")
    flows = doc.data["spec"]["flows"]
    assert len(flows) == 7_000
    assert flows[-1]["patch"]["jobSpec"]["tasks"][0]["name"] == "main"
