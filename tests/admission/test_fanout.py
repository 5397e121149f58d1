"""Admission of an entry's fan-out `for` (`vcflow.admission.fanout`, docs/flow-features.md
section 19): its source, its bound, its parallelism, the names of its items' vcjobs, and
`item`/`index` in expressions and `${{ }}` references. One line per problem, naming the
field."""

from __future__ import annotations

from typing import Any

import pytest
from tests.admission.test_flow_features import problems, template

from vcflow.admission import fanout
from vcflow.api.foreach import MAX_ITEMS
from vcflow.api.jobtemplate import JobTemplate


def flow(*entries: dict[str, Any], name: str = "f", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"flows": list(entries), **spec},
    }


def errors_of(data: dict[str, Any], *templates: JobTemplate) -> list[str]:
    errors, _ = problems(data, *templates)
    return errors


PREP = {"name": "prep"}
CONFIGS = [{"name": "configs", "value": '[{"lr": 0.1}, {"lr": 0.01}]'}]


def train(**spec: Any) -> dict[str, Any]:
    return {"name": "train", "template": "trainer", "dependsOn": {"targets": ["prep"]}, **spec}


GOOD = [
    ("items", flow(PREP, train(**{"for": {"items": [{"lr": 0.1}, "x", 3]}}))),
    ("empty-items", flow(PREP, train(**{"for": {"items": []}}))),
    ("from-argument", flow(PREP, train(**{"for": {"fromArgument": "configs"}}), arguments=CONFIGS)),
    ("from-output", flow(PREP, train(**{"for": {"fromOutput": "prep.configs"}}))),
    ("dotted-key", flow(PREP, train(**{"for": {"fromOutput": "prep.a.b"}}))),
    ("parallelism", flow(PREP, train(**{"for": {"items": [1], "parallelism": 1}}))),
    ("max-items", flow(PREP, train(**{"for": {"items": [0] * MAX_ITEMS}}))),
    (
        "item-switch",
        flow(
            PREP,
            {
                "name": "train",
                "dependsOn": {"targets": ["prep"]},
                "switch": [
                    {"when": "item.lr > 0.05 && index < 3", "template": "big"},
                    {"template": "trainer"},
                ],
                "for": {"items": [{"lr": 0.1}]},
            },
        ),
    ),
    # `<entry>-<digits>` of an entry without for, or `<entry>-<not digits>`: no item's name
    ("like-an-item-of-none", flow(PREP, train(**{"for": {"items": [1]}}), {"name": "prep-1"})),
    ("not-digits", flow(PREP, train(**{"for": {"items": [1]}}), {"name": "train-x"})),
]


@pytest.mark.parametrize("data", [c[1] for c in GOOD], ids=[c[0] for c in GOOD])
def test_a_good_for_is_admitted(data: dict[str, Any]) -> None:
    errors, warnings = problems(data, template("trainer"), template("big"), template("prep"))
    assert errors == []
    assert warnings == []


BAD = [
    (
        "two-sources",
        flow(PREP, train(**{"for": {"items": [1], "fromOutput": "prep.configs"}})),
        ["spec.flows[1].for: give exactly one of items, fromArgument, fromOutput"],
    ),
    (
        "no-source",
        flow(PREP, train(**{"for": {"parallelism": 2}})),
        ["spec.flows[1].for: give exactly one of items, fromArgument, fromOutput"],
    ),
    (
        "too-many-items",
        flow(PREP, train(**{"for": {"items": [0] * (MAX_ITEMS + 1)}})),
        ["spec.flows[1].for.items: Too many: 10001: must have at most 10000 items"],
    ),
    (
        "undeclared-argument",
        flow(PREP, train(**{"for": {"fromArgument": "config"}}), arguments=CONFIGS),
        [
            'spec.flows[1].for.fromArgument: no argument "config" is declared '
            '(spec.arguments); did you mean "configs"?'
        ],
    ),
    (
        "no-arguments",
        flow(PREP, train(**{"for": {"fromArgument": "configs"}})),
        ['spec.flows[1].for.fromArgument: no argument "configs" is declared (spec.arguments)'],
    ),
    (
        "argument-not-json",
        flow(
            PREP,
            train(**{"for": {"fromArgument": "configs"}}),
            arguments=[{"name": "configs", "value": "[1, 2"}],
        ),
        [
            'spec.flows[1].for.fromArgument: argument "configs" is not a JSON list: '
            "Expecting ',' delimiter: line 1 column 6 (char 5)"
        ],
    ),
    (
        "argument-not-a-list",
        flow(
            PREP,
            train(**{"for": {"fromArgument": "configs"}}),
            arguments=[{"name": "configs", "value": '{"lr": 0.1}'}],
        ),
        ['spec.flows[1].for.fromArgument: argument "configs" is not a JSON list: it is an object'],
    ),
    (
        "argument-without-value",  # (said by the arguments' check; nothing more)
        flow(
            PREP,
            train(**{"for": {"fromArgument": "configs"}}),
            arguments=[{"name": "configs"}],
        ),
        [
            'spec.arguments[0]: required argument "configs" has no value: give it with -p '
            "configs=..."
        ],
    ),
    (
        "output-not-target-key",
        flow(PREP, train(**{"for": {"fromOutput": "prep"}})),
        [
            'spec.flows[1].for.fromOutput: Invalid value: "prep": must be TARGET.KEY, a '
            "target of the entry (dependsOn.targets) and the key of its outputs that holds a "
            "JSON list"
        ],
    ),
    (
        "output-of-a-non-target",
        flow(PREP, {"name": "other"}, train(**{"for": {"fromOutput": "other.configs"}})),
        [
            'spec.flows[2].for.fromOutput: "other" is not a target of entry train (its targets: '
            "prep)"
        ],
    ),
    (
        "output-without-targets",
        flow({"name": "train", "template": "trainer", "for": {"fromOutput": "prep.configs"}}),
        [
            'spec.flows[0].for.fromOutput: "prep" is not a target of entry train: it has no '
            "dependsOn.targets, whose outputs fromOutput reads"
        ],
    ),
    (
        "parallelism-zero",
        flow(PREP, train(**{"for": {"items": [1], "parallelism": 0}})),
        ["spec.flows[1].for.parallelism: Invalid value: 0: must be greater than or equal to 1"],
    ),
    (
        "parallelism-too-large",
        flow(PREP, train(**{"for": {"items": [1], "parallelism": 2**31}})),
        [
            "spec.flows[1].for.parallelism: Invalid value: 2147483648: must be less than or "
            "equal to 2147483647"
        ],
    ),
    (
        "exit-handler",
        flow(
            PREP,
            {"name": "notify", "template": "trainer", "for": {"items": [1]}},
            onExit=["notify"],
        ),
        [
            "spec.flows[1].for: an exit handler (spec.onExit) runs once, after every other "
            "entry has ended; it may not have for"
        ],
    ),
    (
        "entry-named-as-an-item",
        flow(PREP, train(**{"for": {"items": [1]}}), {"name": "train-12"}),
        [
            'spec.flows[2].name: entry "train-12" is named as item 12 of entry train, which '
            "has for: their vcjobs would have one name (<flow>-train-<index>); rename it"
        ],
    ),
    (
        "last-item-name-too-long",
        flow(PREP, {"name": "t" * 59, "template": "trainer", "for": {"items": list(range(11))}}),
        [
            f'spec.flows[1].name: generated vcjob name "f-{"t" * 59}-10" (of item 10, '
            "for's last): name part must be no more than 63 characters"
        ],
    ),
    (
        "worst-case-name-too-long",
        flow(
            PREP,
            {
                "name": "t" * 57,
                "template": "trainer",
                "dependsOn": {"targets": ["prep"]},
                "for": {"fromOutput": "prep.configs"},
            },
        ),
        [
            f'spec.flows[1].name: generated vcjob name "f-{"t" * 57}-9999" (of item 9999: '
            "fromOutput may give up to 10000 items): name part must be no more than 63 "
            "characters"
        ],
    ),
    (
        "item-in-when",
        flow(PREP, train(when="index == 0", **{"for": {"items": [1]}})),
        [
            'spec.flows[1].when: unknown variable "index": a when reads args, outputs and '
            "phases (item and index: in the switch cases of an entry with for)"
        ],
    ),
    (
        "item-in-a-switch-without-for",
        flow(
            PREP,
            {"name": "train", "switch": [{"when": "item.lr > 0.1", "template": "trainer"}]},
        ),
        [
            'spec.flows[1].switch[0].when: unknown variable "item": a when reads args, '
            "outputs and phases (item and index: in the switch cases of an entry with for)"
        ],
    ),
    (
        "unknown-in-a-for-switch",
        flow(
            PREP,
            {
                "name": "train",
                "for": {"items": [1]},
                "switch": [{"when": "items[0] > 1", "template": "trainer"}],
            },
        ),
        [
            'spec.flows[1].switch[0].when: unknown variable "items": a switch case of an entry '
            "with for reads args, outputs, phases, item and index"
        ],
    ),
]


@pytest.mark.parametrize(("data", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_bad_for_is_one_clear_line(data: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(data) == expected


def test_the_pod_name_of_the_last_item_is_checked() -> None:
    data = flow({"name": "t" * 53, "template": "trainer", "for": {"items": list(range(11))}})
    assert errors_of(data, template("trainer")) == [
        f'spec.flows[0].name: generated pod name "f-{"t" * 53}-10-main-0": name part must be '
        "no more than 63 characters"
    ]
    without = flow({"name": "t" * 53, "template": "trainer"})
    assert problems(without, template("trainer")) == ([], [])


def test_a_refused_source_says_nothing_of_names() -> None:
    data = flow(
        {"name": "t" * 57, "template": "trainer", "for": {"fromArgument": "configs"}},
        arguments=[{"name": "configs", "value": "nope"}],
    )
    assert errors_of(data) == [
        'spec.flows[0].for.fromArgument: argument "configs" is not a JSON list: Expecting '
        "value: line 1 column 1 (char 0)"
    ]


# -- ${{ item }} and ${{ index }} --------------------------------------------------------------


def referring(name: str, image: str) -> JobTemplate:
    pod = {"restartPolicy": "Never", "containers": [{"name": "m", "image": image}]}
    return template(name, tasks=[{"name": "main", "replicas": 1, "template": {"spec": pod}}])


def test_item_and_index_references_need_a_for() -> None:
    t = referring("trainer", "x:${{ item.lr }}-${{ index }}-${{ item }}")
    data = flow(PREP, train(), {"name": "other", "template": "trainer"})
    assert errors_of(data, t, template("prep")) == [
        'spec.flows[1].template: JobTemplate "trainer": ${{ item.lr }}: item is only for an '
        "entry with for",
        'spec.flows[1].template: JobTemplate "trainer": ${{ index }}: index is only for an '
        "entry with for",
        'spec.flows[1].template: JobTemplate "trainer": ${{ item }}: item is only for an entry '
        "with for",
        'spec.flows[2].template: JobTemplate "trainer": ${{ item.lr }}: item is only for an '
        "entry with for",
        'spec.flows[2].template: JobTemplate "trainer": ${{ index }}: index is only for an '
        "entry with for",
        'spec.flows[2].template: JobTemplate "trainer": ${{ item }}: item is only for an entry '
        "with for",
    ]


def test_item_references_of_a_for_entry_are_accepted() -> None:
    t = referring("trainer", "x:${{ item.lr }}-${{ index }}-${{ item }}")
    for spec in (
        {"items": [{"lr": 0.1}, {"lr": 0.2}]},
        {"fromArgument": "configs"},
        {"fromOutput": "prep.configs"},
    ):
        data = flow(PREP, train(**{"for": spec}), arguments=CONFIGS)
        errors, warnings = problems(data, t, template("prep"))
        assert errors == []
        assert warnings == []


def test_a_bad_item_reference_form_is_refused() -> None:
    t = referring("trainer", "x:${{ index.x }}-${{ item..a }}")
    data = flow(PREP, train(**{"for": {"items": [1]}}))
    assert errors_of(data, t, template("prep")) == [
        'spec.flows[1].template: JobTemplate "trainer": ${{ index.x }}: the item\'s index is index',
        'spec.flows[1].template: JobTemplate "trainer": ${{ item..a }}: an item is item or '
        "item.KEY (KEY.KEY... in objects)",
    ]


def test_a_known_item_without_the_key_is_a_warning() -> None:
    t = referring("trainer", "x:${{ item.lr }}")
    data = flow(
        PREP,
        train(**{"for": {"fromArgument": "configs"}}),
        arguments=[{"name": "configs", "value": '[{"lr": 0.1}, {"rate": 0.01}]'}],
    )
    errors, warnings = problems(data, t, template("prep"))
    assert errors == []
    assert warnings == [
        "spec.flows[1].template: JobTemplate \"trainer\": ${{ item.lr }}: item 1 has no 'lr': "
        "its vcjob would fail (SubstitutionFailed)"
    ]


def test_many_entries_reading_one_argument_parse_it_once() -> None:
    entries = [
        {"name": f"e{n}", "template": "trainer", "for": {"fromArgument": "configs"}}
        for n in range(200)
    ]
    value = '["one", "two"]'
    fanout._json.cache_clear()
    assert errors_of(flow(*entries, arguments=[{"name": "configs", "value": value}])) == []
    assert fanout._json.cache_info().misses == 1
