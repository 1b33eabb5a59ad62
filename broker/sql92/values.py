"""Java value semantics of RocketMQ's SQL92 selectors: the conversions and the comparison of ``ComparisonExpression``.

A selector sees property values as strings and literals as Java ``Integer``, ``Long``, ``Double``, ``String`` and
``Boolean``. Here they are Python ``int`` (Integer), ``JLong`` (an ``int`` subclass: Long), ``float`` (Double), ``str``
and ``bool``; ``None`` is SQL's unknown. ``compare`` is J's ``ComparisonExpression.__compare`` with
``convertStringExpressions`` on (as ``SelectorParser.parse`` always sets it):

============ ================================================================================================
left, right  what J does before ``compareTo``
============ ================================================================================================
Boolean, Str ``Boolean.valueOf((String) lv)``: a ClassCastException (the whole evaluation fails)
Integer, X   Long → widen left; Double → left to double; String → ``Integer.valueOf(right)``; other → -1
Long, X      Integer → widen right; Double → left to double; String → ``Long.valueOf(right)``; other → -1
Double, X    Integer/Long → right to double; String → ``Double.valueOf(right)``; other → -1
String, X    Boolean → ``Boolean.valueOf(left)``; Integer/Long/Double → ``valueOf(left)`` of that type; other → -1
============ ================================================================================================

A failed conversion raises ``EvaluationError``: J throws, the broker logs it and the message does not match.
"""

from __future__ import annotations

import math
import re

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1

# Java FloatingDecimal's decimal forms (hexadecimal floats are not accepted here), after String.trim()
_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)\Z")


class JLong(int):
    """A Java ``Long`` (a literal outside the 32-bit range, or its negation); plain ``int`` is an ``Integer``."""

    __slots__ = ()


class EvaluationError(Exception):
    """An exception J's evaluation would throw (a failed number conversion, a bad cast): the message does not match."""


def _java_trim(s: str) -> str:
    return s.strip("".join(chr(c) for c in range(33)))


def java_integer(s: str, lo: int = INT_MIN, hi: int = INT_MAX) -> int:
    """``Integer.valueOf`` (or ``Long.valueOf`` with the long bounds): an optional sign and decimal digits (any
    script's, as ``Character.digit``), in range."""
    if s.isdecimal() or (s[:1] in "+-" and s[1:].isdecimal()):
        v = int(s)
        if lo <= v <= hi:
            return v
    raise EvaluationError(f'NumberFormatException: For input string: "{s}"')


def java_long(s: str) -> JLong:
    return JLong(java_integer(s, LONG_MIN, LONG_MAX))


def java_double(s: str) -> float:
    """``Double.valueOf``: trims, accepts NaN/Infinity and a trailing f/d."""
    t = _java_trim(s)
    if not _JAVA_DOUBLE.match(t):
        raise EvaluationError(f'NumberFormatException: For input string: "{s}"')
    t = t.rstrip("fFdD") if not t.endswith("NaN") and not t.endswith("Infinity") else t
    return float(t.replace("Infinity", "inf"))


def java_boolean(s: str) -> bool:
    return s.lower() == "true"


def _cmp_double(a: float, b: float) -> int:
    """``Double.compareTo``: NaN equals itself and is above everything, -0.0 below 0.0."""
    if a < b:
        return -1
    if a > b:
        return 1
    an, bn = math.isnan(a), math.isnan(b)
    if an or bn:
        return 0 if an and bn else (1 if an else -1)
    sa, sb = math.copysign(1.0, a), math.copysign(1.0, b)
    return 0 if sa == sb else (-1 if sa < sb else 1)


def _cmp(a: object, b: object) -> int:
    if type(a) is float:
        return _cmp_double(a, b)  # type: ignore[arg-type]
    return -1 if a < b else (1 if a > b else 0)  # type: ignore[operator]


def compare(lv: object, rv: object) -> int:
    """J ``__compare(lv, rv, true)`` for two non-null values."""
    lc, rc = type(lv), type(rv)
    if lc is not rc:
        if lc is bool:
            if rc is str:
                raise EvaluationError("ClassCastException: Boolean cannot be cast to String")
            return -1
        if lc is int:
            if rc is JLong:
                lv = JLong(lv)  # type: ignore[call-overload]
            elif rc is float:
                lv = float(lv)  # type: ignore[arg-type]
            elif rc is str:
                rv = java_integer(rv)  # type: ignore[arg-type]
            else:
                return -1
        elif lc is JLong:
            if rc is int:
                rv = JLong(rv)  # type: ignore[call-overload]
            elif rc is float:
                lv = float(lv)  # type: ignore[arg-type]
            elif rc is str:
                rv = java_long(rv)  # type: ignore[arg-type]
            else:
                return -1
        elif lc is float:
            if rc is int or rc is JLong:
                rv = float(rv)  # type: ignore[arg-type]
            elif rc is str:
                rv = java_double(rv)  # type: ignore[arg-type]
            else:
                return -1
        elif lc is str:
            if rc is bool:
                lv = java_boolean(lv)  # type: ignore[arg-type]
            elif rc is int:
                lv = java_integer(lv)  # type: ignore[arg-type]
            elif rc is JLong:
                lv = java_long(lv)  # type: ignore[arg-type]
            elif rc is float:
                lv = java_double(lv)  # type: ignore[arg-type]
            else:
                return -1
        else:
            return -1
    return _cmp(lv, rv)


def java_equals(lv: object, rv: object) -> bool:
    """``lv.equals(rv)`` (same class and value; Double by bits, so NaN equals NaN and 0.0 not -0.0)."""
    if type(lv) is not type(rv):
        return False
    if type(lv) is float:
        return _cmp_double(lv, rv) == 0  # type: ignore[arg-type]
    return lv == rv


def to_text(value: object) -> str:
    """J ``toString`` of a constant, for error messages."""
    if value is None:
        return "NULL"
    if value is True:
        return "TRUE"
    if value is False:
        return "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        return repr(value) if not math.isinf(value) else ("Infinity" if value > 0 else "-Infinity")
    return str(int(value))  # type: ignore[call-overload]
