"""vcflow.local.manifests: paths → reviewed objects, every problem collected in input order."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcflow.api.errors import ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.local import manifests

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_load_the_patch_example() -> None:
    loaded = manifests.load([str(EXAMPLES / "jobflow" / "patch")])
    assert loaded.errors == ()
    assert loaded.warnings == ()
    assert [type(o).__name__ for o in loaded.objects] == ["JobTemplate", "JobTemplate", "JobFlow"]
    assert [item.obj.name for item in loaded.valid] == ["train", "prepare", "patched"]
    loaded.raise_if_invalid()


def test_problems_keep_input_order_and_valid_items_are_listed(tmp_path: Path) -> None:
    bad_flow = tmp_path / "a.yaml"
    bad_flow.write_text(
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\n"
        "spec: {flows: [{name: a, dependsOn: {targets: [a]}}]}\n"
    )
    unreadable = tmp_path / "b.yaml"
    unreadable.write_text("key: [unclosed\n")
    loaded = manifests.load([str(bad_flow), str(unreadable), str(EXAMPLES / "jobflow")])
    sources = [e.origin.source for e in loaded.errors]
    assert sources == [str(bad_flow), str(unreadable)]
    assert "cycle a → a" in loaded.errors[0].message
    assert loaded.errors[0].origin.line == 4
    assert str(loaded.errors[1]).startswith(f"{unreadable}:2: invalid YAML: ")
    assert [i.obj.name for i in loaded.valid] == ["test", "a", "b", "c", "d", "e"]
    with pytest.raises(ValidationFailed) as info:
        loaded.raise_if_invalid()
    assert info.value.errors == list(loaded.errors)
    assert len(str(info.value).splitlines()) == 2


def test_flow_entries_resolve_against_given_templates() -> None:
    alone = manifests.load([str(EXAMPLES / "jobflow" / "JobFlow.yaml")])
    assert len(alone.warnings) == 5
    together = manifests.load([str(EXAMPLES / "jobflow")])
    assert together.warnings == ()


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("", ()),
        ("spec", ("spec",)),
        ("spec.flows[2].dependsOn.targets[0]", ("spec", "flows", 2, "dependsOn", "targets", 0)),
        ("metadata.labels[app.kubernetes.io/x]", ("metadata", "labels", "app.kubernetes.io/x")),
    ],
)
def test_parse_path(path: str, parts: tuple[str | int, ...]) -> None:
    assert manifests.parse_path(path) == parts


def test_reference_is_kubectl_style() -> None:
    flow = JobFlow.from_dict({"metadata": {"name": "demo"}})
    template = JobTemplate.from_dict({"metadata": {"name": "t"}})
    assert manifests.reference(flow) == "jobflow.flow.volcano.sh/demo"
    assert manifests.reference(template) == "jobtemplate.flow.volcano.sh/t"
