"""The YAML loader manifests are read with: safe, and read as Kubernetes reads YAML —
timestamps kept as strings, duplicate and non-scalar keys refused, YAML 1.1 boolean keys
(`on:`) refused with a message, a merge key's keys overridden by the mapping's own, integers
bounded in digits (`bounds.MAX_DIGITS`) — on libyaml's parser when PyYAML has it. And
`plain_data`, which builds the data of a plain document straight from its nodes (PyYAML's
constructor takes the rest). Used by `loading`; pure: no I/O.
"""

from __future__ import annotations

from typing import Any, cast

import yaml

from vcflow.api import bounds


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """A mapping; its own keys must be unique, while a merge key's (`<<: *base`) are
    overridden by them, as YAML means."""
    own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value[len(node.value) - own :]:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, "mapping key must be a scalar", key_node.start_mark
            )
        if isinstance(key, bool) or _is_letter_bool(key_node):
            raise yaml.constructor.ConstructorError(
                None, None, _bool_key(key_node), key_node.start_mark
            )
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f'mapping key "{key}" already defined at line {seen[key] + 1}',
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=True)


_MERGE_TAG = "tag:yaml.org,2002:merge"


#: Plain scalars YAML 1.1 (and so Kubernetes' reader) takes for booleans, PyYAML not.
_LETTER_BOOLS = frozenset({"y", "Y", "n", "N"})


def _is_letter_bool(node: yaml.Node) -> bool:
    plain = isinstance(node, yaml.ScalarNode) and not node.style  # (libyaml: "", PyYAML: None)
    return plain and node.value in _LETTER_BOOLS


def _bool_key(node: yaml.Node) -> str:
    """Why a key that YAML 1.1 reads as a boolean is refused (a Kubernetes object's keys
    are strings: Kubernetes' YAML reader turns `on:` into the key "true")."""
    word = str(node.value)
    meaning = "true" if word.lower() in ("y", "yes", "on", "true") else "false"
    return (
        f"key {word} is read as the boolean {meaning} (YAML 1.1, as Kubernetes reads YAML), "
        f'not as the word "{word}": quote it if you mean the word'
    )


def _bounded_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """A YAML int of at most `bounds.MAX_DIGITS` digits (Python refuses to convert 4,300)."""
    digits = sum(ch.isdigit() for ch in node.value)
    if digits > bounds.MAX_DIGITS:
        message = f"a number of {digits} digits: {bounds.TOO_MANY_DIGITS}"
        raise yaml.constructor.ConstructorError(None, None, message, node.start_mark)
    return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)


def kube_loader(base: type[Any]) -> type[yaml.SafeLoader]:
    """A loader on `base` (`yaml.CSafeLoader` or `yaml.SafeLoader`, which share the parser,
    composer and constructor interface) that keeps timestamps as strings and rejects
    duplicate and non-scalar mapping keys."""
    loader = cast(
        "type[yaml.SafeLoader]",
        type("KubeSafeLoader", (base,), {"__doc__": kube_loader.__doc__}),
    )
    loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    loader.add_constructor("tag:yaml.org,2002:int", _bounded_int)
    if not loader.yaml_path_resolvers:
        _install_resolve(loader)
    return loader


def _install_resolve(loader: type[yaml.SafeLoader]) -> None:
    """Give `loader` PyYAML's `resolve` (the implicit tag of every scalar the composer
    makes) without its per-scalar list building: each first character's resolvers are
    joined with the wildcard ones once, here. Same tags; a third of composing was it."""
    implicit = loader.yaml_implicit_resolvers
    wildcard = tuple(implicit.get(None, ()))
    by_first = {
        first: (*resolvers, *wildcard) for first, resolvers in implicit.items() if first is not None
    }
    scalar_tag = loader.DEFAULT_SCALAR_TAG
    other_tags: dict[type, str] = {
        yaml.SequenceNode: loader.DEFAULT_SEQUENCE_TAG,
        yaml.MappingNode: loader.DEFAULT_MAPPING_TAG,
    }

    def resolve(self: yaml.SafeLoader, kind: type, value: Any, implicit: tuple[bool, bool]) -> Any:
        if kind is not yaml.ScalarNode:
            return other_tags.get(kind)
        if implicit[0]:
            for tag, regexp in by_first.get(value[:1], wildcard):
                if regexp.match(value):
                    return tag
        return scalar_tag

    loader.resolve = resolve  # type: ignore[method-assign,assignment]


#: The loader every read uses: libyaml's parser when PyYAML was built with it (much
#: faster), else the pure-Python one.
KubeSafeLoader = kube_loader(yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


_STR_TAG = yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG
_SEQ_TAG = yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG
_MAP_TAG = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG
#: The scalar tags besides `str` that `plain_data` builds, each by SafeConstructor's own code.
_SCALARS = {
    **{
        f"tag:yaml.org,2002:{name}": getattr(
            yaml.constructor.SafeConstructor, f"construct_yaml_{name}"
        )
        for name in ("null", "bool", "float")
    },
    "tag:yaml.org,2002:int": _bounded_int,
}
#: Collections nested deeper than this are left to PyYAML's constructor, after
#: `bounds.measure_yaml` has refused those nested deeper than `bounds.MAX_DEPTH`.
_PLAIN_DEPTH = 64
_NOT_PLAIN: Any = object()
_BUSY: Any = object()


class _NotPlain(Exception):
    """A node `plain_data` leaves to PyYAML's constructor."""


def plain_data(node: yaml.Node | None, loader: yaml.SafeLoader) -> Any:
    """The data of a composed document built straight from its nodes, or `_NOT_PLAIN`.

    What `loader.construct_document(node)` returns, without the cost of PyYAML's constructor
    (it dispatches and books every node), for documents of maps, sequences and str, null,
    bool, int and float scalars, aliases included. Anything else — another tag, a merge key,
    a duplicate or non-scalar key, a recursive alias, deep nesting, a scalar its constructor
    refuses — is `_NOT_PLAIN`: PyYAML then builds or rejects it exactly as before.
    """
    try:
        return _plain(node, loader, 0, {})
    except Exception:  # _NotPlain, or a scalar's own error: PyYAML words it, as before
        return _NOT_PLAIN


def _plain(node: Any, loader: yaml.SafeLoader, depth: int, built: dict[Any, Any]) -> Any:
    kind = type(node)
    if kind is yaml.ScalarNode:
        return _scalar(node, loader)
    found = built.get(node)
    if found is not None:
        if found is _BUSY:
            raise _NotPlain  # a recursive alias: PyYAML refuses it
        return found  # an alias: the same object, as PyYAML shares it
    if depth >= _PLAIN_DEPTH:
        raise _NotPlain
    built[node] = _BUSY
    out: Any
    if kind is yaml.MappingNode and node.tag == _MAP_TAG:
        out = _plain_mapping(node, loader, depth, built)
    elif kind is yaml.SequenceNode and node.tag == _SEQ_TAG:
        out = [_plain(item, loader, depth + 1, built) for item in node.value]
    else:
        raise _NotPlain
    built[node] = out
    return out


def _plain_mapping(
    node: yaml.MappingNode, loader: yaml.SafeLoader, depth: int, built: dict[Any, Any]
) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        if type(key_node) is not yaml.ScalarNode:
            raise _NotPlain
        key = _scalar(key_node, loader)
        if key in out or type(key) is bool or key in _LETTER_BOOLS:
            raise _NotPlain  # a duplicate, a boolean: PyYAML's path words the error
        if type(value_node) is yaml.ScalarNode and value_node.tag == _STR_TAG:
            out[key] = value_node.value  # most values: no call
        else:
            out[key] = _plain(value_node, loader, depth + 1, built)
    return out


def _scalar(node: yaml.ScalarNode, loader: yaml.SafeLoader) -> Any:
    if node.tag == _STR_TAG:
        return node.value
    construct = _SCALARS.get(node.tag)
    if construct is None:
        raise _NotPlain  # a merge key, binary, an explicit timestamp, an unknown tag, ...
    return construct(loader, node)
