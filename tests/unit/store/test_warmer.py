"""The segment warmer on real files: zeros never land on written bytes, a roll takes the ready-made segment, and
a SYNC_FLUSH store with it keeps every message across segments and a restart."""

from __future__ import annotations

import asyncio
import os
import random
import threading
from pathlib import Path

from _store_util import BORN, get_all, small_config

from broker.store import MessageStore, PutRequest
from broker.store.file_queue import MappedFileQueue
from broker.store.mapped_file import WriteGuard
from broker.store.warmer import SUFFIX, SegmentWarmer

SIZE = 4 << 20


def _no_holes(path: str, start: int = 0) -> bool:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, start, os.SEEK_HOLE) == os.fstat(fd).st_size
    finally:
        os.close(fd)


def test_appends_racing_the_tail_warmer_are_never_zeroed(tmp_path: Path) -> None:
    q = MappedFileQueue(str(tmp_path / "cl"), SIZE)
    mf = q.new_file(0)
    mf.guard = WriteGuard()
    rng = random.Random(7)
    written = bytearray()
    warmer = SegmentWarmer(q, margin=32 << 10, tail_chunk=8 << 10)
    done = threading.Event()

    def appender() -> None:
        while len(written) < SIZE - (64 << 10):
            data = rng.randbytes(rng.randint(1, 3000))
            mf.write(data)
            written.extend(data)
        done.set()

    t = threading.Thread(target=appender)
    t.start()
    warmer.start()
    t.join()
    assert warmer.idle_event.wait(30)
    warmer.stop()
    assert bytes(mf.buf[: len(written)]) == bytes(written)
    assert bytes(mf.buf[len(written) :]) == bytes(SIZE - len(written))
    assert warmer.tail_bytes > 0 and mf.guard is None
    assert _no_holes(mf.path, len(written) + (36 << 10))  # everything past the margin is allocated
    q.close()


def test_a_roll_takes_the_prepared_segment(tmp_path: Path) -> None:
    d = tmp_path / "cl"
    q = MappedFileQueue(str(d), SIZE)
    first = q.new_file(0)
    warmer = SegmentWarmer(q)
    warmer.start()
    assert warmer.idle_event.wait(30)
    assert os.path.exists(d / f"{SIZE:020d}{SUFFIX}")
    first.write(b"x" * SIZE)
    nxt = q.last_writable()
    assert nxt.start == SIZE and nxt.wrote == 0 and warmer.prepared == 1
    assert _no_holes(nxt.path) and nxt.guard is None
    nxt.write(b"hello")
    assert bytes(nxt.view(0, 5)) == b"hello"
    assert warmer.idle_event.wait(30)  # and the one after it is being made ready
    warmer.stop()
    assert not [n for n in os.listdir(d) if n.endswith(SUFFIX)]
    q.close()


async def test_sync_flush_store_with_the_warmer_keeps_every_message(tmp_path: Path) -> None:
    root = tmp_path / "s"
    cfg = small_config(root, flush_disk_type="SYNC_FLUSH", mapped_file_size_commit_log=256 << 10)
    store = MessageStore.open(cfg)
    await store.start()
    bodies = [b"m%04d-" % i + bytes(900) for i in range(700)]  # ~2.6 segments
    try:
        warmer = store._warmer
        assert warmer is not None
        for b in bodies[:10]:
            assert (await store.put_message(PutRequest("T", 0, 0, 0, 1, BORN, b, {}))).ok
        await asyncio.to_thread(warmer.idle_event.wait, 30)
        for b in bodies[10:]:
            assert (await store.put_message(PutRequest("T", 0, 0, 0, 1, BORN, b, {}))).ok
        assert warmer.prepared >= 1
    finally:
        await store.close()
    assert not [n for n in os.listdir(root / "commitlog") if n.endswith(SUFFIX)]
    store = MessageStore.open(cfg)
    try:
        assert [m.body for m in get_all(store, "T", 0)] == bodies
        assert not store.integrity.repairs
    finally:
        await store.close()
