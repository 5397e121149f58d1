"""kubectl's JSONPath templates on jsonpath-ng (`cli/jsonpath.py`): what kubectl prints for
each form users write, and one-line errors for the ones it refuses."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.cli import jsonpath

LIST: dict[str, Any] = {
    "kind": "List",
    "items": [
        {
            "metadata": {"name": "a", "labels": {"volcano.sh/flow": "f", "team": "blue"}},
            "spec": {"n": 3, "ok": True, "tasks": [{"name": "t1"}, {"name": "t2"}]},
        },
        {"metadata": {"name": "b", "labels": {}}, "spec": {"n": 1, "tasks": []}},
    ],
}


@pytest.mark.parametrize(
    ("template", "printed"),
    [
        ("{.items[*].metadata.name}", "a b"),
        ('{range .items[*]}{.metadata.name}{"\\n"}{end}', "a\nb\n"),
        (
            "{range .items[*]}{.metadata.name}:{range .spec.tasks[*]}[{.name}]{end};{end}",
            "a:[t1][t2];b:;",
        ),
        ("{range .items[*]}{$.kind}/{@.metadata.name} {end}", "List/a List/b "),
        ("{.items[0].metadata.labels.volcano\\.sh/flow}", "f"),
        ("{.items[0].metadata.labels['volcano.sh/flow']}", "f"),
        ("{.items[0].metadata.labels}", '{"volcano.sh/flow":"f","team":"blue"}'),
        ("{.items[0].spec.tasks[*].name}", "t1 t2"),
        ("{.items[0].spec.ok} {.items[*].spec.n}", "true 3 1"),
        ("{.items[-1:].metadata.name}", "b"),
        ("{.items[1:].metadata.name}", "b"),
        ('{.items[?(@.metadata.labels.team=="blue")].metadata.name}', "a"),
        ("{.items[?(@.spec.n<2)].metadata.name}", "b"),
        ("{.items[?(@.spec.ok)].metadata.name}", "a"),
        ("{..name}", "a t1 t2 b"),
        ("{.items[0].nope}|{.items[5].metadata.name}|{.nope.deeper}", "||"),
        ("name: {.items[0].metadata.name}\\n", "name: a\\n"),
        ("{'\\t'}{\"\\u00e9\"}", "\t\u00e9"),
        ('{"}"}', "}"),
        ("no action", "no action"),
    ],
)
def test_templates_print_as_kubectl(template: str, printed: str) -> None:
    assert jsonpath.template(template).render(LIST) == printed


@pytest.mark.parametrize(
    ("template", "error"),
    [
        ("{.items[*", "error parsing jsonpath {.items[*: unclosed action"),
        ("{}", "an empty action"),
        ("{end}", "{end} with no {range}"),
        ("{range .items[*]}x", "{range} with no {end}"),
        ("{.a.}", "a '.' with no field name after it"),
        ("{.a[}", "invalid JSONPath .a["),
        ('{"\\q"}', 'invalid string "\\q"'),
    ],
)
def test_bad_templates_name_what_is_wrong(template: str, error: str) -> None:
    with pytest.raises(jsonpath.TemplateError) as raised:
        jsonpath.template(template)
    assert error in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("spelled", [".metadata.name", "{.metadata.name}", "metadata.name"])
def test_relaxed_paths(spelled: str) -> None:
    assert jsonpath.relaxed(spelled).values(LIST["items"][1]) == ["b"]


@pytest.mark.parametrize("spelled", ["{.a", ".a}", "{}", " "])
def test_bad_relaxed_paths(spelled: str) -> None:
    with pytest.raises(jsonpath.TemplateError):
        jsonpath.relaxed(spelled)


@pytest.mark.parametrize(
    "template",
    ["{" + ".a" * 1000 + "}", "{.items[?(@" + ".a" * 1000 + "=='x')]}"],
    ids=["path", "filter"],
)
def test_a_path_of_a_thousand_steps_is_refused_not_a_recursion_error(template: str) -> None:
    """jsonpath-ng finds values recursively: `get -o jsonpath=` and `--sort-by` with such a
    path said `internal error: RecursionError`."""
    with pytest.raises(jsonpath.TemplateError) as raised:
        jsonpath.template(template).render(LIST)
    assert str(raised.value).endswith("invalid JSONPath: more than 100 steps deep")
    fits = "{" + ".a" * 90 + "}"
    assert jsonpath.template(fits).render({}) == ""
