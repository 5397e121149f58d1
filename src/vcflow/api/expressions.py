"""CEL expressions: an entry's `when` and a `switch` case's `when` (docs/flow-features.md
section 13). The one home of CEL in vcflow: cel-python (`celpy`) parses and evaluates,
never Python's `eval`.

`compile_expression(text)` parses once per text (cached: a 10,000-entry flow repeating one
expression parses it once; texts that differ only in their literals share one parse, see
`_canonical`) and says what the expression reads (`Expression.references`, for
admission); `Expression.evaluate(args, outputs, phases)` gives its bool (for the
controller), with `item` and `index` too for a `switch` case of an entry with `for`
(section 19). Every problem is an `ExpressionError`, one line. Pure; celpy is imported on
first use, so a flow without expressions never loads it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import celpy
    import lark

#: The longest expression, in bytes of its text (UTF-8).
MAX_LENGTH = 1024
#: The deepest parse tree an expression may have: celpy's evaluator recurses once or twice
#: per level, so a deeper one would exhaust Python's stack (about 18 nested parentheses or
#: calls fit, far more than a condition needs).
MAX_DEPTH = 200
TOO_DEEP = "the expression is nested too deeply (parentheses, calls, lists): simplify it"
#: Distinct expression texts kept parsed.
CACHE_SIZE = 8192
#: The variables an expression reads (section 13).
VARIABLES = ("args", "outputs", "phases")
#: The variables a `switch` case of an entry with `for` reads too: its item and the item's
#: index (section 19).
ITEM_VARIABLES = ("item", "index")
#: CEL's macros that bind a variable: `list.exists(x, x > 1)`, `m.map(k, ...)`.
MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})

#: What an expression reads: a top-level identifier, and the first key it selects when
#: that key is written in the text (`outputs['prep-data'].n` → ("outputs", "prep-data")).
Reference = tuple[str, str | None]

_SIMPLE_STRING = re.compile(r"""'([^'\\\n]*)'|"([^"\\\n]*)\"""")


class _NoItem:
    """`evaluate`'s `item` when not given (an item may be any JSON value, null included)."""

    def __repr__(self) -> str:
        return "NO_ITEM"


NO_ITEM: Any = _NoItem()


class ExpressionError(ValueError):
    """An expression that cannot be parsed or evaluated; `column` (1-based) for a syntax
    error, else None. The message is one line."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


@dataclass(frozen=True, eq=False)
class Expression:
    """A parsed expression: its text, what it reads, and how to evaluate it."""

    text: str
    references: frozenset[Reference]

    def evaluate(
        self,
        args: Mapping[str, str],
        outputs: Mapping[str, Mapping[str, Any] | Sequence[Mapping[str, Any]]],
        phases: Mapping[str, str],
        *,
        item: Any = NO_ITEM,
        index: int | None = None,
    ) -> bool:
        """The expression's value with these variables; ExpressionError (CEL's message, one
        line) when evaluating fails (a missing key, a type error, a division by zero) or the
        value is not a bool. A target with `for` has a list of outputs, in index order
        (`outputs.train[0].accuracy`); `item` (any JSON value) and `index`, when given, are
        variables too."""
        from celpy import celtypes
        from celpy.adapter import json_to_cel
        from celpy.evaluation import CELEvalError

        activation = {
            "args": json_to_cel(dict(args)),
            "outputs": json_to_cel({k: _plain(v) for k, v in outputs.items()}),
            "phases": json_to_cel(dict(phases)),
        }
        if item is not NO_ITEM:
            activation["item"] = json_to_cel(item)
        if index is not None:
            activation["index"] = celtypes.IntType(index)
        try:
            value = self._runner.evaluate(activation)
        except CELEvalError as error:
            raise ExpressionError(_eval_message(error)) from None
        except RecursionError:
            raise ExpressionError("the expression is nested too deeply") from None
        except ExpressionError:
            raise
        except Exception as error:  # celpy raising something else: still the expression's
            raise ExpressionError(_one_line(f"{type(error).__name__}: {error}")) from None
        if isinstance(value, CELEvalError):
            raise ExpressionError(_eval_message(value))
        if isinstance(value, celtypes.BoolType | bool):
            return bool(value)
        raise ExpressionError(
            f"the expression gives {_cel_type(value)} {_shown(value)}, not a bool"
        )

    @functools.cached_property
    def tree(self) -> lark.Tree[Any]:
        """celpy's parse tree of the text (parsed again on first use: admission reads the
        parse of the text's shape, see `_canonical`)."""
        return _environment().compile(self.text)

    @functools.cached_property
    def _runner(self) -> celpy.Runner:
        return _environment().program(self.tree)


def _plain(outputs: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Any:
    """A target's outputs as JSON: an object, or a list of objects (a target with `for`)."""
    if isinstance(outputs, Mapping):
        return dict(outputs)
    return [dict(one) for one in outputs]


def compile_expression(text: str) -> Expression:
    """`text` parsed (cached per text); ExpressionError for a syntax error (its column),
    a text over `MAX_LENGTH` bytes or one nested deeper than `MAX_DEPTH`."""
    if not isinstance(text, str):
        raise ExpressionError(f"an expression is a string, not {type(text).__name__}")
    compiled = _compile(text)
    if isinstance(compiled, ExpressionError):
        raise ExpressionError(str(compiled), column=compiled.column)
    return compiled


@functools.lru_cache(maxsize=CACHE_SIZE)
def _compile(text: str) -> Expression | ExpressionError:
    """The expression, or the error it gives (kept too: a repeated bad text parses once)."""
    try:
        return _parse(text)
    except ExpressionError as error:
        return error


def _parse(text: str) -> Expression:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_LENGTH:
        raise ExpressionError(
            f"Too long: may not be longer than {MAX_LENGTH} bytes (it has {size})"
        )
    if not text.strip():
        raise ExpressionError("an expression cannot be empty", column=1)
    canonical, spans = _canonical(text)
    shape = _shape(canonical)
    if shape is not None and _same_literals(text, spans, shape):
        literals = [(start, end) for start, end, _, _ in spans]
    else:
        shape = _shape_of(_parsed(text))  # (its errors are the text's own)
        literals = [(start, end) for _, start, end in shape.literals]
    if shape.depth > MAX_DEPTH:
        raise ExpressionError(TOO_DEEP)
    references = frozenset(
        (root, _literal_value(text, literals[key]) if isinstance(key, int) else key)
        for root, key in shape.references
    )
    return Expression(text=text, references=references)


# -- the shape of a text: parsed once for every text that differs only in its literals -------
#
# Parsing with celpy (lark, pure Python) takes about 0.4 ms for a one-line expression: a
# 10,000-entry flow whose entries' expressions differ only in a name or a number
# (`phases['e-41'] == 'Completed' && args.threshold != '141'`) would spend seconds. So a
# text is parsed as its *shape*: each string literal's content replaced by `x`, each digit
# by `0` (`phases['x'] == 'x' && args.threshold != 'x'`); identifiers and everything else
# are kept, so the shape has the text's tree, its variables and its macros' bindings. The
# shape's parse (cached) gives the references, a literal key standing for the literal at
# its place in the text. A shape that does not parse, or whose literal tokens are not where
# the text's are (lark's own token patterns are checked against the text), is not used: the
# text itself is parsed, and its errors are its own.


@dataclass(frozen=True)
class _Shape:
    #: (root, key): key a name, None, or the index of the string literal that is the key
    references: tuple[tuple[str, str | int | None], ...]
    depth: int
    #: (token type, start, end) of each string literal token, in the parsed text
    literals: tuple[tuple[str, int, int], ...]


#: (start, end) in the text, (start, end) in its shape, of each string literal.
_Span = tuple[int, int, int, int]

_LEXEME = re.compile(
    "|".join(
        (
            r"(?P<comment>//[^\n]*)",
            r"(?P<prefix>[bB]?[rR]?)(?P<string>"
            r"'{3}(?:\\[\s\S]|[^\\])*?'{3}"
            r'|"{3}(?:\\[\s\S]|[^\\])*?"{3}'
            r"|'(?:\\[^\n]|[^'\\\n])*'"
            r'|"(?:\\[^\n]|[^"\\\n])*")',
            r"(?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)",
            r"(?P<digits>[0-9]+)",
        )
    )
)
_STRING_TOKENS = frozenset({"STRING_LIT", "MLSTRING_LIT", "BYTES_LIT"})


def _canonical(text: str) -> tuple[str, tuple[_Span, ...]]:
    """The text's shape, and where its string literals are in both."""
    out: list[str] = []
    spans: list[_Span] = []
    done = 0
    length = 0
    for match in _LEXEME.finditer(text):
        kind = match.lastgroup
        if kind not in ("string", "digits"):
            continue
        start, end = match.span()
        out.append(text[done:start])
        length += start - done
        if kind == "digits":
            out.append("0" * (end - start))
            length += end - start
        else:
            body = match.group("string")
            quote = body[:3] if body[:3] in ("'''", '"""') else body[0]
            placeholder = f"{match.group('prefix')}{quote}x{quote}"
            spans.append((start, end, length, length + len(placeholder)))
            out.append(placeholder)
            length += len(placeholder)
        done = end
    out.append(text[done:])
    return "".join(out), tuple(spans)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _shape(canonical: str) -> _Shape | None:
    """The shape's parse, or None when it does not parse (the text is parsed itself)."""
    try:
        tree = _parsed(canonical)
    except ExpressionError:
        return None
    return _shape_of(tree)


def _shape_of(tree: lark.Tree[Any]) -> _Shape:
    literals: list[tuple[str, int, int]] = []
    try:  # (lark's scan_values recurses: a tree lark built deep enough exhausts the stack)
        for token in tree.scan_values(lambda v: getattr(v, "type", None) in _STRING_TOKENS):
            literals.append((token.type, token.start_pos, token.end_pos))
    except RecursionError:
        raise ExpressionError(TOO_DEEP) from None
    literals.sort(key=lambda t: t[1])
    order = {start: i for i, (_, start, _end) in enumerate(literals)}
    references, depth = _walk(tree, lambda token: order.get(token.start_pos or 0))
    return _Shape(
        references=tuple(sorted(references, key=lambda r: (r[0], str(r[1])))),
        depth=depth,
        literals=tuple(literals),
    )


def _same_literals(text: str, spans: Sequence[_Span], shape: _Shape) -> bool:
    """Are the shape's string literal tokens the text's, and does lark read each of the
    text's literals as the very same token?"""
    if len(spans) != len(shape.literals):
        return False
    patterns = _token_patterns()
    for (start, end, shape_start, shape_end), (kind, token_start, token_end) in zip(
        spans, shape.literals, strict=True
    ):
        if (shape_start, shape_end) != (token_start, token_end):
            return False
        match = patterns[kind].match(text, start)
        if match is None or match.end() != end:
            return False
    return True


@functools.cache
def _token_patterns() -> dict[str, re.Pattern[str]]:
    """lark's own patterns of celpy's string literal tokens, as its lexer compiles them."""
    from celpy.celparser import CELParser

    _environment()
    parser = CELParser.CEL_PARSER
    assert parser is not None
    flags = parser.options.g_regex_flags
    return {
        t.name: re.compile(t.pattern.to_regexp(), flags)
        for t in parser.terminals
        if t.name in _STRING_TOKENS
    }


def _parsed(text: str) -> lark.Tree[Any]:
    from celpy.celparser import CELParseError

    try:
        return _environment().compile(text)
    except CELParseError as error:
        raise _syntax_error(text, error) from None
    except RecursionError:
        raise ExpressionError("the expression is nested too deeply") from None


def _literal_value(text: str, span: tuple[int, int]) -> str | None:
    """A plain string literal's value (`'prep-data'`), else None."""
    match = _SIMPLE_STRING.fullmatch(text, span[0], span[1])
    if match is None:
        return None
    return match.group(1) if match.group(1) is not None else match.group(2)


@functools.cache
def _environment() -> celpy.Environment:
    import celpy

    return celpy.Environment()


def _syntax_error(text: str, error: Exception) -> ExpressionError:
    """celpy's CELParseError (a caret drawing over several lines) as one line."""
    import lark

    line = getattr(error, "line", None) or 1
    column = getattr(error, "column", None)
    cause = error.__context__
    lines = text.splitlines() or [""]
    if isinstance(cause, lark.UnexpectedToken) and cause.token.type == "$END":
        what = "unexpected end of the expression"
        line = len(lines)
        column = len(lines[-1].rstrip()) + 1
    elif isinstance(cause, lark.UnexpectedToken):
        what = f"unexpected {_quoted(str(cause.token))}"
    elif isinstance(cause, lark.UnexpectedCharacters):
        what = f"unexpected character {_quoted(cause.char)}"
    else:
        what = _one_line(str(error.args[0]) if error.args else "cannot be parsed")
    where = f"column {column}" if line == 1 else f"line {line}, column {column}"
    if column is None:
        where = f"line {line}"
    return ExpressionError(f"syntax error at {where}: {what}", column=column)


def _walk(
    tree: lark.Tree[Any], literal: Callable[[lark.Token], int | None]
) -> tuple[set[tuple[str, str | int | None]], int]:
    """Every top-level identifier `tree` reads, with its first key when written in the
    text (a name, or `literal` of the string literal token that is the key), and the tree's
    depth. Iterative: a deep tree is refused, not a crash. Function and method names are
    tokens, not `ident` nodes, so they are never references; the variable a macro binds
    (`exists(k, ...)`) is not one inside the macro."""
    import lark

    found: set[tuple[str, str | int | None]] = set()
    deepest = 0
    stack: list[tuple[Any, int, frozenset[str]]] = [(tree, 1, frozenset())]
    while stack:
        node, depth, bound = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        deepest = max(deepest, depth)
        kind = node.data
        children = node.children
        if kind in ("member_dot", "member_index"):
            root = _root_ident(children[0])
            if root is not None and root not in bound:
                key: str | int | None = (
                    str(children[1]) if kind == "member_dot" else _literal_key(children[1], literal)
                )
                found.add((root, key))
                deepest = max(deepest, depth + 3)
                if kind == "member_index":
                    stack.append((children[1], depth + 1, bound))
                continue
        elif kind == "member_dot_arg" and str(children[1]) in MACROS and len(children) > 2:
            exprs = children[2].children
            variable = _bare_ident(exprs[0]) if len(exprs) >= 2 else None
            if variable is not None:
                stack.append((children[0], depth + 1, bound))
                inner = bound | {variable}
                stack.extend((expr, depth + 2, inner) for expr in exprs[1:])
                continue
        elif kind in ("ident", "dot_ident"):
            name = str(children[0])
            if name not in bound:
                found.add((name, None))
            continue
        stack.extend((child, depth + 1, bound) for child in children)
    return found, deepest


def _root_ident(member: Any) -> str | None:
    """`member` → `primary` → `ident`: the identifier's name, else None."""
    if getattr(member, "data", None) != "member" or len(member.children) != 1:
        return None
    primary = member.children[0]
    if getattr(primary, "data", None) != "primary" or len(primary.children) != 1:
        return None
    ident = primary.children[0]
    if getattr(ident, "data", None) not in ("ident", "dot_ident"):
        return None
    return str(ident.children[0])


def _bare_ident(expr: Any) -> str | None:
    """An `expr` that is one identifier and nothing else (a macro's variable)."""
    node = expr
    while getattr(node, "data", None) not in (None, "member") and len(node.children) == 1:
        node = node.children[0]
    return _root_ident(node)


def _literal_key(expr: Any, literal: Callable[[lark.Token], int | None]) -> int | None:
    """`literal` of the string literal that `expr` is, else None (a computed key)."""
    node = expr
    while getattr(node, "data", None) not in (None, "literal") and len(node.children) == 1:
        node = node.children[0]
    if getattr(node, "data", None) != "literal":
        return None
    token = node.children[0]
    return literal(token) if token.type in _STRING_TOKENS else None


def _eval_message(error: Any) -> str:
    """CEL's message of a CELEvalError, one line (without celpy's dump of the activation)."""
    message = str(error.args[0]) if error.args else str(error)
    message = message.split(" (in activation ", 1)[0]
    message = _CELPY_TYPE.sub(lambda m: _CEL_TYPES.get(m.group(1), m.group(1)), message)
    message = _CELPY_RULE.sub(lambda m: _OPERATORS.get(m.group(1), m.group(1)), message)
    return _one_line(message)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_CELPY_TYPE = re.compile(r"<class 'celpy\.celtypes\.(\w+)'>")
_CELPY_RULE = re.compile(r"Token\('RULE', '(\w+)'\)")
_OPERATORS = {
    "addition_add": "'+'",
    "addition_sub": "'-'",
    "multiplication_mul": "'*'",
    "multiplication_div": "'/'",
    "multiplication_mod": "'%'",
    "relation_lt": "'<'",
    "relation_le": "'<='",
    "relation_gt": "'>'",
    "relation_ge": "'>='",
    "relation_eq": "'=='",
    "relation_ne": "'!='",
    "relation_in": "'in'",
    "unary_neg": "'-'",
    "unary_not": "'!'",
}
_CEL_TYPES = {
    "BoolType": "bool",
    "BytesType": "bytes",
    "DoubleType": "double",
    "DurationType": "duration",
    "IntType": "int",
    "ListType": "list",
    "MapType": "map",
    "NoneType": "null",
    "StringType": "string",
    "TimestampType": "timestamp",
    "TypeType": "type",
    "UintType": "uint",
}


def _cel_type(value: Any) -> str:
    for cls in type(value).__mro__:
        if cls.__name__ in _CEL_TYPES:
            return _CEL_TYPES[cls.__name__]
    return type(value).__name__


def _shown(value: Any) -> str:
    """A value as JSON, cut to 60 characters."""
    import json

    from celpy.adapter import CELJSONEncoder

    try:
        text = json.dumps(value, cls=CELJSONEncoder, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = _one_line(text)
    return text if len(text) <= 60 else text[:57] + "..."
