"""Java-properties config files (broker.conf, namesrv.conf) on disk: read one (UTF-8, else ISO-8859-1, what
``Properties.load(InputStream)`` reads; ``\\u`` escapes work in both) and replace one atomically when a runtime
config change is written back. The text itself is ``protocol.bodies.properties_text``.
"""

from __future__ import annotations

import os
from pathlib import Path

from protocol.bodies.properties_text import PropertiesError


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
