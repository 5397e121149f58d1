"""`${{ args.X }}` and `${{ outputs.E.K }}` in a job spec's strings (docs/flow-features.md
section 15): replaced, escaped, left alone, or refused with the reference named."""

from __future__ import annotations

import pytest

from vcflow.api import substitution
from vcflow.api.substitution import SubstitutionError

ARGS = {"tag": "3.11-slim", "cpu": "2"}
OUTPUTS = {"evaluate": {"accuracy": 0.93, "best": "train-b", "shape": [2, 3]}}


def sub(data: object) -> object:
    return substitution.substitute(data, ARGS, OUTPUTS)


def test_arguments_and_outputs_are_replaced_in_every_string() -> None:
    data = {
        "image": "python:${{ args.tag }}",
        "command": ["sh", "-c", "echo ${{outputs.evaluate.best}} ${{ outputs.evaluate.accuracy }}"],
        "limits": {"cpu": "${{ args.cpu }}"},
        "replicas": 2,
    }
    assert sub(data) == {
        "image": "python:3.11-slim",
        "command": ["sh", "-c", "echo train-b 0.93"],
        "limits": {"cpu": "2"},
        "replicas": 2,
    }
    assert sub("${{ outputs.evaluate.shape }}") == "[2,3]"  # (JSON for what is not a string)


def test_the_escape_and_other_roots_keep_their_text() -> None:
    assert sub("$${{ args.tag }}") == "${{ args.tag }}"
    assert (
        sub("${{ github.sha }} ${{ item }} ${{ index }}")
        == "${{ github.sha }} ${{ item }} ${{ index }}"
    )
    assert sub("$HOME ${x} {{ args.tag }}") == "$HOME ${x} {{ args.tag }}"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("${{ args.nope }}", "no argument 'nope'"),
        ("${{ args }}", "an argument is args.NAME"),
        ("${{ outputs.train.loss }}", "'train' is not a target with outputs"),
        ("${{ outputs.evaluate.loss }}", "evaluate's outputs have no 'loss'"),
        ("${{ outputs.evaluate }}", "an output is outputs.ENTRY.KEY"),
    ],
)
def test_a_reference_that_cannot_be_resolved_is_named(text: str, says: str) -> None:
    with pytest.raises(SubstitutionError, match=says):
        sub({"image": text})


def test_references_and_the_quantity_form() -> None:
    found = list(substitution.references("a ${{ args.tag }} $${{ args.x }} ${{ outputs.e.k }}"))
    assert [(r.root, r.path) for r in found] == [("args", ("tag",)), ("outputs", ("e", "k"))]
    assert substitution.is_one_reference(" ${{ args.cpu }} ")
    assert not substitution.is_one_reference("${{ args.cpu }}m")
    assert not substitution.is_one_reference("${{ item }}")


def test_the_references_of_one_job_are_bounded() -> None:
    many = " ".join(["${{ args.tag }}"] * (substitution.MAX_REFERENCES + 1))
    with pytest.raises(SubstitutionError, match="more than"):
        sub(many)
