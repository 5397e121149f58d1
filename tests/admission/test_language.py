"""Admission of `when`, `switch` and `spec.onExit` (`vcflow.admission.language`,
docs/flow-features.md sections 13 and 14): each problem one line, naming the field."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from tests.admission.test_flow_features import problems, template

from vcflow.admission import jobflow as jobflow_admission
from vcflow.admission import language
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate

#: docs/flow-features.md part II's example (with the `train` entry it depends on).
EXAMPLE = """
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: f, namespace: default}
spec:
  arguments:
    - name: threshold
      value: "0.9"
    - name: target
      value: cpu
  onExit: [notify]
  flows:
    - name: train
    - name: evaluate
      template: scorer
      dependsOn: {targets: [train]}
    - name: deploy
      dependsOn: {targets: [evaluate]}
      when: "double(outputs.evaluate.accuracy) >= double(args.threshold)"
    - name: serve
      dependsOn: {targets: [evaluate]}
      switch:
        - when: "args.target == 'gpu'"
          template: serve-gpu
        - template: serve-cpu
    - name: notify
      template: alert
"""


def example() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(EXAMPLE)
    return data


def templates() -> list[JobTemplate]:
    return [template(n) for n in ("train", "scorer", "deploy", "serve-gpu", "serve-cpu", "alert")]


def entry(data: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in data["spec"]["flows"] if e["name"] == name)
    return found


def errors_of(data: dict[str, Any]) -> list[str]:
    errors, _ = problems(data, *templates())
    return errors


def test_the_example_is_valid() -> None:
    assert problems(example(), *templates()) == ([], [])


# -- when -------------------------------------------------------------------------------------


def test_a_syntax_error_names_its_column() -> None:
    data = example()
    entry(data, "deploy")["when"] = "outputs.evaluate.accuracy >= = 1"
    assert errors_of(data) == [
        'spec.flows[2].when: syntax error at column 30: unexpected character "="'
    ]


def test_an_expression_over_1_kib_is_refused() -> None:
    data = example()
    entry(data, "deploy")["when"] = "args.target == '" + "x" * 1100 + "'"
    assert errors_of(data) == [
        "spec.flows[2].when: Too long: may not be longer than 1024 bytes (it has 1117)"
    ]


def test_an_unknown_variable() -> None:
    data = example()
    entry(data, "deploy")["when"] = "foo.bar == 'x' && args.target == 'cpu'"
    assert errors_of(data) == [
        'spec.flows[2].when: unknown variable "foo": a when reads args, outputs and phases'
    ]


def test_a_macro_variable_and_a_function_are_not_variables() -> None:
    data = example()
    entry(data, "deploy")["when"] = (
        "outputs.evaluate.exists(k, k == 'accuracy') && size(args.target) > 0"
    )
    assert errors_of(data) == []


def test_an_undeclared_argument_says_the_closest() -> None:
    data = example()
    entry(data, "deploy")["when"] = "double(outputs.evaluate.accuracy) >= double(args.treshold)"
    assert errors_of(data) == [
        'spec.flows[2].when: unknown argument "treshold" (args.treshold); did you mean "threshold"?'
    ]


def test_an_argument_of_a_flow_without_arguments() -> None:
    data = example()
    del data["spec"]["arguments"]
    entry(data, "deploy")["when"] = "args.threshold == '1'"
    del entry(data, "serve")["switch"][0]["when"]
    del entry(data, "serve")["switch"][0]
    assert errors_of(data) == [
        'spec.flows[2].when: unknown argument "threshold" (args.threshold): the flow declares '
        "no arguments (spec.arguments)"
    ]


def test_outputs_of_an_entry_that_is_not_a_target() -> None:
    data = example()
    entry(data, "deploy")["when"] = "outputs.train.loss < 0.1 && phases['train'] == 'Completed'"
    assert errors_of(data) == [
        'spec.flows[2].when: "train" is not a target of entry deploy: outputs and phases hold '
        "its targets' (evaluate)",
        'spec.flows[2].when: "train" is not a target of entry deploy: outputs and phases hold '
        "its targets' (evaluate)",
    ]


def test_phases_of_an_entry_without_targets() -> None:
    data = example()
    entry(data, "train")["when"] = "phases.evaluate == 'Completed'"
    assert errors_of(data) == [
        'spec.flows[0].when: "evaluate" is not a target of entry train: outputs and phases '
        "hold its targets' (dependsOn.targets), it has none"
    ]


def test_a_computed_key_is_left_to_the_run() -> None:
    data = example()
    entry(data, "deploy")["when"] = "outputs[args.target].n > 1 && size(phases) == 1"
    assert errors_of(data) == []


def test_a_switch_case_when_is_checked_at_its_path() -> None:
    data = example()
    entry(data, "serve")["switch"][0]["when"] = "args.targte == 'gpu'"
    assert errors_of(data) == [
        'spec.flows[3].switch[0].when: unknown argument "targte" (args.targte); did you mean '
        '"target"?'
    ]


# -- switch -----------------------------------------------------------------------------------


def test_an_empty_switch_is_refused() -> None:
    data = example()
    entry(data, "serve")["switch"] = []
    assert errors_of(data) == [
        "spec.flows[3].switch: Invalid value: []: a switch has at least one case {when, template}"
    ]


def test_at_most_32_cases() -> None:
    data = example()
    cases = [{"when": f"args.target == '{n}'", "template": "serve-gpu"} for n in range(33)]
    entry(data, "serve")["switch"] = cases
    assert errors_of(data) == ["spec.flows[3].switch: Too many: 33: must have at most 32 items"]


def test_the_default_case_is_last() -> None:
    data = example()
    entry(data, "serve")["switch"].reverse()
    assert errors_of(data) == [
        'spec.flows[3].switch[0]: a case without "when" is the default: it must be the last case'
    ]


def test_one_default_case_at_most() -> None:
    data = example()
    entry(data, "serve")["switch"] = [{"template": "serve-gpu"}, {"template": "serve-cpu"}]
    assert errors_of(data) == [
        'spec.flows[3].switch[0]: a case without "when" is the default: it must be the last case',
        'spec.flows[3].switch[1]: only one case may go without "when" (the default): case 0 '
        "has none already",
    ]


def test_switch_and_template_exclude_each_other() -> None:
    data = example()
    entry(data, "serve")["template"] = "serve-cpu"
    assert errors_of(data) == [
        "spec.flows[3].template: template and switch exclude each other: the switch's cases "
        "pick the template"
    ]


def test_a_case_template_is_checked_as_a_template() -> None:
    data = example()
    entry(data, "serve")["switch"][0]["template"] = "Serve-GPU"
    entry(data, "serve")["switch"][1]["template"] = "t" * 60
    assert errors_of(data) == [
        'spec.flows[3].switch[0].template: Invalid value: "Serve-GPU": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character",
        f'spec.flows[3].switch[1].template: label value "default.{"t" * 60}" '
        '(volcano.sh/createdByJobTemplate) of vcjob "f-serve": must be no more than 63 '
        "characters",
    ]


def test_a_missing_case_template_is_a_warning_at_its_case() -> None:
    obj = JobFlow.from_dict(example())
    given = {t.name: t for t in templates() if t.name != "serve-gpu"}
    found = jobflow_admission.validate_jobflow(obj, templates=given, resolve_templates=True)
    assert [(e.path, e.message, e.warning) for e in found] == [
        (
            "spec.flows[3].switch[0].template",
            'JobTemplate "serve-gpu" not found; the entry will wait (TemplateNotFound) until '
            "it is created",
            True,
        )
    ]


def test_a_switch_entry_is_not_checked_against_a_template_named_as_it() -> None:
    """A template named as the switch entry is not its template: its spec is not checked."""
    pod = {"restartPolicy": "Never", "containers": [{"name": "m", "command": ["true"]}]}
    bad = template("serve", tasks=[{"name": "x" * 60, "replicas": 1, "template": {"spec": pod}}])
    plain = example()
    del entry(plain, "serve")["switch"]
    assert errors_of(plain) == []
    assert problems(plain, *templates(), bad)[0] == [
        f'spec.flows[3].name: generated pod name "f-serve-{"x" * 60}-0": name part must be no '
        "more than 63 characters"
    ]
    assert problems(example(), *templates(), bad) == ([], [])


def test_a_template_used_by_a_switch_case_is_in_use() -> None:
    obj = JobFlow.from_dict({**example(), "status": {"state": {"phase": "Running"}}})
    found = jobflow_admission.validate_template_delete(template("serve-gpu"), [obj])
    assert [e.message for e in found] == [
        'cannot delete JobTemplate "serve-gpu": unfinished JobFlow(s) f use it; stop or delete '
        "them first"
    ]


# -- onExit -----------------------------------------------------------------------------------


def test_an_exit_handler_is_an_entry() -> None:
    data = example()
    data["spec"]["onExit"] = ["notfy"]
    assert errors_of(data) == [
        'spec.onExit[0]: "notfy" is not an entry of the flow; did you mean "notify"?'
    ]


def test_an_exit_handler_is_named_once() -> None:
    data = example()
    data["spec"]["onExit"] = ["notify", "notify"]
    assert errors_of(data) == ['spec.onExit[1]: Duplicate value: "notify"']


def test_at_most_32_exit_handlers() -> None:
    data = example()
    data["spec"]["flows"] += [{"name": f"h{n}", "template": "alert"} for n in range(33)]
    data["spec"]["onExit"] = [f"h{n}" for n in range(33)]
    assert errors_of(data) == ["spec.onExit: Too many: 33: must have at most 32 items"]


def test_an_exit_handler_has_no_depends_on() -> None:
    data = example()
    entry(data, "notify")["dependsOn"] = {"targets": ["deploy"]}
    assert errors_of(data) == [
        "spec.flows[4].dependsOn: an exit handler (spec.onExit) runs after every other entry "
        "has ended; it may not have dependsOn"
    ]


def test_no_entry_depends_on_an_exit_handler() -> None:
    data = example()
    entry(data, "deploy")["dependsOn"] = {"targets": ["evaluate", "notify"]}
    assert errors_of(data) == [
        'spec.flows[2].dependsOn.targets[1]: "notify" is an exit handler (spec.onExit): no '
        "entry may depend on it"
    ]


# -- the module alone -------------------------------------------------------------------------


@pytest.mark.optimisation
def test_a_repeated_expression_is_parsed_once() -> None:
    from vcflow.api import expressions

    text = "phases.e0 == 'Completed' && args.threshold != 'parsed-once'"
    flows = [{"name": "e0"}] + [
        {"name": f"e{i}", "dependsOn": {"targets": ["e0"]}, "when": text} for i in range(1, 200)
    ]
    obj = JobFlow.from_dict(
        {
            "metadata": {"name": "f", "namespace": "default"},
            "spec": {"arguments": [{"name": "threshold", "value": "1"}], "flows": flows},
        }
    )
    before = expressions._compile.cache_info()
    assert language.validate(obj) == []
    after = expressions._compile.cache_info()
    assert after.misses - before.misses <= 1
    assert after.hits - before.hits >= 198


def test_the_webhook_reads_every_case_template() -> None:
    """On a cluster the webhook reads the templates a flow names, one by one: a switch's
    cases' too, never a template named as the switch entry."""
    from vcflow.api.errors import NotFound
    from vcflow.store.admit import Named

    stored = {t.name: t for t in templates()}
    asked: list[str] = []

    class Reader:
        def get(self, kind: type, namespace: str, name: str) -> JobTemplate:
            asked.append(name)
            if name not in stored:
                raise NotFound(f"{name} not found")
            return stored[name]

        def list(self, kind: type, namespace: str) -> list[JobTemplate]:
            raise AssertionError("the webhook reads by name")

    found = Named(Reader()).templates_for(JobFlow.from_dict(example()))  # type: ignore[arg-type]
    assert asked == ["train", "scorer", "deploy", "serve-gpu", "serve-cpu", "alert"]
    assert sorted(found) == sorted(asked)
