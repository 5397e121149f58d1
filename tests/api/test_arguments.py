"""Flow arguments given at submit time (`vcflow.api.arguments`): `-p NAME=VALUE` parsed, the
values written into every flow that declares the name, a name none declares refused with
the closest one, and `VCFLOW_ARGS` as the process will read it after the kubelet's `$(VAR)`
expansion."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vcflow.api import arguments
from vcflow.api.errors import ArgumentError
from vcflow.api.jobflow import JobFlow
from vcflow.runtime.launch import expand


def flow(name: str, *declared: dict[str, Any]) -> JobFlow:
    return JobFlow.from_dict(
        {"metadata": {"name": name}, "spec": {"arguments": list(declared), "flows": []}}
    )


def test_given_values_parse_with_equals_in_the_value() -> None:
    assert arguments.parse_given(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (["threshold"], "'threshold' is not NAME=VALUE (as in threshold=0.9)"),
        (["=1"], "'=1' is not NAME=VALUE (as in threshold=0.9)"),
        (["a=1", "a=2"], "a is given twice ('1' and '2')"),
    ],
)
def test_malformed_values_are_usage_errors(texts: list[str], message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        arguments.parse_given(texts)
    assert str(caught.value) == message
    assert caught.value.exit_code == 2


def test_a_value_goes_to_every_flow_declaring_it() -> None:
    first = flow("a", {"name": "threshold", "value": "0.5"}, {"name": "target"})
    second = flow("b", {"name": "threshold"})
    third = flow("c")
    arguments.give([first, second, third], {"threshold": "0.9", "target": "gpu"})
    assert arguments.values_of(first) == {"threshold": "0.9", "target": "gpu"}
    assert arguments.values_of(second) == {"threshold": "0.9"}
    assert arguments.values_of(third) == {}
    assert first.to_dict()["spec"]["arguments"] == [
        {"name": "threshold", "value": "0.9"},
        {"name": "target", "value": "gpu"},
    ]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"treshold": "1"}, 'unknown argument "treshold"; did you mean "threshold"?'),
        ({"zzz": "1"}, 'unknown argument "zzz" (the flows declare: target, threshold)'),
    ],
)
def test_a_name_no_flow_declares_is_refused(given: dict[str, str], message: str) -> None:
    flows = [flow("a", {"name": "threshold"}, {"name": "target"})]
    with pytest.raises(ArgumentError) as caught:
        arguments.give(flows, given)
    assert str(caught.value) == message


def test_without_declared_arguments_the_message_says_so() -> None:
    with pytest.raises(ArgumentError) as caught:
        arguments.give([flow("a")], {"x": "1"})
    assert str(caught.value) == 'unknown argument "x": no flow declares arguments (spec.arguments)'


def test_a_value_must_be_a_string() -> None:
    with pytest.raises(ArgumentError) as caught:
        arguments.give([flow("a", {"name": "x"})], {"x": 0.9})  # type: ignore[dict-item]
    assert str(caught.value) == "argument 'x': the value must be a string, not float"


@pytest.mark.parametrize(
    "value",
    ["plain", "$(HOME)", "$$", "$$(X)", "a$b", "end$", "$$$", 'é ☃ "quoted" \\ back', ""],
)
def test_vcflow_args_reads_as_written_after_the_kubelet_s_expansion(value: str) -> None:
    given = flow("a", {"name": "x", "value": value}, {"name": "y", "value": "2"})
    text = arguments.env_value(given)
    assert json.loads(expand(text, {"HOME": "/root", "X": "x"})) == {"x": value, "y": "2"}


def test_vcflow_args_without_a_dollar_is_the_json_itself() -> None:
    given = flow("a", {"name": "threshold", "value": "0.9"}, {"name": "note", "value": "é"})
    assert arguments.env_value(given) == '{"threshold":"0.9","note":"é"}'
