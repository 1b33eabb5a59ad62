"""SYNC_FLUSH group commit: concurrent puts share fsyncs, and every completed put is flushed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from _store_util import get_all, small_config

from broker.store import MessageStore
from broker.store.request import PutRequest


async def test_concurrent_sync_puts_share_fsyncs(tmp_path: Path) -> None:
    store = MessageStore.open(small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH"))
    await store.start()
    try:
        n = 400

        async def one(i: int):
            res = await store.put_message(PutRequest("G", i % 4, 0, 0, 0, ("127.0.0.1", 1), b"%d" % i, {}))
            assert res.ok, res
            # acknowledged ⇒ the commit log is flushed at least up to this record's end
            it = res.items[0]
            assert store.commitlog.flushed_offset >= it.wrote_offset + it.size
            return it

        items = await asyncio.gather(*(one(i) for i in range(n)))
        fsyncs = store.runtime_info()["groupCommitFsyncs"]
        assert 1 <= fsyncs <= n // 10, fsyncs
        assert len({it.wrote_offset for it in items}) == n
        assert sum(len(get_all(store, "G", q)) for q in range(4)) == n
        # a single put afterwards costs exactly one more fsync
        res = await store.put_message(PutRequest("G", 0, 0, 0, 0, ("127.0.0.1", 1), b"solo", {}))
        assert res.ok and store.runtime_info()["groupCommitFsyncs"] == fsyncs + 1
    finally:
        await store.close()


async def test_async_flush_put_does_not_wait(tmp_path: Path) -> None:
    store = MessageStore.open(small_config(tmp_path / "s"))
    await store.start()
    try:
        res = await store.put_message(PutRequest("G", 0, 0, 0, 0, ("127.0.0.1", 1), b"x", {}))
        assert res.ok and store.runtime_info()["groupCommitFsyncs"] == 0
    finally:
        await store.close()
