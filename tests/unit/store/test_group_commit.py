"""SYNC_FLUSH group commit: concurrent puts share fsyncs, and every completed put is flushed."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import pytest
from _store_util import get_all, small_config

from broker.store import MessageStore
from broker.store.commitlog import CommitLog
from broker.store.flush import GroupCommit
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


class _GatedLog:
    """A real commit log whose flush, run on the group commit's thread, notes the end it will cover, says it has
    started and then waits for ``gate`` before syncing — so a test can append while a sync is in flight."""

    def __init__(self, root: Path, fail_first: bool = False) -> None:
        self.log = CommitLog(str(root), 64 * 1024)
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.calls = 0
        self.fail_next = fail_first

    def flush(self) -> int:
        self.calls += 1
        covers = self.log.max_offset
        self.entered.set()
        self.gate.wait(30)
        if self.fail_next:
            self.fail_next = False
            raise OSError(5, "injected EIO")
        self.log.flush()
        return covers

    def append(self) -> int:
        self.log.append(b"r" * 100)
        return self.log.max_offset


async def test_puts_appended_during_a_sync_are_covered_by_one_more_sync_right_after_it(tmp_path: Path) -> None:
    g = _GatedLog(tmp_path)
    gc = GroupCommit(g.flush, 30)
    gc.start()
    try:
        first = gc.request(g.append())
        assert first is not None
        assert await asyncio.to_thread(g.entered.wait, 30)  # the first sync took its end and is in flight
        g.entered.clear()
        later = [gc.request(g.append()) for _ in range(10)]
        assert all(f is not None for f in later)
        assert not first.done()
        g.gate.set()
        assert await first is True
        assert all([await f for f in later if f is not None])
        assert g.calls == 2  # one sync for the first put, one back-to-back sync for the ten appended meanwhile
        assert gc.fsyncs == 2 and gc.flushed == g.log.max_offset == g.log.flushed_offset
        assert gc.request(g.log.max_offset) is None  # already durable: nothing to wait for
    finally:
        await gc.stop()
        g.log.close()


async def test_a_failed_sync_answers_false_and_the_next_put_syncs_again(tmp_path: Path) -> None:
    g = _GatedLog(tmp_path, fail_first=True)
    g.gate.set()
    gc = GroupCommit(g.flush, 30)
    gc.start()
    try:
        assert await gc.wait_flushed(g.append()) is False
        assert g.log.flushed_offset == 0
        assert await gc.wait_flushed(g.append()) is True
        assert g.log.flushed_offset == g.log.max_offset and gc.fsyncs == 1
    finally:
        await gc.stop()
        g.log.close()


async def test_stop_lets_the_sync_in_flight_finish_and_answers_its_waiters(tmp_path: Path) -> None:
    g = _GatedLog(tmp_path)
    gc = GroupCommit(g.flush, 30)
    gc.start()
    fut = gc.request(g.append())
    assert fut is not None
    assert await asyncio.to_thread(g.entered.wait, 30)
    stopping = asyncio.ensure_future(gc.stop())
    await asyncio.sleep(0)
    assert not stopping.done() and not fut.done()  # waits for the sync in flight
    g.gate.set()
    await stopping
    assert fut.result() is True and g.log.flushed_offset == g.log.max_offset
    with pytest.raises(RuntimeError):
        gc.request(g.append())
    g.log.close()


def test_the_flush_thread_ends_when_its_loop_closed_without_a_stop(tmp_path: Path) -> None:
    g = _GatedLog(tmp_path)
    gc = GroupCommit(g.flush, 30)

    async def main() -> None:
        gc.start()
        assert gc.request(g.append()) is not None
        assert await asyncio.to_thread(g.entered.wait, 30)

    asyncio.run(main())  # the loop closes with the sync in flight and nobody stopping the group commit
    g.gate.set()
    thread = gc._thread
    assert thread is not None
    thread.join(30)
    assert not thread.is_alive()
    assert g.log.flushed_offset == g.log.max_offset  # the sync itself still completed
    g.log.close()


def _append(log: CommitLog) -> int:
    log.append(b"r" * 100)
    return log.max_offset


async def test_inline_syncs_on_the_loop_once_for_the_iteration_and_answers_its_puts(tmp_path: Path) -> None:
    log = CommitLog(str(tmp_path), 64 * 1024)
    synced_on: list[int] = []

    def flush() -> int:
        synced_on.append(threading.get_ident())
        return log.flush()

    gc = GroupCommit(flush, 30, inline=True)
    gc.start()
    try:
        futs = [gc.request(_append(log)) for _ in range(10)]  # ten puts in one loop iteration
        assert all(f is not None and not f.done() for f in futs)  # answered after the sync, not before
        assert all([await f for f in futs if f is not None])
        assert synced_on == [threading.get_ident()]  # one sync for the ten, run by the loop's own thread
        assert gc._thread is None and gc.fsyncs == 1
        assert log.flushed_offset == log.max_offset == gc.flushed
        assert await gc.wait_flushed(_append(log)) is True and gc.fsyncs == 2
    finally:
        await gc.stop()
        log.close()


async def test_inline_a_failed_sync_answers_false_and_the_next_put_syncs_again(tmp_path: Path) -> None:
    log = CommitLog(str(tmp_path), 64 * 1024)
    fail = [True]

    def flush() -> int:
        if fail[0]:
            fail[0] = False
            raise OSError(5, "injected EIO")
        return log.flush()

    gc = GroupCommit(flush, 30, inline=True)
    gc.start()
    try:
        assert await gc.wait_flushed(_append(log)) is False
        assert log.flushed_offset == 0
        assert await gc.wait_flushed(_append(log)) is True
        assert log.flushed_offset == log.max_offset
    finally:
        await gc.stop()
        log.close()


async def test_inline_stop_syncs_what_was_asked_before_it(tmp_path: Path) -> None:
    log = CommitLog(str(tmp_path), 64 * 1024)
    gc = GroupCommit(log.flush, 30, inline=True)
    gc.start()
    fut = gc.request(_append(log))
    assert fut is not None
    await gc.stop()  # before the iteration's wake ran: the stop syncs instead, and the put is answered True
    assert fut.result() is True and log.flushed_offset == log.max_offset
    with pytest.raises(RuntimeError):
        gc.request(_append(log))
    log.close()


async def test_inline_store_puts_are_durable_when_acknowledged(tmp_path: Path) -> None:
    store = MessageStore.open(small_config(tmp_path / "s", flush_disk_type="SYNC_FLUSH", group_commit_inline=True))
    await store.start()
    try:

        async def one(i: int) -> int:
            res = await store.put_message(PutRequest("G", i % 4, 0, 0, 0, ("127.0.0.1", 1), b"%d" % i, {}))
            assert res.ok, res
            it = res.items[0]
            assert store.commitlog.flushed_offset >= it.wrote_offset + it.size
            return it.wrote_offset

        assert len(set(await asyncio.gather(*(one(i) for i in range(200))))) == 200
        assert 1 <= store.runtime_info()["groupCommitFsyncs"] <= 20
    finally:
        await store.close()


async def test_inline_with_async_flush_is_named_in_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = MessageStore.open(small_config(tmp_path / "s", group_commit_inline=True))
    with caplog.at_level(logging.WARNING, logger="rocketq.store"):
        await store.start()
    try:
        assert store.sync_flush_only is None  # ASYNC_FLUSH: no group commit at all
        assert any("groupCommitInline=true has no effect" in r.getMessage() for r in caplog.records)
    finally:
        await store.close()
