"""Input that used to end in `internal error` or be silently misread, refused (or read as
YAML means it) in one line naming the file and line: numbers of thousands of digits, lone
surrogates, JSON's duplicate keys and NaN, YAML 1.1's boolean keys, merge keys."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from vcflow.api import jsontext, loading, yamlreader
from vcflow.api.errors import ParseError

BASES = [pytest.param(yaml.SafeLoader, id="pure-python")]
if yaml.__with_libyaml__:
    BASES.insert(0, pytest.param(yaml.CSafeLoader, id="libyaml"))

HEAD = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {name: t}\n"


@pytest.fixture(params=BASES, autouse=True)
def base(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type[Any]:
    monkeypatch.setattr(loading, "KubeSafeLoader", yamlreader.kube_loader(request.param))
    return request.param  # type: ignore[no-any-return]


def refused(text: str, source: str = "m.yaml") -> str:
    with pytest.raises(ParseError) as caught:
        loading.parse_text(text, source)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_number_of_5000_digits_is_refused_with_its_line() -> None:
    message = refused(HEAD + "spec:\n  minAvailable: " + "9" * 5000 + "\n")
    assert message == (
        "m.yaml:5: invalid YAML: a number of 5000 digits: more than 32, the most vcflow reads "
        "(Kubernetes' integers are 64-bit: 19)"
    )


def test_a_number_of_5000_digits_in_json_too() -> None:
    text = '{"apiVersion": "v1",\n "kind": "x",\n "n": ' + "9" * 5000 + "}"
    assert refused(text, "m.json").startswith("m.json:3: invalid JSON: a number of 5000 digits")


def test_json_duplicate_keys_are_refused_as_yamls_are() -> None:
    text = '{"apiVersion": "v1",\n "kind": "x",\n "kind": "y"}'
    assert refused(text, "m.json") == 'm.json:3: invalid JSON: duplicate key "kind" in an object'


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_has_no_nan_or_infinity(constant: str) -> None:
    message = refused('{"a": ' + constant + "}", "m.json")
    assert message.startswith("m.json:1: invalid JSON:") and "is not a JSON number" in message


def test_a_lone_surrogate_in_json_is_refused_a_pair_is_a_character() -> None:
    message = refused('{"a": "ok",\n "b": "\\ud800"}', "m.json")
    assert message == (
        "m.json:2: invalid JSON: \\ud800 is a lone surrogate, not a character (text must be UTF-8)"
    )
    (doc,) = loading.parse_text('{"a": "\\ud83d\\ude00"}', "m.json")
    assert doc.data == {"a": "\U0001f600"}


def test_a_lone_surrogate_in_yaml_is_refused() -> None:
    message = refused(HEAD + 'spec: {a: "\\ud800"}\n')
    assert message.startswith("m.yaml:") and "invalid YAML" in message


@pytest.mark.parametrize("word", ["on", "off", "yes", "no", "y", "n", "True", "false"])
def test_a_yaml_1_1_boolean_key_says_so(word: str) -> None:
    message = refused(HEAD + f"spec:\n  {word}: 1\n")
    meaning = "true" if word.lower() in ("on", "yes", "y", "true") else "false"
    assert message == (
        f"m.yaml:5: invalid YAML: key {word} is read as the boolean {meaning} (YAML 1.1, as "
        f'Kubernetes reads YAML), not as the word "{word}": quote it if you mean the word'
    )


def test_a_quoted_boolean_word_is_a_key() -> None:
    (doc,) = loading.parse_text(HEAD + 'spec:\n  "on": 1\n', "m.yaml")
    assert doc.data["spec"] == {"on": 1}


def test_an_explicit_key_after_a_merge_key_overrides_it_as_yaml_means() -> None:
    text = HEAD + "spec:\n  base: &b {a: 1, c: 3}\n  over:\n    <<: *b\n    a: 2\n"
    (doc,) = loading.parse_text(text, "m.yaml")
    assert doc.data["spec"]["over"] == {"a": 2, "c": 3}


def test_own_keys_after_a_merge_key_are_still_unique() -> None:
    text = HEAD + "spec:\n  base: &b {a: 1}\n  over:\n    <<: *b\n    c: 2\n    c: 3\n"
    assert 'mapping key "c" already defined at line 8' in refused(text)


def test_deep_json_is_refused_without_recursion() -> None:
    with pytest.raises(jsontext.Invalid, match="nested too deeply"):
        jsontext.loads('{"a":' * 100_000 + "1" + "}" * 100_000)


def test_an_object_larger_than_the_kubernetes_api_stores_is_refused() -> None:
    huge = "x" * (1536 * 1024)
    message = refused("a: 1\n---\n" + HEAD + f"spec: {{note: {huge}}}\n")
    assert message.startswith("m.yaml:3 (document 2): JobTemplate default/t: the object is ")
    assert "more than 1,572,864 (1.5 MiB)" in message
    listed = '{"kind": "List", "items": [{"kind": "x", "metadata": {"name": "n"}, "a": "%s"}]}'
    assert "x default/n: the object is" in refused(listed % huge, "m.json")


def test_a_big_file_of_small_objects_is_read() -> None:
    small = HEAD + "spec: {note: " + "y" * 500_000 + "}\n"
    assert len(loading.parse_text("---\n".join([small] * 4), "m.yaml")) == 4
