"""JsonFile: crash-safe persistence of the broker's small config tables (topics, groups, offsets, delay offsets).

Write protocol (docs/reference/reliability.md §1.3, "atomic persistence"): the new content goes to ``<file>.tmp`` and is fsynced;
the current file (if any) is renamed to ``<file>.bak``; ``.tmp`` is renamed over ``<file>``; the directory is
fsynced. A crash at any point leaves either the new file, or the previous version as ``.bak`` (never a torn file),
so a restart rewinds by at most one write. ``load`` reads ``<file>`` and falls back to ``<file>.bak`` when the
file is missing or does not parse, as J's ``ConfigManager.load`` does.

The formats of the files themselves are documented in the services that own them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

_log = structlog.get_logger("rocketq.broker.persistence")

# fastjson writes integer map keys unquoted ({0:12}); accept that form when loading files written by J.
_UNQUOTED_INT_KEY = re.compile(r"([{,])\s*(-?\d+)\s*:")


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(_UNQUOTED_INT_KEY.sub(r'\1"\2":', text))


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class JsonFile:
    """One JSON document on disk with atomic replace and a ``.bak`` fallback."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.bak = self.path.with_name(self.path.name + ".bak")
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self._lock = asyncio.Lock()

    def load(self) -> Any | None:
        """The parsed document, from the file or else its ``.bak``; None when neither exists or parses."""
        for candidate in (self.path, self.bak):
            try:
                text = candidate.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError) as exc:
                _log.warning("config file unreadable", path=str(candidate), error=str(exc))
                continue
            if not text.strip():
                continue
            try:
                return _parse(text)
            except (json.JSONDecodeError, ValueError) as exc:
                _log.warning("config file does not parse, trying backup", path=str(candidate), error=str(exc))
        return None

    def save(self, data: bytes) -> None:
        """Replace the file with ``data`` atomically (blocking; call through ``save_async`` from the loop)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if self.path.exists():
            os.replace(self.path, self.bak)
        os.replace(self.tmp, self.path)
        _fsync_dir(self.path.parent)

    async def save_async(self, snapshot: Callable[[], bytes]) -> None:
        """Take ``snapshot()`` on the loop (so the table cannot change under it), write it in a worker thread.

        Writes to one file are serialised, so a slow earlier write never lands after a later one.
        """
        async with self._lock:
            data = snapshot()
            await asyncio.to_thread(self.save, data)


class TableWriter:
    """Coalesces "this table changed" into background writes of one ``JsonFile``.

    ``mark_dirty()`` schedules a write soon (several changes in one loop turn give one write); ``flush()`` waits for
    it, or writes now if still dirty (shutdown and periodic persistence call it). ``save_now()`` writes
    synchronously, for code that runs without a loop.
    """

    def __init__(self, file: JsonFile, snapshot: Callable[[], bytes]) -> None:
        self._file = file
        self._snapshot = snapshot
        self._dirty = False
        self._task: asyncio.Task[None] | None = None
        self._flush_lock = asyncio.Lock()

    @property
    def dirty(self) -> bool:
        return self._dirty

    def mark_dirty_later(self) -> None:
        """Changed, but leave the write to the next ``flush()`` (periodic persistence)."""
        self._dirty = True

    def mark_dirty(self) -> None:
        self._dirty = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._write_soon())

    async def _write_soon(self) -> None:
        await asyncio.sleep(0)
        await self.flush()

    async def flush(self) -> None:
        """Write if dirty; returns only once every change made before the call is on disk (it waits for a write
        already in progress, so a shutdown flush never returns while a background write is half done)."""
        async with self._flush_lock:
            while self._dirty:
                self._dirty = False
                try:
                    await self._file.save_async(self._snapshot)
                except OSError as exc:
                    self._dirty = True
                    _log.error("config persist failed", path=str(self._file.path), error=str(exc))
                    return

    def save_now(self) -> None:
        self._dirty = False
        self._file.save(self._snapshot())


def dumps(obj: Any, *, pretty: bool = True) -> bytes:
    """Pretty JSON as J's ``toJson(prettyFormat=true)`` writes these files, or compact (``pretty=False``) as J's
    ``encode()`` sends the same tables on the wire; keys keep insertion order."""
    if pretty:
        return json.dumps(obj, indent=1, ensure_ascii=False).encode("utf-8")
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
