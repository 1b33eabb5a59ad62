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
import time
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


# The debounce window of the topic and subscription-group tables (issue #21): a burst of creations shares a write.
TABLE_DEBOUNCE_S = 0.1


class TableWriter:
    """Coalesces "this table changed" into background writes of one ``JsonFile``.

    ``mark_dirty()`` schedules a write soon; ``flush()`` waits for it, or writes now if still dirty (shutdown and
    periodic persistence call it). ``save_now()`` writes synchronously, for code that runs without a loop.

    How soon (the debounce window, issue #21): with ``debounce=0`` (the default) the write follows in the next loop
    turn, so only changes made in one turn share a write. With ``debounce > 0`` the write waits that many seconds
    after the first change, and at least ``cost_factor`` times as long as the last snapshot took on the loop, so a
    burst of N changes gives a bounded number of writes and re-encoding a large table costs at most about
    ``1 / cost_factor`` of the loop however fast changes come (a table of 10k topics no longer makes each creation
    re-encode 10k topics). A change is on disk within the window, or on ``flush()`` — ``stop()`` paths call it, so a
    clean shutdown loses nothing.
    """

    def __init__(
        self, file: JsonFile, snapshot: Callable[[], bytes], *, debounce: float = 0.0, cost_factor: float = 20.0
    ) -> None:
        self._file = file
        self._snapshot = snapshot
        self._debounce = debounce
        self._cost_factor = cost_factor
        self._last_snapshot_s = 0.0
        self._dirty = False
        self._task: asyncio.Task[None] | None = None
        self._waiting = False  # the scheduled write is still in its window (safe to cancel)
        self._flush_lock = asyncio.Lock()
        self.writes = 0  # completed writes, for tests and stats

    @property
    def dirty(self) -> bool:
        return self._dirty

    def window(self) -> float:
        """Seconds a change waits before the background write (0 = the next loop turn)."""
        if self._debounce <= 0:
            return 0.0
        return max(self._debounce, self._cost_factor * self._last_snapshot_s)

    def mark_dirty_later(self) -> None:
        """Changed, but leave the write to the next ``flush()`` (periodic persistence)."""
        self._dirty = True

    def mark_dirty(self) -> None:
        self._dirty = True
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._task = loop.create_task(self._write_soon())

    async def _write_soon(self) -> None:
        while True:
            self._waiting = True
            try:
                await asyncio.sleep(self.window())
            finally:
                self._waiting = False
            async with self._flush_lock:
                if self._dirty and not await self._write():
                    return
            if not self._dirty:  # else changes made during the write wait a window of their own
                return

    def _timed_snapshot(self) -> bytes:
        t0 = time.perf_counter()
        data = self._snapshot()
        self._last_snapshot_s = time.perf_counter() - t0
        return data

    async def _write(self) -> bool:
        """One write of the current table (the caller holds ``_flush_lock``); False if it failed."""
        self._dirty = False
        try:
            await self._file.save_async(self._timed_snapshot)
        except OSError as exc:
            self._dirty = True
            _log.error("config persist failed", path=str(self._file.path), error=str(exc))
            return False
        self.writes += 1
        return True

    async def flush(self) -> None:
        """Write if dirty; returns only once every change made before the call is on disk (it waits for a write
        already in progress, so a shutdown flush never returns while a background write is half done)."""
        task = self._task
        if task is not None and self._waiting and task is not asyncio.current_task():
            task.cancel()  # still in its window: this flush writes instead
            self._task = None
        async with self._flush_lock:
            while self._dirty:
                if not await self._write():
                    return

    def save_now(self) -> None:
        self._dirty = False
        self._file.save(self._snapshot())
        self.writes += 1


def dumps(obj: Any, *, pretty: bool = True) -> bytes:
    """Pretty JSON as J's ``toJson(prettyFormat=true)`` writes these files, or compact (``pretty=False``) as J's
    ``encode()`` sends the same tables on the wire; keys keep insertion order."""
    if pretty:
        return json.dumps(obj, indent=1, ensure_ascii=False).encode("utf-8")
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
