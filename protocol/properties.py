"""The Java-properties text that RocketMQ's config files (broker.conf, namesrv.conf) and its config-update request
bodies use: one ``key=value`` (or ``key: value``) per line.

| line                         | meaning                                                  |
| ---------------------------- | -------------------------------------------------------- |
| empty, or only whitespace    | skipped                                                  |
| first non-blank is ``#``/``!`` | a comment, skipped                                     |
| ``key=value`` / ``key: value`` | split at the first ``=`` or ``:``, both sides trimmed  |
| anything else                | an error naming the source and line number              |

Line continuations and ``\\`` escapes are not supported (no RocketMQ key needs them).
"""

from __future__ import annotations

import os
from pathlib import Path


class PropertiesError(ValueError):
    """A line that is not ``key=value``; the message names the source and the line."""


def parse_properties(
    text: str, source: str = "<config>", error: type[ValueError] = PropertiesError
) -> list[tuple[int, str, str]]:
    """Lines → ``(line_no, key, value)`` in file order; a bad line raises ``error`` (the caller's config error)."""
    out: list[tuple[int, str, str]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if cut <= 0:
            raise error(f"{source} line {no}: expected key=value, got {line!r}")
        out.append((no, line[:cut].strip(), line[cut + 1 :].strip()))
    return out


def read_properties_file(path: str | os.PathLike[str], error: type[ValueError] = PropertiesError) -> str:
    """The text of a config file; unreadable or not UTF-8 raises ``error`` with one line naming the file."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"cannot read config file {os.fspath(path)}: {reason}") from None
