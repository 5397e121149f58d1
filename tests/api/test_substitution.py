"""`${{ args.X }}` and `${{ outputs.E.K }}` in a job spec's strings (docs/flow-features.md
section 15): replaced, escaped, left alone, or refused with the reference named."""

from __future__ import annotations

import re

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
    assert not substitution.is_one_reference("${{ github.sha }}")


def test_the_references_of_one_job_are_bounded() -> None:
    many = " ".join(["${{ args.tag }}"] * (substitution.MAX_REFERENCES + 1))
    with pytest.raises(SubstitutionError, match="more than"):
        sub(many)


# -- the fan-out's item and index (docs/flow-features.md section 19) ------------------------


def item_sub(data: object, item: object, index: int = 3) -> object:
    return substitution.substitute(data, ARGS, OUTPUTS, item=item, index=index)


def test_item_and_index_are_replaced_in_an_item_s_job() -> None:
    item = {"lr": 0.1, "name": "b", "opt": {"kind": "adam", "betas": [0.9, 0.99]}}
    data = {
        "image": "python:${{ args.tag }}",
        "command": ["train", "--lr=${{ item.lr }}", "${{ item.name }}", "${{ index }}"],
        "env": "${{ item.opt.kind }} ${{ item.opt.betas }} ${{ item.opt }}",
    }
    assert item_sub(data, item) == {
        "image": "python:3.11-slim",
        "command": ["train", "--lr=0.1", "b", "3"],
        "env": 'adam [0.9,0.99] {"kind":"adam","betas":[0.9,0.99]}',
    }
    assert item_sub("${{ item }}", item) == (
        '{"lr":0.1,"name":"b","opt":{"kind":"adam","betas":[0.9,0.99]}}'
    )
    assert item_sub("${{ item }}", "plain text") == "plain text"  # (a string as it is)
    assert item_sub("${{ item }} ${{ index }}", None, 0) == "null 0"
    assert item_sub("$${{ item }}", 1) == "${{ item }}"


def test_without_an_item_item_and_index_stay_as_written() -> None:
    assert (
        sub("${{ item.lr }} ${{ index }} ${{ item }}") == "${{ item.lr }} ${{ index }} ${{ item }}"
    )


@pytest.mark.parametrize(
    ("text", "item", "says"),
    [
        ("${{ item.lr }}", {"rate": 1}, "item has no 'lr'"),
        ("${{ item.opt.kind }}", {"opt": {"name": 1}}, "item.opt has no 'kind'"),
        ("${{ item.opt.kind }}", {"opt": 3}, "item.opt is a number, not an object with 'kind'"),
        ("${{ item.lr }}", "text", "item is a string, not an object with 'lr'"),
        ("${{ item.lr }}", [1], "item is a list, not an object with 'lr'"),
        ("${{ item..lr }}", {"lr": 1}, "an item is item or item.KEY"),
        ("${{ index.x }}", 1, "the item's index is index"),
    ],
)
def test_an_item_reference_that_cannot_be_resolved_is_named(
    text: str, item: object, says: str
) -> None:
    with pytest.raises(SubstitutionError, match=re.escape(says)):
        item_sub({"image": text}, item)


def test_item_references_are_found_with_all_roots_and_may_be_a_quantity() -> None:
    text = "${{ args.tag }} ${{ item.cpu }} ${{ index }}"
    assert [r.root for r in substitution.references(text)] == ["args"]
    found = substitution.references(text, substitution.ALL_ROOTS)
    assert [(r.root, r.path) for r in found] == [
        ("args", ("tag",)),
        ("item", ("cpu",)),
        ("index", ()),
    ]
    assert substitution.is_one_reference("${{ item.cpu }}")
