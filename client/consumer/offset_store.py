"""Consumer offset stores behind one ``OffsetStore`` protocol: on the brokers (clustering) or in a local file
(broadcasting). The protocol has only load / update / read / persist / remove (no transport exceptions leak).

* ``RemoteBrokerOffsetStore``: offsets live in memory and go to each queue's broker (UPDATE_CONSUMER_OFFSET) on
  ``persist``; the push consumer persists every 5 s (from 10 s after start), when a queue is revoked and at
  shutdown, and its pulls carry the commit offset too (PULL sysFlag COMMIT_OFFSET). ``read_store`` asks the broker
  (QUERY_CONSUMER_OFFSET). A queue whose offset has not moved since the last persist is not sent again.
* ``LocalFileOffsetStore``: ``<dir>/<clientId>/<group>/offsets.json``, written atomically (tmp + fsync + rename +
  directory fsync); the previous version is kept as ``offsets.json.bak`` and read when the main file is unreadable. Format (our own, plain JSON)::

      {"offsetTable": {"<topic>@<brokerName>@<queueId>": offset, ...}}

In both, ``update`` only moves an offset forward unless ``force`` (a reset, or a corrected illegal offset).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Awaitable, Callable
from typing import Protocol

from client._log import get_logger
from client.api import ClientAPI
from client.message import MessageQueue
from runtime.fsync_dir import fsync_directory

_log = get_logger("rocketq.client.offsets")


class OffsetStore(Protocol):
    async def load(self) -> None:
        """Read what was persisted before (local store); nothing for the remote one."""

    def update(self, mq: MessageQueue, offset: int, *, force: bool = False) -> None:
        """Remember ``offset`` as the next to consume; only forward unless ``force``."""

    def read_memory(self, mq: MessageQueue) -> int | None: ...

    async def read_store(self, mq: MessageQueue) -> int | None:
        """The persisted offset (and remember it); None when there is none."""

    async def persist(self, mqs: list[MessageQueue]) -> None:
        """Persist the offsets of ``mqs``; failures are logged, not raised (the next round retries)."""

    def remove(self, mq: MessageQueue) -> None: ...

    def snapshot(self) -> dict[MessageQueue, int]: ...


class _MemoryTable:
    def __init__(self) -> None:
        self.table: dict[MessageQueue, int] = {}

    def update(self, mq: MessageQueue, offset: int, *, force: bool = False) -> None:
        if offset < 0:
            return
        old = self.table.get(mq)
        if force or old is None or offset > old:
            self.table[mq] = offset

    def read_memory(self, mq: MessageQueue) -> int | None:
        return self.table.get(mq)

    def remove(self, mq: MessageQueue) -> None:
        self.table.pop(mq, None)

    def snapshot(self) -> dict[MessageQueue, int]:
        return dict(self.table)


FindAddr = Callable[[MessageQueue], Awaitable[str]]


class RemoteBrokerOffsetStore(_MemoryTable):
    def __init__(self, api: ClientAPI, group: str, find_addr: FindAddr, timeout: float = 3.0) -> None:
        super().__init__()
        self._api = api
        self._group = group
        self._find_addr = find_addr
        self._timeout = timeout
        self._persisted: dict[MessageQueue, int] = {}

    async def load(self) -> None:
        return None

    async def read_store(self, mq: MessageQueue) -> int | None:
        addr = await self._find_addr(mq)
        off = await self._api.query_consumer_offset(addr, self._group, mq, self._timeout)
        if off is not None:
            self.update(mq, off, force=True)
            self._persisted[mq] = off
        return off

    def remove(self, mq: MessageQueue) -> None:
        super().remove(mq)
        self._persisted.pop(mq, None)

    async def _persist_one(self, mq: MessageQueue, off: int) -> None:
        try:
            addr = await self._find_addr(mq)
            await self._api.update_consumer_offset(addr, self._group, mq, off, timeout=self._timeout)
        except Exception as exc:
            _log.warning("offset persist failed", group=self._group, mq=str(mq), offset=off, error=str(exc))
            return
        self._persisted[mq] = off

    async def persist(self, mqs: list[MessageQueue]) -> None:
        todo = [(mq, off) for mq in mqs if (off := self.table.get(mq)) is not None and self._persisted.get(mq) != off]
        if todo:
            await asyncio.gather(*(self._persist_one(mq, off) for mq, off in todo))


def _key(mq: MessageQueue) -> str:
    return f"{mq.topic}@{mq.broker_name}@{mq.queue_id}"


def _parse_key(k: str) -> MessageQueue:
    # topics cannot hold '@'; broker names can ("room@broker" for by-machine-room allocation)
    topic, rest = k.split("@", 1)
    broker, qid = rest.rsplit("@", 1)
    return MessageQueue(topic, broker, int(qid))


def _safe(part: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.@#%" else "_" for c in part)


class LocalFileOffsetStore(_MemoryTable):
    def __init__(self, directory: str, client_id: str, group: str) -> None:
        super().__init__()
        self.path = os.path.join(os.path.expanduser(directory), _safe(client_id), _safe(group), "offsets.json")

    async def load(self) -> None:
        for path in (self.path, self.path + ".bak"):
            try:
                with open(path, encoding="utf-8") as f:
                    raw = json.load(f)
                self.table = {_parse_key(k): int(v) for k, v in raw["offsetTable"].items()}
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                _log.warning("offset file unreadable, trying the backup", path=path, error=str(exc))
                continue
            return

    async def read_store(self, mq: MessageQueue) -> int | None:
        return self.table.get(mq)

    async def persist(self, mqs: list[MessageQueue]) -> None:
        try:
            self.write()
        except OSError as exc:
            _log.warning("offset file write failed", path=self.path, error=str(exc))

    def write(self) -> None:
        """Atomic replace: write ``.tmp`` and fsync, hard-link the current file as ``.bak``, rename ``.tmp`` over
        it, fsync the directory. The main file never goes missing; a torn ``.tmp`` is never read."""
        directory = os.path.dirname(self.path)
        os.makedirs(directory, exist_ok=True)
        data = json.dumps({"offsetTable": {_key(mq): off for mq, off in sorted(self.table.items())}}, indent=1)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(self.path):
            bak = self.path + ".bak"
            try:
                os.unlink(bak)
            except FileNotFoundError:
                pass
            try:
                os.link(self.path, bak)
            except OSError:  # no hard links here
                shutil.copyfile(self.path, bak)
        os.replace(tmp, self.path)
        fsync_directory(directory)
