"""SQL92 message selectors: RocketMQ's grammar (``SelectorParser.jj``) parsed with lark, compiled to closures.

Why lark: the grammar is small and LALR(1) once JavaCC's two-token lookaheads (``NOT BETWEEN``, ``IS NOT NULL``)
are written as plain productions; lark's LALR parser is pure Python, has no build step, takes a grammar close to
the ``.jj`` file's, and runs the tree-building callbacks inline, so a selector compiles in one pass with no parse
tree kept. A selector is compiled once per text (``compile_selector`` caches, as J's ``SelectorParser.parse``
caches 100, failures included) and then evaluated per message with no parsing.

Grammar (keywords case-insensitive; identifiers ``[a-z_$][a-z0-9_$]*``, looked up case-sensitively):

=========== ======================================================================================================
level       forms (lowest precedence first)
=========== ======================================================================================================
or          ``x OR y``
and         ``x AND y``
equality    ``x = y``, ``x <> y``, ``x IS NULL``, ``x IS NOT NULL``
comparison  ``>``, ``>=``, ``<``, ``<=``, ``[NOT] BETWEEN lo AND hi``, ``p [NOT] IN ('s', ...)``,
            ``[NOT] CONTAINS 's'``, ``[NOT] STARTSWITH 's'``, ``[NOT] ENDSWITH 's'`` (5.1.3+)
unary       ``+x``, ``-x``, ``NOT x``
primary     ``'str'`` (``''`` = quote), ``5`` / ``5L`` (Integer, Long when outside 32 bits), ``1.5`` ``.5`` ``1E3``
            (Double, must be > 0), ``TRUE``, ``FALSE``, ``NULL``, identifier, ``( expr )``
=========== ======================================================================================================

Comments ``-- ...`` (to a line end, which must be there) and ``/* ... */``. No ``LIKE``, no arithmetic, no
``!=``/``==``. Parse-time checks as J's expression factories: ``<``-family operands must not be non-numeric
constants or boolean expressions; ``=``/``<>`` reject a ``NULL`` literal; a boolean constant on the left of ``=``
needs a boolean on the right; constant BETWEEN bounds must be ordered; ``IN`` needs an identifier; the whole
expression, and each ``AND``/``OR``/``NOT`` operand, must be boolean (a bare identifier is cast).

Evaluation is three-valued (None = unknown) with J's semantics (``broker.sql92.values``); a message matches only
when the result is ``True``, and an evaluation error means no match.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lark import Lark, Token, UnexpectedInput
from lark.exceptions import VisitError

from broker.sql92.values import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    EvaluationError,
    JLong,
    compare,
    java_double,
    java_equals,
    java_integer,
    to_text,
)

Get = Callable[[str], "str | None"]
Eval = Callable[[Get], Any]

PARSE_EXCEPTION = "org.apache.rocketmq.filter.parser.ParseException"
TAGS = "TAGS"
RUNTIME_EXCEPTION = "java.lang.RuntimeException"

_GRAMMAR = r"""
?start: or_expr
?or_expr: and_expr | or_expr _OR and_expr -> or_
?and_expr: eq_expr | and_expr _AND eq_expr -> and_
?eq_expr: cmp_expr
    | eq_expr "=" cmp_expr -> eq
    | eq_expr "<>" cmp_expr -> ne
    | eq_expr _IS _NULL -> is_null
    | eq_expr _IS _NOT _NULL -> is_not_null
?cmp_expr: unary
    | cmp_expr ">" unary -> gt
    | cmp_expr ">=" unary -> ge
    | cmp_expr "<" unary -> lt
    | cmp_expr "<=" unary -> le
    | cmp_expr _CONTAINS string -> contains
    | cmp_expr _NOT _CONTAINS string -> not_contains
    | cmp_expr _STARTSWITH string -> startswith
    | cmp_expr _NOT _STARTSWITH string -> not_startswith
    | cmp_expr _ENDSWITH string -> endswith
    | cmp_expr _NOT _ENDSWITH string -> not_endswith
    | cmp_expr _BETWEEN unary _AND unary -> between
    | cmp_expr _NOT _BETWEEN unary _AND unary -> not_between
    | cmp_expr _IN "(" string ("," string)* ")" -> in_
    | cmp_expr _NOT _IN "(" string ("," string)* ")" -> not_in
?unary: primary
    | "+" unary -> pos
    | "-" unary -> neg
    | _NOT unary -> not_
?primary: string -> str_lit
    | DECIMAL -> decimal
    | FLOAT -> float_lit
    | _TRUE -> true_lit
    | _FALSE -> false_lit
    | _NULL -> null_lit
    | ID -> prop
    | "(" or_expr ")"
string: STRING

_NOT: "not"i
_AND: "and"i
_OR: "or"i
_BETWEEN: "between"i
_IN: "in"i
_TRUE: "true"i
_FALSE: "false"i
_NULL: "null"i
_IS: "is"i
_CONTAINS: "contains"i
_STARTSWITH: "startswith"i
_ENDSWITH: "endswith"i
FLOAT.2: /([0-9]+\.[0-9]*([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)/
DECIMAL: /(0|[1-9][0-9]*[lL]?)/
STRING: /'(''|[^'])*'/
ID: /(?!(not|and|or|between|in|true|false|null|is|contains|startswith|endswith)(?![a-z0-9_$]))[a-z_$][a-z0-9_$]*/i
LINE_COMMENT: /--[^\n\r]*(\r\n|\n|\r)/
BLOCK_COMMENT: /\/\*[\s\S]*?\*\//
WS: /[ \t\n\r\f]+/
%ignore WS
%ignore LINE_COMMENT
%ignore BLOCK_COMMENT
"""


class SelectorError(ValueError):
    """A selector that does not compile. ``str()`` is what J's ``MQFilterException.getMessage()`` gives: the cause's
    class and message (CHECK_CLIENT_CONFIG answers it as the remark)."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(f"{java_class}: {message}")


def _fail(message: str) -> SelectorError:
    return SelectorError(RUNTIME_EXCEPTION, message)


@dataclass(frozen=True, slots=True)
class Node:
    """One compiled sub-expression: its evaluator and what J's factories check about it."""

    fn: Eval
    text: str
    boolean: bool = False  # a J BooleanExpression (comparisons, logic, TRUE/FALSE/NULL)
    const: bool = False
    value: Any = None
    prop: str | None = None
    tags: frozenset[str] | None = None  # when TRUE, the message's TAGS is one of these (the consume-queue pre-filter)


def _const(value: Any, boolean: bool = False) -> Node:
    return Node(lambda get: value, to_text(value), boolean, True, value)


def _as_boolean(n: Node) -> Node:
    if n.boolean:
        return n
    if n.prop is not None:
        f = n.fn

        def cast(get: Get) -> Any:
            v = f(get)
            return None if v is None else (v if type(v) is bool else False)

        return Node(cast, n.text, True)
    raise SelectorError(PARSE_EXCEPTION, f"Expression will not result in a boolean value: {n.text}")


def _check_less_than(n: Node) -> None:
    if (n.const and (type(n.value) is bool or not isinstance(n.value, (int, float)))) or (n.boolean and not n.const):
        raise _fail(f"Value '{n.text}' cannot be compared.")


_INT_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
}


def _prop_vs_integer(name: str, const: int, op: Callable[[Any, Any], bool]) -> Eval:
    """The common ``prop <op> 5`` without the generic dispatch: the same result as ``compare`` (the string is
    parsed as the literal's type, Integer or Long, or the evaluation fails)."""
    lo, hi = (LONG_MIN, LONG_MAX) if type(const) is JLong else (INT_MIN, INT_MAX)

    def ev(get: Get) -> bool | None:
        v = get(name)
        if v is None:
            return None
        return op(java_integer(v, lo, hi), const)

    return ev


def _compare_node(left: Node, right: Node, sym: str, test: Callable[[int], bool]) -> Node:
    _check_less_than(left)
    _check_less_than(right)
    text = f"({left.text} {sym} {right.text})"
    if left.prop is not None and right.const and type(right.value) in (int, JLong):
        return Node(_prop_vs_integer(left.prop, right.value, _INT_OPS[sym]), text, True)
    lf, rf = left.fn, right.fn

    def ev(get: Get) -> bool | None:
        lv = lf(get)
        if lv is None:
            return None
        rv = rf(get)
        if rv is None:
            return None
        if type(lv) is str and type(rv) is str:  # J: strings under <, >, ... compare as doubles or throw
            return test(compare(java_double(lv), java_double(rv)))
        return test(compare(lv, rv))

    return Node(ev, text, True)


def _prop_equals_string(name: str, const: str) -> Eval:
    def ev(get: Get) -> bool | None:
        v = get(name)
        return None if v is None else v == const

    return ev


def _equal_node(left: Node, right: Node, text: str) -> Node:
    if left.prop is not None and right.const:
        if type(right.value) is str:  # String.equals, else compareTo != 0: plain equality
            tags = frozenset({right.value}) if left.prop == TAGS else None
            return Node(_prop_equals_string(left.prop, right.value), text, True, tags=tags)
        if type(right.value) in (int, JLong):
            return Node(_prop_vs_integer(left.prop, right.value, operator.eq), text, True)
    lf, rf = left.fn, right.fn

    def ev(get: Get) -> bool | None:
        lv = lf(get)
        rv = rf(get)
        if (lv is None) != (rv is None):
            return None if lv is None else False
        if lv is None or java_equals(lv, rv):
            return True
        return compare(lv, rv) == 0

    return Node(ev, text, True)


def _not(n: Node) -> Node:
    n = _as_boolean(n)
    f = n.fn

    def ev(get: Get) -> bool | None:
        v = f(get)
        return None if v is None else not v

    return Node(ev, f"(NOT {n.text})", True)


def _and(a: Node, b: Node) -> Node:
    a, b = _as_boolean(a), _as_boolean(b)
    af, bf = a.fn, b.fn

    def ev(get: Get) -> bool | None:
        lv = af(get)
        if lv is False:
            return False
        rv = bf(get)
        if rv is False:
            return False
        return None if lv is None or rv is None else True

    if a.tags is not None and b.tags is not None:
        tags: frozenset[str] | None = a.tags & b.tags
    else:
        tags = a.tags if a.tags is not None else b.tags
    return Node(ev, f"({a.text} && {b.text})", True, tags=tags)


def _or(a: Node, b: Node) -> Node:
    a, b = _as_boolean(a), _as_boolean(b)
    af, bf = a.fn, b.fn

    def ev(get: Get) -> bool | None:
        lv = af(get)
        if lv is True:
            return True
        rv = bf(get)
        if rv is True:
            return True
        return None if lv is None or rv is None else False

    tags = a.tags | b.tags if a.tags is not None and b.tags is not None else None
    return Node(ev, f"({a.text} || {b.text})", True, tags=tags)


def _string_test(left: Node, search: str, sym: str, test: Callable[[str, str], bool], negate: bool) -> Node:
    f = left.fn

    def ev(get: Get) -> bool:
        if not search:
            return False
        v = f(get)
        if type(v) is not str:
            return False
        return test(v, search) is not negate

    return Node(ev, f"{left.text} {sym} {to_text(search)}", True)


def _in(left: Node, items: list[str], negate: bool) -> Node:
    if left.prop is None:
        raise _fail(f"Expected a property for In expression, got: {left.text}")
    name = left.prop
    wanted = frozenset(items)

    def ev(get: Get) -> bool | None:
        v = get(name)
        if v is None:
            return None
        return (v in wanted) is not negate

    sym = "NOT IN" if negate else "IN"
    tags = wanted if name == TAGS and not negate else None
    return Node(ev, f"{name} {sym} ( {', '.join(items)} )", True, tags=tags)


def _between(value: Node, lo: Node, hi: Node) -> Node:
    if lo.const and hi.const:
        if lo.value is None or hi.value is None:
            raise _fail("Illegal values of between, values can not be null!")
        try:
            ordered = compare(hi.value, lo.value) >= 0
        except EvaluationError as exc:
            raise _fail(str(exc)) from None
        if not ordered:
            raise _fail(
                f"Illegal values of between, left value({to_text(lo.value)}) must less than or equal to right "
                f"value({to_text(hi.value)})"
            )
    fast = _prop_between(value, lo, hi, False)
    return fast or _and(_compare_node(value, lo, ">=", _GE), _compare_node(value, hi, "<=", _LE))


def _not_between(value: Node, lo: Node, hi: Node) -> Node:
    fast = _prop_between(value, lo, hi, True)
    return fast or _or(_compare_node(value, lo, "<", _LT), _compare_node(value, hi, ">", _GT))


def _prop_between(value: Node, lo: Node, hi: Node, negate: bool) -> Node | None:
    """``prop [NOT] BETWEEN 1 AND 5`` with two integer literals of one Java type: the property parsed once (the same
    result, failures included, as the two comparisons it stands for)."""
    kind = type(lo.value)
    if value.prop is None or not (lo.const and hi.const) or kind not in (int, JLong) or type(hi.value) is not kind:
        return None
    _check_less_than(value)
    name, low, high = value.prop, lo.value, hi.value
    bounds = (LONG_MIN, LONG_MAX) if kind is JLong else (INT_MIN, INT_MAX)

    def ev(get: Get) -> bool | None:
        v = get(name)
        if v is None:
            return None
        return (low <= java_integer(v, *bounds) <= high) is not negate

    v = value.text  # the text of the two comparisons it stands for (error messages quote it)
    text = f"(({v} < {lo.text}) || ({v} > {hi.text}))" if negate else f"(({v} >= {lo.text}) && ({v} <= {hi.text}))"
    return Node(ev, text, True)


def _negate(n: Node) -> Node:
    f = n.fn

    def ev(get: Get) -> Any:
        v = f(get)
        t = type(v)
        if t is int or t is float:
            return -v
        if t is JLong:
            return JLong(-v)
        return None

    return Node(ev, f"(- {n.text})", False)


def _decimal(text: str) -> Node:
    digits = text[:-1] if text[-1] in "lL" else text
    v = int(digits)
    if v > LONG_MAX:
        raise SelectorError("java.lang.NumberFormatException", f'For input string: "{digits}"')
    return _const(v if INT_MIN <= v <= INT_MAX else JLong(v))


def _float(text: str) -> Node:
    v = float(text)
    if v == float("inf"):
        raise _fail(f"{text} is greater than 1.7976931348623157E308")
    if v < 5e-324:
        raise _fail(f"{text} is less than 4.9E-324")
    return _const(v)


def _unquote(tok: str) -> str:
    return tok[1:-1].replace("''", "'")


def _prop(name: str) -> Node:
    return Node(lambda get: get(name), name, prop=name)


_GT: Callable[[int], bool] = (0).__lt__
_GE: Callable[[int], bool] = (0).__le__
_LT: Callable[[int], bool] = (0).__gt__
_LE: Callable[[int], bool] = (0).__ge__


def _eq(a: Node, b: Node) -> Node:
    for n in (a, b):
        if n.const and n.value is None:
            raise _fail(f"'{n.text}' cannot be compared.")
    if a.const and b.const and a.boolean and not b.boolean:
        raise _fail(f"'{a.text}' cannot be compared with '{b.text}'")
    return _equal_node(a, b, f"({a.text} == {b.text})")


def _is_null(a: Node) -> Node:
    if a.prop is not None:  # the common ``prop IS [NOT] NULL``: only its presence counts
        name = a.prop
        return Node(lambda get: get(name) is None, f"({a.text} == NULL)", True)
    return _equal_node(a, _const(None, True), f"({a.text} == NULL)")


_ACTIONS: dict[str, Callable[..., Node | str]] = {
    "or_": _or,
    "and_": _and,
    "eq": _eq,
    "ne": lambda a, b: _not(_eq(a, b)),
    "is_null": _is_null,
    "is_not_null": lambda a: _not(_is_null(a)),
    "gt": lambda a, b: _compare_node(a, b, ">", _GT),
    "ge": lambda a, b: _compare_node(a, b, ">=", _GE),
    "lt": lambda a, b: _compare_node(a, b, "<", _LT),
    "le": lambda a, b: _compare_node(a, b, "<=", _LE),
    "contains": lambda a, s: _string_test(a, s, "CONTAINS", str.__contains__, False),
    "not_contains": lambda a, s: _string_test(a, s, "NOT CONTAINS", str.__contains__, True),
    "startswith": lambda a, s: _string_test(a, s, "STARTSWITH", str.startswith, False),
    "not_startswith": lambda a, s: _string_test(a, s, "NOT STARTSWITH", str.startswith, True),
    "endswith": lambda a, s: _string_test(a, s, "ENDSWITH", str.endswith, False),
    "not_endswith": lambda a, s: _string_test(a, s, "NOT ENDSWITH", str.endswith, True),
    "between": _between,
    "not_between": _not_between,
    "in_": lambda a, *items: _in(a, list(items), False),
    "not_in": lambda a, *items: _in(a, list(items), True),
    "pos": lambda a: a,
    "neg": _negate,
    "not_": _not,
    "string": lambda tok: _unquote(str(tok)),
    "str_lit": lambda s: _const(s),
    "decimal": lambda tok: _decimal(str(tok)),
    "float_lit": lambda tok: _float(str(tok)),
    "true_lit": lambda: _const(True, True),
    "false_lit": lambda: _const(False, True),
    "null_lit": lambda: _const(None, True),
    "prop": lambda tok: _prop(str(tok)),
}


class _Inline:
    """lark's inline callbacks: each rule's children (tokens and nodes) go straight to its factory."""

    def __getattr__(self, name: str) -> Callable[[list[Any]], Any]:
        action = _ACTIONS.get(name)
        if action is None:
            raise AttributeError(name)
        return lambda children: action(*children)


_PARSER = Lark(_GRAMMAR, parser="lalr", transformer=_Inline(), maybe_placeholders=False)


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled selector. ``matches(get)`` is True only when the expression evaluates to TRUE; ``get`` returns a
    property's value (or None) by name."""

    text: str
    evaluate: Eval
    required_tags: frozenset[str] | None = None  # a match has one of these TAGS (None: any, or none at all)

    def matches(self, get: Get) -> bool:
        try:
            return self.evaluate(get) is True
        except Exception:  # EvaluationError, or anything else J's catch-all Throwable would cover: no match
            return False


# JavaCC's ``tokenImage`` of the literal token kinds (the others are their own text in quotes, keywords upper-cased)
_TOKEN_IMAGES = {
    "DECIMAL": "<DECIMAL_LITERAL>",
    "FLOAT": "<FLOATING_POINT_LITERAL>",
    "STRING": "<STRING_LITERAL>",
    "ID": "<ID>",
}


def _token_image(tok: Token) -> str:
    image = _TOKEN_IMAGES.get(tok.type)
    if image is not None:
        return image
    if tok.type.startswith("_"):  # a keyword: _NOT → "NOT"
        return f'"{tok.type[1:]}"'
    return f'"{tok}"'


def _syntax_message(exc: UnexpectedInput) -> str:
    """The first line of JavaCC's ``ParseException`` / ``TokenMgrError`` message (J's "Was expecting one of" list
    that follows it is not reproduced: docs/reference-differences.md)."""
    tok = getattr(exc, "token", None)
    if isinstance(tok, Token):
        if tok.type == "$END":
            return f'Encountered "<EOF>" at line {exc.line}, column {exc.column}.'
        shown = str(tok).replace("\\", "\\\\").replace('"', '\\"')
        return f'Encountered " {_token_image(tok)} "{shown} "" at line {exc.line}, column {exc.column}.'
    char = getattr(exc, "char", "")
    code = f" ({ord(char)})" if len(char) == 1 else ""
    return f'Lexical error at line {exc.line}, column {exc.column}.  Encountered: "{char}"{code}, after : ""'


def parse_selector(text: str) -> Selector:
    """Compile ``text`` (no caching). Raises ``SelectorError``."""
    try:
        node = _PARSER.parse(text)
    except UnexpectedInput as exc:
        raise SelectorError(PARSE_EXCEPTION, _syntax_message(exc)) from None
    except VisitError as exc:  # a factory's check failed while building the tree
        orig = exc.orig_exc
        if isinstance(orig, SelectorError):
            raise orig from None
        raise _fail(str(orig)) from None
    if not isinstance(node, Node):
        raise SelectorError(PARSE_EXCEPTION, f"Expression will not result in a boolean value: {node}")
    top = _as_boolean(node)
    return Selector(text, top.fn, top.tags)


_CACHE: dict[str, Selector | SelectorError] = {}
_CACHE_MAX = 1024


def compile_selector(text: str) -> Selector:
    """``parse_selector`` with a cache by text, failures included (J ``SelectorParser.parse``)."""
    hit = _CACHE.get(text)
    if hit is None:
        try:
            hit = parse_selector(text)
        except SelectorError as exc:
            hit = exc
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[text] = hit
    if isinstance(hit, SelectorError):
        raise hit
    return hit
