"""The name server's KV config: namespace → key → value, persisted to ``kvConfigPath`` with crash-safe writes.

File format is J's ``KVConfigSerializeWrapper``, so a J name server's ``kvConfig.json`` loads unchanged::

    {"configTable": {"ORDER_TOPIC_CONFIG": {"TopicOrder": "broker-a:4;broker-b:4"}}}

Write protocol (``write_atomically``): write ``<path>.tmp``, fsync it, move the current file to ``<path>.bak``,
rename the temp file over ``<path>``, fsync the directory. The main file is therefore always either the old or the
new complete content; ``load`` falls back to ``.bak`` when the main file is missing or does not parse (a torn write
on a filesystem without atomic rename, or a crash between the two renames) and fails loudly when neither is usable
rather than starting with an empty table.

Mutations change memory first and then persist a snapshot in a worker thread; writes are serialised by a lock, so
the file always ends with the latest state. Everything else runs on the event loop and needs no locking.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from runtime.fsync_dir import fsync_directory

NAMESPACE_ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"

Table = dict[str, dict[str, str]]


class KvConfigError(Exception):
    """The KV file exists but neither it nor its backup can be read."""


def _parse(raw: bytes, path: Path) -> Table:
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise KvConfigError(f"{path}: not valid JSON ({exc})") from None
    table = doc.get("configTable") if isinstance(doc, dict) else None
    if table is None:
        table = {}
    if not isinstance(table, dict) or not all(
        isinstance(ns, str) and isinstance(kv, dict) and all(isinstance(k, str) for k in kv) for ns, kv in table.items()
    ):
        raise KvConfigError(f"{path}: 'configTable' is not an object of namespace -> {{key: value}}")
    return {ns: {k: v if isinstance(v, str) else json.dumps(v) for k, v in kv.items()} for ns, kv in table.items()}


def load_table(path: Path) -> Table:
    """Read ``path`` (or its ``.bak``); an absent pair means an empty table."""
    bak = path.with_name(path.name + ".bak")
    errors: list[str] = []
    for candidate in (path, bak):
        try:
            raw = candidate.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            errors.append(f"{candidate}: {exc.strerror or exc}")
            continue
        try:
            return _parse(raw, candidate)
        except KvConfigError as exc:
            errors.append(str(exc))
    if errors:
        raise KvConfigError("cannot load the KV config: " + "; ".join(errors))
    return {}


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves either the old or the new content (plus ``.bak``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    bak = path.with_name(path.name + ".bak")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    if path.exists():
        os.replace(path, bak)
    os.replace(tmp, path)
    fsync_directory(path.parent)


def encode_table(table: Table) -> bytes:
    return json.dumps({"configTable": table}, ensure_ascii=False, indent=1, sort_keys=True).encode()


class KvConfig:
    """In-memory table plus persistence. ``path=None`` keeps it in memory only (unit tests)."""

    def __init__(self, path: Path | None, table: Table | None = None) -> None:
        self._path = path
        self._table: Table = table if table is not None else {}
        self._write_lock = asyncio.Lock()

    @classmethod
    def load(cls, path: Path) -> KvConfig:
        return cls(path, load_table(path))

    @property
    def path(self) -> Path | None:
        return self._path

    def get(self, namespace: str, key: str) -> str | None:
        return self._table.get(namespace, {}).get(key)

    def namespace(self, namespace: str) -> dict[str, str] | None:
        """A copy of one namespace, or None when it was never created (J: QUERY_NOT_FOUND)."""
        kv = self._table.get(namespace)
        return dict(kv) if kv is not None else None

    async def put(self, namespace: str, key: str, value: str) -> None:
        self._table.setdefault(namespace, {})[key] = value
        await self._persist()

    async def delete(self, namespace: str, key: str) -> None:
        """Remove one key; like J, the namespace itself stays (possibly empty)."""
        kv = self._table.get(namespace)
        if kv is not None:
            kv.pop(key, None)
        await self._persist()

    async def _persist(self) -> None:
        if self._path is None:
            return
        async with self._write_lock:
            data = encode_table(self._table)  # the state at the time this writer gets its turn: the latest
            await asyncio.to_thread(write_atomically, self._path, data)
