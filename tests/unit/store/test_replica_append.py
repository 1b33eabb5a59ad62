"""The store's replica API: raw commit-log bytes copied in chunks cut anywhere (mid-record, at BLANK file ends)
rebuild the same log, consume queues, queue offsets and index on the replica; bad placements are refused."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from _store_util import get_all, put, small_config

from broker.store import MessageStore, PutMessageStatus
from broker.store.request import PutRequest


def _copy(src: MessageStore, dst: MessageStore, rng: random.Random, start: int = 0) -> None:
    off = start
    end = src.commitlog.max_offset
    while off < end:
        chunk = src.read_replication_chunk(off, rng.randint(1, 5000))
        assert chunk
        dst.append_replicated(off, chunk)
        off += len(chunk)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_chunks_cut_anywhere_rebuild_the_same_store(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    src = MessageStore.open(small_config(tmp_path / "src"))
    dst = MessageStore.open(small_config(tmp_path / "dst"))
    await src.start()
    await dst.start()
    try:
        for i in range(600):  # 64 KiB files: several BLANK-padded file ends
            body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 700)))
            await put(src, "T", i % 3, body, {"KEYS": f"k{i}", "TAGS": "a" if i % 2 else "b"})
        assert len(src.commitlog.queue.files) > 3
        _copy(src, dst, rng)
        end = src.commitlog.max_offset
        assert dst.commitlog.max_offset == end and dst.replica_dispatched_offset == end
        for f_src, f_dst in zip(src.commitlog.queue.files, dst.commitlog.queue.files, strict=True):
            assert bytes(f_src.buf[: f_src.wrote]) == bytes(f_dst.buf[: f_dst.wrote])
        for qid in range(3):
            assert [(m.queue_offset, m.body) for m in get_all(dst, "T", qid)] == [
                (m.queue_offset, m.body) for m in get_all(src, "T", qid)
            ]
            assert dst.get_max_offset_in_queue("T", qid) == src.get_max_offset_in_queue("T", qid)
        [raw] = dst.query_message("T", "k77", 4, 0, 2**62)
        assert raw == src.query_message("T", "k77", 4, 0, 2**62)[0]
        # a replica that took the log over could take puts after it: queue offsets continue
        dst.refuse_puts(None)
        it = await put(dst, "T", 0, b"after")
        assert it.queue_offset == src.get_max_offset_in_queue("T", 0)
    finally:
        await src.close()
        await dst.close()


async def test_misplaced_bytes_and_refused_puts(tmp_path: Path) -> None:
    src = MessageStore.open(small_config(tmp_path / "src"))
    dst = MessageStore.open(small_config(tmp_path / "dst"))
    await src.start()
    await dst.start()
    try:
        await put(src, "T", 0, b"x" * 100)
        chunk = src.read_replication_chunk(0, 1 << 20)
        assert chunk
        with pytest.raises(ValueError, match="file boundary"):
            dst.append_replicated(10, chunk)
        dst.append_replicated(0, chunk[:50])
        with pytest.raises(ValueError, match="ends at 50"):
            dst.append_replicated(60, chunk[60:])
        dst.append_replicated(50, chunk[50:])
        assert [m.body for m in get_all(dst, "T", 0)] == [b"x" * 100]
        dst.refuse_puts("messages are put to the slave")
        res = await dst.put_message(PutRequest("T", 0, 0, 0, 0, ("127.0.0.1", 1), b"y", {}))
        assert res.status is PutMessageStatus.SERVICE_NOT_AVAILABLE and "slave" in res.remark
    finally:
        await src.close()
        await dst.close()
