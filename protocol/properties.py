"""The Java-properties text of RocketMQ's config files (broker.conf, namesrv.conf) and of its config-update request
bodies, read and written with ``javaproperties`` (java.util.Properties' grammar, not a hand-written subset):

| input                                   | meaning                                                        |
| --------------------------------------- | -------------------------------------------------------------- |
| blank line, ``#``/``!`` comment         | skipped                                                        |
| ``key=value``, ``key: value``, ``key value`` | the first ``=``, ``:`` or whitespace separates             |
| a line ending in an odd number of ``\\`` | continues on the next line (leading blanks there dropped)     |
| ``\\uXXXX``, ``\\t``, ``\\=`` …           | escapes, as Java decodes them                                  |
| ``key`` alone                           | the key with an empty value (Java's rule)                      |
| an empty key (``=value``)               | an error naming the source and line                            |

Files are read as UTF-8 and, when they are not valid UTF-8, as ISO-8859-1 (what ``Properties.load(InputStream)``
reads; ``\\u`` escapes work in both). ``update_properties_text`` rewrites values in place, keeping comments and the
order of the other lines, for writing runtime config changes back to the operator's file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import javaproperties


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


def read_properties_file(path: str | os.PathLike[str], error: type[ValueError] = PropertiesError) -> str:
    """The text of a config file (UTF-8, else ISO-8859-1); an unreadable file raises ``error`` with one line naming
    the file."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise error(f"cannot read config file {os.fspath(path)}: {reason}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")


def write_properties_file_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) through a temporary file, fsync and rename: a crash leaves either the
    old file or the new one, never a torn one."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
