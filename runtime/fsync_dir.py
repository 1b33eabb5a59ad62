"""Durable renames: fsync a directory so that a file just renamed into it survives a crash (POSIX keeps a rename
in the directory's own data, which ``fsync`` of the file does not flush)."""

from __future__ import annotations

import os


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Flush ``directory``'s entries (a rename or create in it) to disk; an ``OSError`` is the caller's."""
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
