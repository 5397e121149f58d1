"""CEL expressions (`vcflow.api.expressions`, docs/flow-features.md section 13): parsed once
per text, what they read, evaluated to a bool, every problem one line."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api import expressions
from vcflow.api.expressions import ExpressionError, compile_expression


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("args.x $ 1", 8, 'syntax error at column 8: unexpected character "$"'),
        ("args.x = 'a'", 8, 'syntax error at column 8: unexpected character "="'),
        ("args.x == ", 10, "syntax error at column 10: unexpected end of the expression"),
        ("(args.x", 8, "syntax error at column 8: unexpected end of the expression"),
        ("args.x ==\n 1 1", 4, 'syntax error at line 2, column 4: unexpected "1"'),
        ("", 1, "an expression cannot be empty"),
    ],
)
def test_a_syntax_error_is_one_line_with_its_column(text: str, column: int, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert str(caught.value) == message
    assert caught.value.column == column


@pytest.mark.parametrize(
    ("text", "references"),
    [
        ("args.threshold == '1'", {("args", "threshold")}),
        ("outputs['prep-data'].n > 1", {("outputs", "prep-data")}),
        ('outputs["prep-data"].n > 1', {("outputs", "prep-data")}),
        ("phases.train == 'Completed'", {("phases", "train")}),
        (
            "double(outputs.evaluate.accuracy) >= double(args.threshold)",
            {("outputs", "evaluate"), ("args", "threshold")},
        ),
        ("size(args) > 0", {("args", None)}),
        ("outputs[args.which].n > 1", {("outputs", None), ("args", "which")}),
        ("foo.bar", {("foo", "bar")}),
        ("foo", {("foo", None)}),
        (".args.x == 'a'", {("args", "x")}),
        ("has(outputs.train.loss)", {("outputs", "train")}),
        ("args.x.startsWith('a')", {("args", "x")}),
        # a macro's variable is not a reference, in any of the five macros
        ("outputs.train.exists(k, k == 'x')", {("outputs", "train")}),
        ("outputs.train.all(k, k != phases.prep)", {("outputs", "train"), ("phases", "prep")}),
        ("outputs.train.exists_one(k, k == 'x')", {("outputs", "train")}),
        ("size(outputs.train.filter(k, k == 'x')) == 1", {("outputs", "train")}),
        ("outputs.t.map(k, k) == ['a'] && k", {("outputs", "t"), ("k", None)}),
        ("[1, 2].map(x, x * y) == [2]", {("y", None)}),
        ("{'a': 1}.a == 1 && [1][0] == 1", set()),
    ],
)
def test_references(text: str, references: set[tuple[str, str | None]]) -> None:
    assert compile_expression(text).references == references


DOUBLE = "double(outputs.evaluate.accuracy) >= double(args.threshold)"


def test_evaluates_to_a_python_bool() -> None:
    expression = compile_expression(DOUBLE)
    outputs = {"evaluate": {"accuracy": 0.93}}
    assert expression.evaluate({"threshold": "0.9"}, outputs, {}) is True
    assert expression.evaluate({"threshold": "0.95"}, outputs, {}) is False
    phase = compile_expression("phases['prep-data'] == 'Completed' && args.x != '1'")
    assert phase.evaluate({"x": "2"}, {}, {"prep-data": "Completed"}) is True
    assert phase.evaluate({"x": "2"}, {}, {"prep-data": "Failed"}) is False
    nested = compile_expression("outputs.e.sizes.exists(s, s > 3) && outputs.e.ok")
    assert nested.evaluate({}, {"e": {"sizes": [1, 5], "ok": True}}, {}) is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("outputs.evaluate.accuracy > 0.5", "no such member in mapping: 'accuracy'"),
        ("1 / 0 == 1", "modulus or divide by zero"),
        ("args.x + 1 == 2", "found no matching overload for '+' applied to '(string, int)'"),
        ("zz == 1", "undeclared reference to 'zz'"),
        ("args.x", 'the expression gives string "1", not a bool'),
        ("outputs.evaluate", 'the expression gives map {"loss": 0.5}, not a bool'),
        ("1 + 2", "the expression gives int 3, not a bool"),
    ],
)
def test_an_evaluation_error_is_one_line(text: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text).evaluate({"x": "1"}, {"evaluate": {"loss": 0.5}}, {})
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)
    assert caught.value.column is None


@pytest.mark.optimisation
def test_one_text_is_parsed_once() -> None:
    text = "phases.train == 'Completed' && args.cache_test == '1'"
    first = compile_expression(text)
    assert compile_expression(text) is first
    before = expressions._compile.cache_info().hits
    compile_expression(text)
    assert expressions._compile.cache_info().hits == before + 1


def test_the_length_is_bounded_in_bytes() -> None:
    fits = "args.x == '" + "a" * (expressions.MAX_LENGTH - 12) + "'"
    assert len(fits.encode()) == expressions.MAX_LENGTH
    compile_expression(fits)
    over = "args.x == '" + "é" * 507 + "'"  # 1026 bytes, 519 characters
    with pytest.raises(ExpressionError) as caught:
        compile_expression(over)
    assert str(caught.value) == "Too long: may not be longer than 1024 bytes (it has 1026)"


def test_a_deep_nesting_is_refused_not_a_crash() -> None:
    text = "(" * 60 + "true" + ")" * 60
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert "nested too deeply" in str(caught.value)
    fits = "(" * 10 + "true" + ")" * 10
    assert compile_expression(fits).evaluate({}, {}, {}) is True


@pytest.mark.parametrize("depth", [300, 500])
def test_a_nesting_lark_builds_deep_is_refused_not_a_recursion_error(depth: int) -> None:
    """Within MAX_LENGTH, lark parses 500 parentheses, then its tree's `scan_values`
    recursed past Python's limit: `validate` said `internal error: RecursionError`."""
    with pytest.raises(ExpressionError) as caught:
        compile_expression("(" * depth + "1" + ")" * depth)
    assert str(caught.value) == expressions.TOO_DEEP


def test_a_repeated_bad_text_raises_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ExpressionError, match="column 8"):
            compile_expression("args.x $ 2")


@pytest.mark.optimisation
def test_texts_differing_in_literals_share_one_parse() -> None:
    texts = [f"phases['e-{i}'] == 'Completed' && args.shared_parse != '{i}'" for i in (3, 4, 5)]
    before = expressions._shape.cache_info()
    found = [compile_expression(t).references for t in texts]
    after = expressions._shape.cache_info()
    assert after.misses - before.misses == 1
    assert found == [{("phases", f"e-{i}"), ("args", "shared_parse")} for i in (3, 4, 5)]


@pytest.mark.parametrize(
    "text",
    [
        "outputs['it\\'s'].k == 1 && phases[\"p-1\"] == 'x'",
        "outputs['''tri'''].z == 1 && phases[r'raw'] == 'x' && outputs[b'b'].y",
        "outputs['a'] == {'k': 'v'} // a comment's 'quotes'\n && phases['p'] == 'Completed'",
        "1.5e3 > 0x1F && 3u > 2u && args.n == '12' && outputs.e.exists(k1, k1 == k2)",
        "'''line\nbreak''' == args.c && phases['z'] == 'x'",
    ],
)
def test_the_shared_parse_reads_what_the_text_reads(text: str) -> None:
    """The references from a text's shape are those of the text's own parse."""
    own = expressions._shape_of(expressions._parsed(text))
    spans = [(start, end) for _, start, end in own.literals]
    direct = {
        (root, expressions._literal_value(text, spans[key]) if isinstance(key, int) else key)
        for root, key in own.references
    }
    assert compile_expression(text).references == direct


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("outputs['a'b'] == 1", 'syntax error at column 12: unexpected "b"'),
        ("'a\\\nb' == 'x'", 'syntax error at column 1: unexpected character "\'"'),
        ("'x' 'y'", "syntax error at column 5: unexpected \"'y'\""),
    ],
)
def test_a_bad_literal_is_the_text_s_own_error(text: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert str(caught.value) == message


# -- the fan-out's item and index (docs/flow-features.md section 19) ------------------------


def test_item_and_index_are_variables_when_given() -> None:
    picks = compile_expression("item.lr > 0.05 && index < 2")
    assert picks.evaluate({}, {}, {}, item={"lr": 0.1}, index=1) is True
    assert picks.evaluate({}, {}, {}, item={"lr": 0.01}, index=1) is False
    assert compile_expression("item == 'a'").evaluate({}, {}, {}, item="a", index=0) is True
    assert compile_expression("item == null").evaluate({}, {}, {}, item=None, index=0) is True
    assert compile_expression("item[1] == 2").evaluate({}, {}, {}, item=[1, 2], index=0) is True
    assert compile_expression("index == 7").evaluate({}, {}, {}, index=7) is True
    assert compile_expression("item.lr > 0.05").references == {("item", "lr")}


def test_without_an_item_it_is_no_variable() -> None:
    with pytest.raises(ExpressionError, match="undeclared reference to 'item'"):
        compile_expression("item == 1").evaluate({}, {}, {})
    with pytest.raises(ExpressionError, match="undeclared reference to 'index'"):
        compile_expression("index == 1").evaluate({}, {}, {}, item=1)


def test_the_outputs_of_a_target_with_for_are_a_list() -> None:
    outputs: dict[str, Any] = {"train": [{"accuracy": 0.5}, {"accuracy": 0.9}], "prep": {"n": 2}}
    best = compile_expression("outputs.train[1].accuracy > 0.8 && outputs.prep.n == 2")
    assert best.evaluate({}, outputs, {}) is True
    every = compile_expression("outputs.train.all(o, o.accuracy > 0.4)")
    assert every.evaluate({}, outputs, {}) is True
    assert compile_expression("size(outputs.train) == 2").evaluate({}, outputs, {}) is True
