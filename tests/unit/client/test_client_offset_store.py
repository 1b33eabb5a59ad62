"""Offset stores: forward-only updates, remote persistence through the API, local file atomicity and fallback."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from client.consumer.offset_store import LocalFileOffsetStore, RemoteBrokerOffsetStore
from client.message import MessageQueue
from protocol.errors import RequestTimeoutError

MQ0 = MessageQueue("T", "broker-a", 0)
MQ1 = MessageQueue("T", "broker-a", 1)


class FakeAPI:
    def __init__(self) -> None:
        self.stored: dict[MessageQueue, int] = {}
        self.updates: list[tuple[MessageQueue, int]] = []
        self.fail = False

    async def query_consumer_offset(self, addr: str, group: str, mq: MessageQueue, timeout: float = 3.0) -> int | None:
        return self.stored.get(mq)

    async def update_consumer_offset(self, addr: str, group: str, mq: MessageQueue, offset: int, **kw: Any) -> None:
        if self.fail:
            raise RequestTimeoutError("timeout")
        self.updates.append((mq, offset))
        self.stored[mq] = offset


async def find_addr(mq: MessageQueue) -> str:
    return "127.0.0.1:10911"


async def test_remote_store_updates_forward_only_and_persists_changes() -> None:
    api = FakeAPI()
    store = RemoteBrokerOffsetStore(api, "g", find_addr)  # type: ignore[arg-type]
    api.stored[MQ0] = 7
    assert await store.read_store(MQ0) == 7
    assert await store.read_store(MQ1) is None
    store.update(MQ0, 5)
    assert store.read_memory(MQ0) == 7  # never backwards
    store.update(MQ0, 5, force=True)
    assert store.read_memory(MQ0) == 5
    store.update(MQ0, 9)
    store.update(MQ1, 3)
    await store.persist([MQ0, MQ1])
    assert sorted(api.updates) == [(MQ0, 9), (MQ1, 3)]
    await store.persist([MQ0, MQ1])  # unchanged: nothing sent again
    assert len(api.updates) == 2
    api.fail = True
    store.update(MQ0, 10)
    await store.persist([MQ0])  # a failure is logged, not raised
    api.fail = False
    await store.persist([MQ0])  # and retried next round
    assert api.stored[MQ0] == 10
    store.remove(MQ0)
    assert store.read_memory(MQ0) is None


async def test_local_store_round_trip(tmp_path: Path) -> None:
    store = LocalFileOffsetStore(str(tmp_path), "10.0.0.1@DEFAULT", "g")
    store.update(MQ0, 42)
    store.update(MessageQueue("T", "hz@broker-a", 3), 5)  # a machine-room broker name survives the key format
    await store.persist([])
    again = LocalFileOffsetStore(str(tmp_path), "10.0.0.1@DEFAULT", "g")
    await again.load()
    assert again.snapshot() == {MQ0: 42, MessageQueue("T", "hz@broker-a", 3): 5}
    assert await again.read_store(MQ0) == 42
    assert Path(store.path).parent == tmp_path / "10.0.0.1@DEFAULT" / "g"


async def test_local_store_keeps_a_backup_and_survives_a_torn_file(tmp_path: Path) -> None:
    store = LocalFileOffsetStore(str(tmp_path), "cid", "g")
    store.update(MQ0, 1)
    store.write()
    store.update(MQ0, 2)
    store.write()
    assert json.loads(Path(store.path + ".bak").read_text())["offsetTable"] == {"T@broker-a@0": 1}
    assert not os.path.exists(store.path + ".tmp")
    # a crash that tore the main file: the backup (one version older) is read
    Path(store.path).write_text('{"offsetTable": {"T@broker-a@0": ')
    recovered = LocalFileOffsetStore(str(tmp_path), "cid", "g")
    await recovered.load()
    assert recovered.read_memory(MQ0) == 1
    # a crash before the rename left only a .tmp: the main file is intact and the .tmp ignored
    store.write()
    Path(store.path + ".tmp").write_text("garbage")
    fresh = LocalFileOffsetStore(str(tmp_path), "cid", "g")
    await fresh.load()
    assert fresh.read_memory(MQ0) == 2


async def test_local_store_nothing_yet(tmp_path: Path) -> None:
    store = LocalFileOffsetStore(str(tmp_path / "none"), "cid", "g")
    await store.load()
    assert store.snapshot() == {}


@pytest.mark.parametrize("offset", [-1, -5])
def test_negative_offsets_are_ignored(offset: int) -> None:
    store = LocalFileOffsetStore("/nonexistent", "cid", "g")
    store.update(MQ0, offset)
    assert store.read_memory(MQ0) is None
