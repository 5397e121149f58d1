"""Admission of `${{ }}` references a flow will substitute (`vcflow.admission.references`,
docs/flow-features.md section 15): what can be known before the flow runs is refused at
once, naming the entry's field and the JobTemplate."""

from __future__ import annotations

from typing import Any

from tests.admission.test_flow_features import problems, template

from vcflow.api.jobtemplate import JobTemplate


def flow(*entries: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {"flows": list(entries), **spec},
    }


def referring(name: str, image: str, cpu: str = "1") -> JobTemplate:
    pod = {
        "restartPolicy": "Never",
        "containers": [{"name": "m", "image": image, "resources": {"limits": {"cpu": cpu}}}],
    }
    return template(name, tasks=[{"name": "main", "replicas": 1, "template": {"spec": pod}}])


ARGS = [{"name": "tag", "value": "3.11"}]


def test_declared_arguments_and_targets_outputs_are_accepted() -> None:
    data = flow(
        {"name": "a"},
        {"name": "b", "dependsOn": {"targets": ["a"]}},
        arguments=ARGS,
    )
    t = referring("b", "python:${{ args.tag }}-${{ outputs.a.flavour }}", "${{ outputs.a.cpus }}")
    assert problems(data, template("a"), t) == ([], [])


def test_an_undeclared_argument_and_a_non_target_are_refused() -> None:
    data = flow({"name": "a"}, {"name": "b", "template": "t"}, arguments=ARGS)
    t = referring("t", "python:${{ args.tga }} ${{ outputs.a.n }} ${{ args }}")
    errors, _ = problems(data, template("a"), t)
    assert errors == [
        'spec.flows[1].template: JobTemplate "t": ${{ args.tga }}: no argument "tga" is '
        "declared (spec.arguments)",
        'spec.flows[1].template: JobTemplate "t": ${{ outputs.a.n }}: "a" is not a target of '
        "entry b (its targets: none)",
        'spec.flows[1].template: JobTemplate "t": ${{ args }}: an argument is args.NAME',
    ]


def test_a_flow_without_the_language_keeps_the_text_and_refuses_a_reference_quantity() -> None:
    image_only = referring("a", "python:${{ args.tag }}")
    assert problems(flow({"name": "a"}), image_only) == ([], [])  # (not substituted: a string)
    quantity = referring("b", "x", "${{ args.cpu }}")
    errors, _ = problems(flow({"name": "b"}), quantity)
    assert len(errors) == 1
    assert errors[0].startswith('spec.flows[0].name: JobTemplate "b": Invalid value: ')
    assert "only when it uses the flow language" in errors[0]
