"""`vcflow graph`: Volcano's example flow as DOT, Mermaid and SVG (offline with -f, and
stored with its phases), the critical path in bold, escaping, and the errors. The SVG
tests need Graphviz's `dot` program, which .ci/run installs: they fail, never skip,
without it."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from vcflow.cli import flowgraph
from vcflow.cli.graph import NO_DOT

from .conftest import EXAMPLE, Phase, Vc

Write = Callable[..., Path]
EDGES = {("a", "b"), ("b", "c"), ("b", "d"), ("c", "e"), ("d", "e")}
SVG = "{http://www.w3.org/2000/svg}"


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def dot_nodes(text: str) -> dict[str, str]:
    """Entry → its attribute list, from `"ns/flow/entry" [attrs];` lines."""
    found = re.findall(r'^\s*"default/test/(\w)" \[(.*)\];$', text, re.M)
    return dict(found)


def dot_edges(text: str) -> dict[tuple[str, str], str]:
    found = re.findall(r'^\s*"default/test/(\w)" -> "default/test/(\w)"(.*);$', text, re.M)
    return {(a, b): attrs for a, b, attrs in found}


def test_dot_of_the_example_offline(vc: Vc) -> None:
    text = ok(vc("graph", "-f", EXAMPLE, "-o", "dot"))
    assert text.startswith("digraph jobflows {") and 'label="default/test";' in text
    nodes, edges = dot_nodes(text), dot_edges(text)
    assert set(nodes) == set("abcde")
    assert set(edges) == EDGES
    # no estimates: every entry counts 1 s, ties go to spec order — a → b → c → e
    bold = {pair for pair, attrs in edges.items() if "bold" in attrs}
    assert bold == {("a", "b"), ("b", "c"), ("c", "e")}
    assert {n for n, attrs in nodes.items() if "penwidth=3" in attrs} == set("abce")
    assert all('fillcolor="#ffffff"' in attrs for attrs in nodes.values())  # (no phases)


def test_mermaid_of_the_example(vc: Vc) -> None:
    text = ok(vc("graph", "-f", EXAMPLE / "JobFlow.yaml", "-o", "mermaid"))
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    ids = dict(re.findall(r'^\s+(f0n\d)\["(\w)"\]$', text, re.M))
    assert sorted(ids.values()) == list("abcde")
    arrows = re.findall(r"^\s+(f0n\d) (-->|==>) (f0n\d)$", text, re.M)
    assert {(ids[a], ids[b]) for a, _, b in arrows} == EDGES
    thick = {(ids[a], ids[b]) for a, arrow, b in arrows if arrow == "==>"}
    assert thick == {("a", "b"), ("b", "c"), ("c", "e")}
    critical = {ids[n] for n in re.findall(r"^\s+class (f0n\d) critical$", text, re.M)}
    assert critical == set("abce")


def test_svg_is_well_formed_with_one_node_per_entry(vc: Vc) -> None:
    text = ok(vc("graph", "-f", EXAMPLE, "-o", "svg"))
    root = ET.fromstring(text.encode())
    assert root.tag == f"{SVG}svg"
    nodes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    titles = sorted(g.findtext(f"{SVG}title") or "" for g in nodes)
    assert titles == [f"default/test/{n}" for n in "abcde"]


def test_svg_without_graphviz_says_what_to_install(
    vc: Vc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = vc("graph", "-f", EXAMPLE, "-o", "svg")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [NO_DOT]
    assert "apt-get install graphviz" in NO_DOT


def test_a_stored_flow_shows_its_phases(example: Result, vc: Vc, set_phase: Phase) -> None:
    set_phase("test-a", "Completed")
    set_phase("test-b", "Running")
    text = ok(vc("graph", "jobflow", "test", "-o", "dot"))
    nodes = dot_nodes(text)
    assert 'label="a\\nCompleted"' in nodes["a"]
    assert f'fillcolor="{flowgraph.COLOURS["Completed"]}"' in nodes["a"]
    assert f'fillcolor="{flowgraph.COLOURS["Running"]}"' in nodes["b"]
    assert "Waiting" in nodes["e"]
    mermaid = ok(vc("graph", "jf", "test", "-o", "mermaid"))
    assert "classDef Completed fill:#b7e1cd" in mermaid
    assert re.search(r"^\s+class f0n0 Completed$", mermaid, re.M)
    svg = ok(vc("graph", "jf", "test", "-o", "svg"))
    assert flowgraph.COLOURS["Running"] in svg


def test_every_flow_of_the_namespace_without_a_name(example: Result, vc: Vc) -> None:
    text = ok(vc("graph", "jf"))
    assert set(dot_nodes(text)) == set("abcde")


def test_errors(example: Result, vc: Vc) -> None:
    missing = vc("graph", "jobflow", "nope")
    assert missing.exit_code == 1
    assert missing.stderr.splitlines() == [
        'Error from server (NotFound): jobflows.flow.volcano.sh "nope" not found'
    ]
    assert vc("graph", "jf", "test", "-o", "png").exit_code == 2
    assert vc("graph", "vcjob", "test-a").exit_code == 2
    assert vc("graph").exit_code == 2
    assert vc("graph", "jf", "test", "-f", EXAMPLE).exit_code == 2


LANGUAGE = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: lang}
spec:
  onExit: [notify]
  flows:
    - {name: prep}
    - name: sweep
      for: {items: [1, 2, 3]}
      dependsOn: {targets: [prep]}
    - name: deploy
      when: 'args.x == "a<b" || args.y == "#1"'
      dependsOn: {targets: [sweep], strategy: any}
    - name: cleanup
      dependsOn: {targets: [sweep], outcome: Failed}
    - {name: notify}
  arguments:
    - {name: x, value: "a"}
    - {name: y, value: "b"}
"""


def test_flow_language_and_escaping(vc: Vc, write_manifest: Write) -> None:
    path = write_manifest(LANGUAGE)
    dot = ok(vc("graph", "-f", path, "-o", "dot"))
    assert r'"default/lang/deploy" [label="deploy\nwhen: args.x == \"a<b\" || ' in dot
    assert "dashed" in dot.split('"default/lang/deploy" [')[1].split("\n")[0]
    assert 'label="sweep\\nfor: 3 items"' in dot
    assert re.search(r'"default/lang/notify" \[label="notify\\nonExit".*peripheries=2', dot)
    assert '"default/lang/sweep" -> "default/lang/deploy" [label="any"' in dot
    assert '"default/lang/sweep" -> "default/lang/cleanup" [label="Failed"' in dot
    mermaid = ok(vc("graph", "-f", path, "-o", "mermaid"))
    assert "when: args.x == #quot;a#lt;b#quot; #124;#124; args.y == #quot;#35;1#quot;" in mermaid
    assert re.search(r'(-->|==>)\|"any"\| f0n2$', mermaid, re.M)
    assert re.search(r'(-->|==>)\|"Failed"\| f0n3$', mermaid, re.M)
    ET.fromstring(ok(vc("graph", "-f", path, "-o", "svg")).encode())


FANNED = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: fan}
spec:
  flows:
    - {name: a}
    - name: sweep
      template: b
      for: {items: [1, 2, 3]}
      dependsOn: {targets: [a]}
"""


def test_a_stored_for_entry_shows_its_items_progress(
    vc: Vc, write_manifest: Write, set_phase: Phase
) -> None:
    for path in (EXAMPLE / "JobTemplate.yaml", write_manifest(FANNED)):
        ok(vc("apply", "-f", path))
    set_phase("fan-a", "Completed")
    set_phase("fan-sweep-0", "Completed")
    text = ok(vc("graph", "jf", "fan", "-o", "dot"))
    assert re.search(
        r'"default/fan/sweep" \[label="sweep\\ntemplate: b\\nfor: 1/3\\nRunning"', text
    )
    assert (
        vc("graph", "jf", "fan", "-o", "png")
        .stderr.splitlines()[-1]
        .endswith('unknown output format "png": use dot, mermaid or svg')
    )


CYCLE = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: loop}
spec:
  flows:
    - {name: a, dependsOn: {targets: [b]}}
    - {name: b, dependsOn: {targets: [a]}}
"""


def test_an_invalid_manifest_is_refused_as_validate_refuses_it(
    vc: Vc, write_manifest: Write
) -> None:
    result = vc("graph", "-f", write_manifest(CYCLE))
    assert result.exit_code == 1 and result.stdout == ""
    assert "not DAG" in result.stderr
    assert vc("graph", "-f", EXAMPLE / "JobTemplate.yaml").stderr.startswith("no JobFlow in ")
