"""The fastjson-tolerant JSON reader every body decoder shares, the compact writer, and the number/enum coercions
for what the official clients send (``protocol.bodies`` has the list of quirks).

| reads                                            | as                                                       |
|--------------------------------------------------|----------------------------------------------------------|
| ``{0:"addr"}`` (unquoted numeric/ident keys)     | ``{"0":"addr"}``                                         |
| ``{{"brokerName":..}:100}`` (object keys)        | the key passed to ``object_key`` (default: frozen tuple) |
| trailing commas, C++'s trailing ``"\\n"``        | ignored                                                  |
| a long as number or string, C++'s unsigned text  | the signed Java long (``_long``)                         |
| an enum as name or ordinal                       | its name (``_enum_name``)                                |
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable
from typing import Any, Final

_LONG_RANGE: Final = 1 << 64
_LONG_MAX: Final = (1 << 63) - 1

BodyBytes = bytes | bytearray | memoryview | str


class BodyDecodeError(ValueError):
    """A body that cannot be decoded; the message says what was wrong."""


# -- JSON ------------------------------------------------------------------------------------------------------------

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps(obj: Any) -> bytes:
    """Compact standard JSON, UTF-8."""
    return _dumps(obj).encode("utf-8")


def _text(data: BodyBytes) -> str:
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyDecodeError(f"body is not UTF-8: {exc}") from None


def _freeze(value: Any) -> Hashable:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value  # type: ignore[no-any-return]


def loads_lenient(data: BodyBytes, *, object_key: Callable[[dict[Any, Any]], Hashable] | None = None) -> Any:
    """``json.loads`` that also reads fastjson's output: unquoted numeric or identifier keys (``{0:"a"}`` reads as
    ``{"0":"a"}``), object keys (each passed to ``object_key``; by default frozen into a sorted tuple of pairs) and
    trailing commas. Raises ``BodyDecodeError``."""
    text = _text(data)
    try:
        return json.loads(text)
    except RecursionError:
        raise BodyDecodeError("JSON nested too deeply") from None
    except ValueError:
        pass
    try:
        return _LenientParser(text, object_key or _freeze).parse()
    except RecursionError:
        raise BodyDecodeError("JSON nested too deeply") from None


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_WS = re.compile(r"[ \t\n\r]*")
_MAX_DEPTH: Final = 256


class _LenientParser:
    """A small recursive-descent JSON reader for the fastjson dialect (only used when ``json.loads`` fails)."""

    __slots__ = ("_s", "_n", "_object_key")

    def __init__(self, text: str, object_key: Callable[[dict[Any, Any]], Hashable]) -> None:
        self._s = text
        self._n = len(text)
        self._object_key = object_key

    def _fail(self, what: str, pos: int) -> BodyDecodeError:
        return BodyDecodeError(f"not JSON: {what} at char {pos}")

    def _ws(self, pos: int) -> int:
        return _WS.match(self._s, pos).end()  # type: ignore[union-attr]  # [ \t\n\r]* always matches

    def _peek(self, pos: int) -> str:
        if pos >= self._n:
            raise self._fail("unexpected end of data", pos)
        return self._s[pos]

    def parse(self) -> Any:
        value, pos = self._value(self._ws(0), 0)
        pos = self._ws(pos)
        if pos != self._n:
            raise self._fail("extra data", pos)
        return value

    def _string(self, pos: int) -> tuple[str, int]:
        m = _STRING.match(self._s, pos)
        if m is None:
            raise self._fail("unterminated string", pos)
        try:
            value: str = json.loads(m.group())  # escapes and control characters checked by the C decoder
        except ValueError as exc:
            raise self._fail(f"bad string ({exc})", pos) from None
        return value, m.end()

    def _value(self, pos: int, depth: int) -> tuple[Any, int]:
        c = self._peek(pos)
        if c == '"':
            return self._string(pos)
        if c == "{":
            return self._object(pos + 1, depth + 1)
        if c == "[":
            return self._array(pos + 1, depth + 1)
        m = _NUMBER.match(self._s, pos)
        if m is not None:
            text = m.group()
            return (float(text) if m.group(1) or m.group(2) else int(text)), m.end()
        for literal, value in (("true", True), ("false", False), ("null", None)):
            if self._s.startswith(literal, pos):
                return value, pos + len(literal)
        raise self._fail(f"unexpected {c!r}", pos)

    def _key(self, pos: int, depth: int) -> tuple[Hashable, int]:
        c = self._peek(pos)
        if c == '"':
            return self._string(pos)
        if c == "{":
            obj, end = self._object(pos + 1, depth + 1)
            try:
                return self._object_key(obj), end
            except (ValueError, KeyError, TypeError) as exc:
                raise self._fail(f"unusable object key ({exc})", pos) from None
        m = _NUMBER.match(self._s, pos) or _IDENT.match(self._s, pos)
        if m is None:
            raise self._fail(f"unexpected {c!r} where a key belongs", pos)
        return m.group(), m.end()

    def _object(self, pos: int, depth: int) -> tuple[dict[Hashable, Any], int]:
        if depth > _MAX_DEPTH:
            raise self._fail("nested too deeply", pos)
        out: dict[Hashable, Any] = {}
        pos = self._ws(pos)
        if self._peek(pos) == "}":
            return out, pos + 1
        while True:
            key, pos = self._key(pos, depth)
            pos = self._ws(pos)
            if self._peek(pos) != ":":
                raise self._fail("expected ':'", pos)
            value, pos = self._value(self._ws(pos + 1), depth)
            out[key] = value
            pos = self._ws(pos)
            c = self._peek(pos)
            if c == "}":
                return out, pos + 1
            if c != ",":
                raise self._fail("expected ',' or '}'", pos)
            pos = self._ws(pos + 1)
            if self._peek(pos) == "}":  # trailing comma
                return out, pos + 1

    def _array(self, pos: int, depth: int) -> tuple[list[Any], int]:
        if depth > _MAX_DEPTH:
            raise self._fail("nested too deeply", pos)
        out: list[Any] = []
        pos = self._ws(pos)
        if self._peek(pos) == "]":
            return out, pos + 1
        while True:
            value, pos = self._value(pos, depth)
            out.append(value)
            pos = self._ws(pos)
            c = self._peek(pos)
            if c == "]":
                return out, pos + 1
            if c != ",":
                raise self._fail("expected ',' or ']'", pos)
            pos = self._ws(pos + 1)
            if self._peek(pos) == "]":
                return out, pos + 1


def _long(value: Any, what: str) -> int:
    """A Java long from a JSON number or numeric string; C++'s unsigned 64-bit text (-1 printed as
    18446744073709551615) wraps to the signed value."""
    if isinstance(value, bool):
        raise BodyDecodeError(f"{what}: boolean where a number belongs")
    if isinstance(value, int):
        n = value
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    elif isinstance(value, str):
        try:
            n = int(value.strip())
        except ValueError:
            raise BodyDecodeError(f"{what}: {value!r} is not a number") from None
    else:
        raise BodyDecodeError(f"{what}: {value!r} is not a number")
    if _LONG_MAX < n < _LONG_RANGE:
        n -= _LONG_RANGE
    return n


def _enum_name(value: Any, names: tuple[str, ...], what: str) -> Any:
    """An enum ordinal (int or digit string, as C++ sends) → its name; anything else passes through to pydantic."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: boolean is not an enum value")
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        i = int(value)
        if 0 <= i < len(names):
            return names[i]
        raise ValueError(f"{what}: ordinal {i} out of range")
    return value
