"""SQL92 selectors: RocketMQ's grammar and J's evaluation semantics (three-valued logic, Java number conversions,
parse-time checks), case by case from ``SelectorParser.jj`` and the expression classes, plus properties checked with
Hypothesis (numeric comparisons agree with integer arithmetic; NOT/AND/OR follow Kleene logic; BETWEEN equals its
expansion; arbitrary text either compiles or raises ``SelectorError``)."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.sql92 import SelectorError, compile_selector, parse_selector
from broker.sql92.values import EvaluationError

PROPS = {"a": "12", "b": "x", "TAGS": "TagA", "f": "1.5", "t": "TRUE", "neg": "-3", "big": "3000000000"}


def ev(expr: str, props: dict[str, str] | None = None) -> Any:
    return parse_selector(expr).evaluate((PROPS if props is None else props).get)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ("a between 10 and 14", True),
        ("a NOT BETWEEN 10 AND 14", False),
        ("a > 5 AND b = 'x'", True),
        ("a > 5 and b = 'y'", False),
        ("TAGS = 'TagA'", True),
        ("TAGS <> 'TagA'", False),
        ("b IN ('x', 'y')", True),
        ("b NOT IN ('x', 'y')", False),
        ("missing IN ('x')", None),
        ("missing NOT IN ('x')", None),  # NOT IN does not match a missing property
        ("missing IS NULL", True),
        ("a IS NOT NULL", True),
        ("missing = 1", None),
        ("NOT missing = 1", None),
        ("missing = 1 OR a = 12", True),
        ("missing = 1 AND a = 12", None),
        ("missing = 1 AND a = 13", False),
        ("missing = other", True),  # J: null == null
        ("t = TRUE", True),
        ("b = TRUE", False),
        ("f > 1.0", True),
        ("f >= 1.5 AND f <= 1.5", True),
        ("a = 12.0", True),
        ("a = 12L", True),
        ("big > 2999999999", True),  # a Long literal: the property parses as a long
        ("a > -5", True),
        ("neg < -2", True),
        ("neg = - - -3", True),
        ("- a > 1", None),  # negating a string property gives null
        ("a", False),  # a bare identifier is a boolean cast: a string is never TRUE
        ("missing", None),
        ("TRUE", True),
        ("FALSE OR NULL", None),
        ("b CONTAINS 'x'", True),
        ("b NOT CONTAINS 'x'", False),
        ("missing NOT CONTAINS 'x'", False),
        ("TAGS STARTSWITH 'Tag'", True),
        ("TAGS ENDSWITH 'B'", False),
        ("b CONTAINS ''", False),
        ("a > 5 -- a comment\n", True),
        ("/* block */ a > 5", True),
        ("B = 'x'", None),  # property names are case-sensitive, keywords are not
        ("a = '12'", True),
        ("b = 'it''s'", False),
        ("(a > 5) OR (missing = 1)", True),
        ("a > 5 OR b > 1", True),  # OR stops at the first TRUE: the failing conversion is never reached
    ],
)
def test_evaluation(expr: str, want: Any) -> None:
    assert ev(expr) is want


@pytest.mark.parametrize(
    "expr",
    [
        "f > 1",  # Integer.valueOf("1.5") fails: no match
        "b > 1",
        "b > 1 OR a > 5",  # the left side throws before OR sees the right
        "a > missing OR b > 1.0",
        "TRUE = b",  # J casts the Boolean to String: ClassCastException
    ],
)
def test_evaluation_errors_never_match(expr: str) -> None:
    s = parse_selector(expr)
    with pytest.raises(EvaluationError):
        s.evaluate(PROPS.get)
    assert s.matches(PROPS.get) is False


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("a > 'abc'", "java.lang.RuntimeException: Value ''abc'' cannot be compared."),
        ("a > TRUE", "java.lang.RuntimeException: Value 'TRUE' cannot be compared."),
        ("a = NULL", "java.lang.RuntimeException: 'NULL' cannot be compared."),
        ("TRUE = 5", "java.lang.RuntimeException: 'TRUE' cannot be compared with '5'"),
        ("a BETWEEN 14 AND 10", "left value(14) must less than or equal to right value(10)"),
        ("5 IN ('5')", "Expected a property for In expression, got: 5"),
        ("a IN (5)", "ParseException"),
        ("'abc'", "Expression will not result in a boolean value: 'abc'"),
        ("a + 1 > 2", "ParseException"),  # no arithmetic
        ("a LIKE 'x'", "ParseException"),
        ("a != 1", "ParseException"),
        ("a == 1", "ParseException"),
        ("a > 5 -- no line end", "ParseException"),
        ("a = 0.0", "is less than 4.9E-324"),
        ("a = 9223372036854775808", "NumberFormatException"),
        ("a.b = 1", "ParseException"),
        ("AND = 1", "ParseException"),
        ("NOT a > 5", "cannot be compared"),  # NOT binds to a, then (NOT a) > 5
        ("", "ParseException"),
        ("a > 1 AND", "ParseException"),
        ("007 = a", "ParseException"),
    ],
)
def test_compile_errors(expr: str, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_selector(expr)
    assert message in str(info.value)


def test_compile_cache_returns_the_same_selector_and_failure() -> None:
    assert compile_selector("a > 1 AND b = 'q'") is compile_selector("a > 1 AND b = 'q'")
    with pytest.raises(SelectorError) as first:
        compile_selector("a >>")
    with pytest.raises(SelectorError) as second:
        compile_selector("a >>")
    assert first.value is second.value


def test_keywords_are_case_insensitive() -> None:
    assert ev("a BeTwEeN 10 aNd 14 Or b iS nUlL") is True
    assert ev("b NoT iN ('y')") is True


small_ints = st.integers(min_value=-(2**31), max_value=2**31 - 1)
OPS = {">": int.__gt__, ">=": int.__ge__, "<": int.__lt__, "<=": int.__le__, "=": int.__eq__, "<>": int.__ne__}


@given(value=small_ints, literal=st.integers(min_value=0, max_value=2**40), op=st.sampled_from(sorted(OPS)))
def test_numeric_comparison_agrees_with_integers(value: int, literal: int, op: str) -> None:
    got = ev(f"x {op} {literal}", {"x": str(value)})
    assert got is OPS[op](value, literal)


@given(value=small_ints, lo=small_ints, hi=small_ints)
def test_between_is_its_expansion(value: int, lo: int, hi: int) -> None:
    lo, hi = min(lo, hi), max(lo, hi)  # constant bounds out of order do not compile (tested above)
    props = {"x": str(value)}
    lo_s = f"({lo})" if lo >= 0 else f"-{-lo}"
    hi_s = f"({hi})" if hi >= 0 else f"-{-hi}"
    expanded = ev(f"x >= {lo_s} AND x <= {hi_s}", props)
    assert ev(f"x BETWEEN {lo_s} AND {hi_s}", props) is expanded
    assert ev(f"x NOT BETWEEN {lo_s} AND {hi_s}", props) is (not expanded)


TRI = st.sampled_from(["TRUE", "FALSE", "NULL"])
_VAL = {"TRUE": True, "FALSE": False, "NULL": None}


def _kleene_and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _kleene_or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


@given(a=TRI, b=TRI)
def test_logic_is_kleene(a: str, b: str) -> None:
    va, vb = _VAL[a], _VAL[b]
    assert ev(f"{a} AND {b}") is _kleene_and(va, vb)
    assert ev(f"{a} OR {b}") is _kleene_or(va, vb)
    assert ev(f"NOT {a}") is (None if va is None else not va)
    assert ev(f"NOT ({a} AND {b})") is ev(f"NOT {a} OR NOT {b}")


@given(st.text(alphabet=string.ascii_letters + string.digits + " '()<>=-.,_$*/\n", max_size=40))
def test_any_text_compiles_or_raises_selector_error(text: str) -> None:
    try:
        s = parse_selector(text)
    except SelectorError:
        return
    assert s.matches(PROPS.get) in (True, False)
