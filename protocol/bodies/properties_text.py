"""java.util.Properties text, the body of GET_BROKER_CONFIG replies and UPDATE_BROKER_CONFIG requests.

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| properties text                        | GET_BROKER_CONFIG reply, UPDATE_BROKER_CONFIG| ``key=value\\n`` lines (java.util.Properties)      |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from protocol.bodies.lenient import BodyBytes, _text

# -- properties text (GET_BROKER_CONFIG / UPDATE_BROKER_CONFIG) -------------------------------------------------------


def encode_properties_text(props: Mapping[str, object]) -> bytes:
    """J ``MixAll.properties2String``: ``key=value\\n`` per entry (None values left out, booleans as true/false)."""
    lines = []
    for k, v in props.items():
        if v is None:
            continue
        text = ("true" if v else "false") if isinstance(v, bool) else str(v)
        lines.append(f"{k}={text}\n")
    return "".join(lines).encode("utf-8")


_PROP_ESCAPES: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and i + 6 <= len(s):
                try:
                    out.append(chr(int(s[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_PROP_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _logical_lines(text: str) -> Iterable[str]:
    buf = ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if not buf and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes continues the line
            buf += line[:-1]
            continue
        yield buf + line
        buf = ""
    if buf:
        yield buf


def decode_properties_text(body: BodyBytes) -> dict[str, str]:
    """``java.util.Properties.load`` for the common subset: comments (``#``/``!``), ``=``/``:``/space separators,
    backslash continuations and escapes (``\\t``, ``\\n``, ``\\uXXXX``, ``\\=``…). Read as UTF-8."""
    out: dict[str, str] = {}
    for line in _logical_lines(_text(body)):
        i = 0
        n = len(line)
        while i < n:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=: \t\f":
                break
            i += 1
        key = line[:i]
        j = i
        while j < n and line[j] in " \t\f":
            j += 1
        if j < n and line[j] in "=:":
            j += 1
            while j < n and line[j] in " \t\f":
                j += 1
        out[_unescape(key)] = _unescape(line[j:])
    return out
