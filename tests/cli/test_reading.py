"""How manifests are read (`vcflow.api.loading`, under `manifests.load`): documents of plain
YAML are built straight from their nodes, exactly as PyYAML's constructor builds them, and a
document's node tree is not kept but composed again from its file's text for lines."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vcflow.api import loading, yamlreader
from vcflow.api.errors import ParseError

BASES = [pytest.param(yaml.SafeLoader, id="pure-python")]
if yaml.__with_libyaml__:
    BASES.insert(0, pytest.param(yaml.CSafeLoader, id="libyaml"))


@pytest.fixture(params=BASES)
def base(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type[Any]:
    """Read with the loader built on each available parser."""
    monkeypatch.setattr(loading, "KubeSafeLoader", yamlreader.kube_loader(request.param))
    return request.param  # type: ignore[no-any-return]


def read(text: str) -> tuple[str, ...]:
    """What reading `text` gives: each document's data (types shown), or the error."""
    try:
        docs = loading.parse_text(text, "x.yaml")
    except ParseError as exc:
        return ("error", str(exc))
    return ("ok", *(repr(doc.data) for doc in docs))


def read_by_pyyaml(text: str) -> tuple[str, ...]:
    """`read` with every document built by PyYAML's constructor (no plain-data path)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loading, "plain_data", lambda node, loader: yamlreader._NOT_PLAIN)
        return read(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: b\nn: 1\nf: 1.5\nt: yes\nz: ~\ne: ''\nx: 0x1F\ni: .inf\n", id="scalars"),
        pytest.param("a: [1, -2, 3_000, 1e3, .nan, null, Null, NO, off, '1']\n", id="resolved"),
        pytest.param("1: a\ntrue: b\n~: c\n2.5: d\n", id="scalar-keys"),
        pytest.param("a: !!str 12\nb: !!int '12'\nc: !!float '1'\nd: !!bool 'on'\n", id="tags"),
        pytest.param("a: !!map {b: !!seq [c]}\n", id="collection-tags"),
        pytest.param("a: &x {b: [1]}\nc: *x\nd: &y s\ne: *y\n", id="aliases"),
        pytest.param("a: &x {b: 1}\nc: {<<: *x, d: 2}\n", id="merge-key"),
        pytest.param("a: &x {b: 1}\nc: {<<: *x, b: 2}\n", id="merge-key-overridden"),
        pytest.param("a: {=: 1}\n", id="value-key"),
        pytest.param("a: !!binary aGk=\n", id="binary"),
        pytest.param("a: !!timestamp 2024-01-01\nb: 2024-01-01\n", id="timestamp"),
        pytest.param("a: !!set {b, c}\nd: !!omap [{e: 1}]\nf: !!pairs [{g: 2}]\n", id="sets"),
        pytest.param("a: !custom x\n", id="unknown-tag"),
        pytest.param("a: !!int abc\n", id="bad-int"),
        pytest.param("a: !!str [b]\n", id="str-tag-on-a-sequence"),
        pytest.param("a: &x [*x]\n", id="recursive-alias"),
        pytest.param("a: 1\nb: 2\na: 3\n", id="duplicate-key"),
        pytest.param("1: a\ntrue: b\n", id="keys-equal-as-values"),
        pytest.param("? [a]\n: 1\n", id="sequence-key"),
        pytest.param("? {a: 1}\n: 1\n", id="mapping-key"),
        pytest.param("a: " + "[" * 70 + "]" * 70 + "\n", id="deep"),
        pytest.param("a: " + "[" * 300 + "]" * 300 + "\n", id="deeper-than-pyyaml-builds"),
        pytest.param("a: 1\n---\n- b\n---\nc: &x [d]\ne: [*x, *x]\n", id="documents"),
        pytest.param("---\n---\na: 1\n", id="empty-document"),
    ],
)
def test_documents_are_what_pyyaml_builds(base: type[Any], text: str) -> None:
    assert read(text) == read_by_pyyaml(text)


def test_an_alias_is_one_object_as_pyyaml_shares_it() -> None:
    (doc,) = loading.parse_text("a: &x {b: [1]}\nc: *x\nd: [*x]\n", "x.yaml")
    assert doc.data["a"] is doc.data["c"] is doc.data["d"][0]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**32) + 1, max_value=10**32 - 1)  # (bounds.MAX_DIGITS)
    | st.floats(allow_nan=False)
    | st.text(alphabet=st.sampled_from(list("ab01 .:-_~#'\"yesnoNULLx+e")), max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="abc01", max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize("flow_style", [False, None, True])
@settings(max_examples=100, deadline=None)
@given(data=st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=3), JSON, max_size=5))
def test_any_dumped_data_reads_back_as_pyyaml_reads_it(
    flow_style: bool | None, data: dict[str, Any]
) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow_style, sort_keys=False)
    assert read(text) == read_by_pyyaml(text)
    assert read(text) == ("ok", repr(data))


TWO = """\
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: first}
---
kind: List
items:
  - apiVersion: flow.volcano.sh/v1alpha1
    kind: JobFlow
    metadata:
      name: second
    spec:
      flows:
        - name: a
"""


def test_lines_come_from_the_text_composed_again(base: type[Any]) -> None:
    first, second = loading.parse_text(TWO, "x.yaml")
    assert first.line_of(("metadata", "name")) == 3
    assert second.origin.line == 7
    assert second.line_of(("metadata", "name")) == 10
    assert second.line_of(("spec", "flows", 0, "name")) == 13
    assert second.line_of(("spec", "missing")) == 11
    assert isinstance(second.node, yaml.MappingNode)


@pytest.mark.optimisation
def test_read_documents_keep_no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes are dropped once the data is built; asking for a line composes them again,
    with the loader that read the file."""
    composed: list[weakref.ref[yaml.Node]] = []

    class Recording(loading.KubeSafeLoader):  # type: ignore[misc,valid-type]
        def get_node(self) -> Any:
            node = super().get_node()
            composed.append(weakref.ref(node))
            return node

    monkeypatch.setattr(loading, "KubeSafeLoader", Recording)
    first, second = loading.parse_text(TWO, "x.yaml")
    monkeypatch.undo()
    gc.collect()
    assert len(composed) == 2
    assert [ref() for ref in composed] == [None, None]
    assert second.line_of(("metadata", "name")) == 10
    assert len(composed) == 4  # the whole file, once, by the loader that read it
    assert first.node is composed[2]() and second.node is composed[3]()
