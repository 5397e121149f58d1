"""Fuzzing `vcflow validate`: random text and mutated example manifests never crash it.

Whatever the input, the answer is exit 0 or 1 and every stderr line is a one-line message —
never a traceback, never an internal error.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vcflow.api import expressions
from vcflow.cli.app import app

# celpy raises the recursion limit when its environment is made, which a manifest with a
# `when` does first: made here, before hypothesis runs (it refuses a limit changed inside it)
expressions.compile_expression("true")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOURCES = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
EXAMPLE_BYTES = [p.read_bytes() for p in SOURCES]
EXAMPLE_JSON = [
    json.dumps(doc, indent=1) for p in SOURCES for doc in yaml.safe_load_all(p.read_text()) if doc
]
RUNNER = CliRunner()
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def assert_clean(path: Path) -> None:
    result = RUNNER.invoke(app, ["validate", "-f", str(path)])
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert "internal error" not in result.stderr, result.stderr
    if result.exit_code == 1:
        lines = result.stderr.splitlines()
        assert lines, "exit 1 without a message"
        assert all(line.strip() for line in lines), result.stderr


def _flip(data: bytes, draw: st.DrawFn) -> bytes:
    if not data:
        return data
    i = draw(st.integers(0, len(data) - 1))
    return data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]


def _lines(data: bytes, draw: st.DrawFn) -> bytes:
    lines = data.split(b"\n")
    i = draw(st.integers(0, len(lines) - 1))
    op = draw(st.sampled_from(["delete", "duplicate", "indent", "dedent", "swap"]))
    if op == "delete":
        del lines[i]
    elif op == "duplicate":
        lines.insert(i, lines[i])
    elif op == "indent":
        lines[i] = b" " * draw(st.integers(1, 6)) + lines[i]
    elif op == "dedent":
        lines[i] = lines[i].lstrip(b" ")
    else:
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def _truncate(data: bytes, draw: st.DrawFn) -> bytes:
    return data[: draw(st.integers(0, len(data)))]


def _insert_text(data: bytes, draw: st.DrawFn) -> bytes:
    i = draw(st.integers(0, len(data)))
    text = draw(st.text(min_size=1, max_size=12)).encode("utf-8", "surrogatepass")
    return data[:i] + text + data[i:]


MUTATIONS = [_flip, _lines, _truncate, _insert_text]


@st.composite
def mutated_example(draw: st.DrawFn) -> bytes:
    data = draw(st.sampled_from(EXAMPLE_BYTES))
    for _ in range(draw(st.integers(1, 4))):
        data = draw(st.sampled_from(MUTATIONS))(data, draw)
    return data


@FUZZ
@given(data=mutated_example())
def test_mutated_examples(scratch: Path, data: bytes) -> None:
    path = scratch / "mutated.yaml"
    path.write_bytes(data)
    assert_clean(path)


@FUZZ
@given(text=st.text(max_size=300))
def test_random_text(scratch: Path, text: str) -> None:
    path = scratch / "random.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    assert_clean(path)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("{}[]:,-'\"#&*!|>? \n\tab01")), max_size=80))
def test_random_yaml_punctuation(scratch: Path, text: str) -> None:
    path = scratch / "punctuation.yaml"
    path.write_text(text, encoding="utf-8")
    assert_clean(path)


@FUZZ
@given(data=st.data())
def test_mutated_json(scratch: Path, data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(EXAMPLE_JSON)).encode()
    for _ in range(data.draw(st.integers(1, 3))):
        text = data.draw(st.sampled_from(MUTATIONS))(text, data.draw)
    path = scratch / "mutated.json"
    path.write_bytes(text)
    assert_clean(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@FUZZ
@given(
    kind=st.sampled_from(["JobFlow", "JobTemplate"]),
    field=st.sampled_from(["spec", "metadata", "status"]),
    value=json_values,
)
def test_random_values_in_known_kinds(scratch: Path, kind: str, field: str, value: object) -> None:
    doc = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": kind, "metadata": {"name": "x"}}
    doc[field] = value
    path = scratch / "values.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert_clean(path)
