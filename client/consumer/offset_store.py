"""Consumer offset stores behind one ``OffsetStore`` protocol: on the broker (clustering) or in a local file
(broadcasting).

* ``RemoteBrokerOffsetStore``: offsets live in memory and are sent to each queue's broker (UPDATE_CONSUMER_OFFSET)
  on ``persist``; the push consumer persists every 5 s (from 10 s after start), when a queue is revoked and at
  shutdown, and pulls carry the commit offset too. An update only moves an offset forward unless ``force``.
* ``LocalFileOffsetStore``: ``<dir>/<clientId>/<group>/offsets.json`` written atomically (tmp + fsync + rename),
  the previous version kept as ``offsets.json.bak`` and read when the main file is missing or torn. Format::

      {"offsetTable": {"<topic>@<brokerName>@<queueId>": offset, ...}}
"""

from __future__ import annotations

import json
import os
from typing import Protocol

from client.api import ClientAPI
from client.message import MessageQueue
from protocol.errors import RemotingError


class OffsetStore(Protocol):
    async def load(self) -> None: ...

    def update(self, mq: MessageQueue, offset: int, *, force: bool = False) -> None: ...

    def read_memory(self, mq: MessageQueue) -> int | None: ...

    async def read_store(self, mq: MessageQueue) -> int | None: ...

    async def persist(self, mqs: list[MessageQueue]) -> None: ...

    def remove(self, mq: MessageQueue) -> None: ...


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


class RemoteBrokerOffsetStore(_MemoryTable):
    def __init__(self, api: ClientAPI, group: str, find_addr: object) -> None:
        super().__init__()
        self._api = api
        self._group = group
        self._find_addr = find_addr  # async (mq) -> broker address
        self._persisted: dict[MessageQueue, int] = {}

    async def load(self) -> None:
        return None

    async def read_store(self, mq: MessageQueue) -> int | None:
        addr = await self._find_addr(mq)  # type: ignore[operator]
        off = await self._api.query_consumer_offset(addr, self._group, mq)
        if off is not None:
            self.update(mq, off, force=True)
            self._persisted[mq] = off
        return off

    async def persist(self, mqs: list[MessageQueue]) -> None:
        for mq in mqs:
            off = self.table.get(mq)
            if off is None or self._persisted.get(mq) == off:
                continue
            try:
                addr = await self._find_addr(mq)  # type: ignore[operator]
                await self._api.update_consumer_offset(addr, self._group, mq, off)
                self._persisted[mq] = off
            except (RemotingError, Exception):
                continue


def _key(mq: MessageQueue) -> str:
    return f"{mq.topic}@{mq.broker_name}@{mq.queue_id}"


def _parse_key(k: str) -> MessageQueue:
    topic, broker, qid = k.rsplit("@", 2)
    return MessageQueue(topic, broker, int(qid))


class LocalFileOffsetStore(_MemoryTable):
    def __init__(self, directory: str, client_id: str, group: str) -> None:
        super().__init__()
        safe_cid = client_id.replace("/", "_").replace(":", "_")
        self.path = os.path.join(os.path.expanduser(directory), safe_cid, group, "offsets.json")

    async def load(self) -> None:
        for path in (self.path, self.path + ".bak"):
            try:
                with open(path, encoding="utf-8") as f:
                    raw = json.load(f)
                self.table = {_parse_key(k): int(v) for k, v in raw.get("offsetTable", {}).items()}
                return
            except (OSError, ValueError, KeyError, AttributeError):
                continue

    async def read_store(self, mq: MessageQueue) -> int | None:
        return self.table.get(mq)

    async def persist(self, mqs: list[MessageQueue]) -> None:
        self.write()

    def write(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        data = json.dumps({"offsetTable": {_key(mq): off for mq, off in sorted(self.table.items())}}, indent=1)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(self.path):
            os.replace(self.path, self.path + ".bak")
        os.replace(tmp, self.path)
        dfd = os.open(os.path.dirname(self.path), os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
