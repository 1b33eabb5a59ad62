"""java.util.Properties text, read and written with ``javaproperties`` (java.util.Properties' grammar, not a
hand-written subset): the body of GET_BROKER_CONFIG / GET_NAMESRV_CONFIG replies and UPDATE_BROKER_CONFIG /
UPDATE_NAMESRV_CONFIG requests, and the text of RocketMQ's config files (broker.conf, namesrv.conf; reading and
rewriting those files is ``runtime.properties_file``).

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| properties text                        | GET_BROKER_CONFIG reply, UPDATE_BROKER_CONFIG| ``key=value\\n`` lines (java.util.Properties)     |

| input                                   | meaning                                                        |
| --------------------------------------- | -------------------------------------------------------------- |
| blank line, ``#``/``!`` comment         | skipped                                                        |
| ``key=value``, ``key: value``, ``key value`` | the first ``=``, ``:`` or whitespace separates             |
| a line ending in an odd number of ``\\`` | continues on the next line (leading blanks there dropped)     |
| ``\\uXXXX``, ``\\t``, ``\\=`` …           | escapes, as Java decodes them                                  |
| ``key`` alone                           | the key with an empty value (Java's rule)                      |
| an empty key (``=value``)               | ``parse_properties``: an error naming the source and line      |

``update_properties_text`` rewrites values in place, keeping comments and the order of the other lines, for writing
runtime config changes back to the operator's file.
"""

from __future__ import annotations

from collections.abc import Mapping

import javaproperties

from protocol.bodies.lenient import BodyBytes, _text


def encode_properties_text(props: Mapping[str, object]) -> bytes:
    """J ``MixAll.properties2String``: ``key=value\\n`` per entry (None values left out, booleans as true/false)."""
    lines = []
    for k, v in props.items():
        if v is None:
            continue
        text = ("true" if v else "false") if isinstance(v, bool) else str(v)
        lines.append(f"{k}={text}\n")
    return "".join(lines).encode("utf-8")


def decode_properties_text(body: BodyBytes) -> dict[str, str]:
    """``java.util.Properties.load`` of a body (read as UTF-8): every key and value as Java reads them, later keys
    winning."""
    return {
        elem.key: elem.value for elem in javaproperties.parse(_text(body)) if isinstance(elem, javaproperties.KeyValue)
    }


class PropertiesError(ValueError):
    """Text that is not Java properties; the message names the source and the line."""


def parse_properties(
    text: str, source: str = "<config>", error: type[ValueError] = PropertiesError
) -> list[tuple[int, str, str]]:
    """Properties text → ``(line_no, key, value)`` in file order (``line_no`` is the key's first line); an empty
    key raises ``error`` (the caller's config error)."""
    out: list[tuple[int, str, str]] = []
    line = 1
    try:
        elements = list(javaproperties.parse(text))
    except ValueError as exc:  # e.g. an invalid \u escape
        raise error(f"{source}: {exc}") from None
    for elem in elements:
        if isinstance(elem, javaproperties.KeyValue):
            if not elem.key:
                shown = elem.source.strip()
                raise error(f"{source} line {line}: expected key=value, got {shown!r}")
            out.append((line, elem.key, elem.value.strip()))
        line += elem.source.count("\n")
    return out


def update_properties_text(text: str, updates: Mapping[str, str]) -> str:
    """``text`` with each key of ``updates`` set to its value: the key's last line is rewritten in place (earlier
    duplicates dropped), keys not present are appended; comments and other lines are kept as they are."""
    elements = list(javaproperties.parse(text))
    last: dict[str, int] = {}
    for i, elem in enumerate(elements):
        if isinstance(elem, javaproperties.KeyValue) and elem.key in updates:
            last[elem.key] = i
    parts: list[str] = []
    for i, elem in enumerate(elements):
        if isinstance(elem, javaproperties.KeyValue) and elem.key in updates:
            if last[elem.key] == i:
                parts.append(javaproperties.join_key_value(elem.key, updates[elem.key]) + "\n")
            continue
        parts.append(elem.source)
    if parts and not parts[-1].endswith("\n"):
        parts[-1] += "\n"
    for key, value in updates.items():
        if key not in last:
            parts.append(javaproperties.join_key_value(key, value) + "\n")
    return "".join(parts)
