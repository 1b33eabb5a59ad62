"""``MessageStore.truncate_to``: a replica following a new master cuts the tail its master never had, at run time —
commit log, consume queues and index go back to the cut, the next put lands there with the next queue offsets, and
a restart keeps the cut (the checkpoint moved back too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.store import MessageStore, PutMessageStatus, StoreConfig
from broker.store.request import PutRequest


def _cfg(tmp_path: Path) -> StoreConfig:
    return StoreConfig(
        store_path_root_dir=str(tmp_path / "s"),
        mapped_file_size_commit_log=64 * 1024,
        mapped_file_size_consume_queue=1000 * 20,
        store_host=("127.0.0.1", 10911),
    )


async def _put(store: MessageStore, qid: int, body: bytes) -> tuple[int, int]:
    res = await store.put_message(PutRequest("T", qid, 0, 0, 0, ("127.0.0.1", 1), body, {"KEYS": body.decode()}))
    assert res.status is PutMessageStatus.PUT_OK
    return res.items[0].wrote_offset, res.items[0].queue_offset


def _bodies(store: MessageStore, qid: int) -> list[bytes]:
    out = []
    for qoff in range(store.get_min_offset_in_queue("T", qid), store.get_max_offset_in_queue("T", qid)):
        phys = store.queue_unit_position("T", qid, qoff)
        assert phys is not None
        msg = store.look_message_by_offset(phys)
        assert msg is not None
        out.append(msg.body)
    return out


async def test_cut_tail_goes_everywhere_and_stays_cut(tmp_path: Path) -> None:
    store = MessageStore.open(_cfg(tmp_path))
    await store.start()
    try:
        for i in range(400):  # several commit-log files
            await _put(store, i % 2, b"keep-%d" % i)
        cut = store.commitlog.max_offset
        for i in range(300):
            await _put(store, i % 2, b"drop-%d" % i)
        files_before = len(store.commitlog.queue.files)
        assert store.truncate_to(cut) > 0
        assert store.commitlog.max_offset == cut
        assert len(store.commitlog.queue.files) < files_before
        assert store.get_max_offset_in_queue("T", 0) == 200 and store.get_max_offset_in_queue("T", 1) == 200
        assert not [b for b in _bodies(store, 0) + _bodies(store, 1) if b.startswith(b"drop")]
        assert store.query_message("T", "drop-1", 10, 0, 2**62) == []
        assert store.query_message("T", "keep-1", 10, 0, 2**62)
        phys, qoff = await _put(store, 0, b"after")
        assert (phys, qoff) == (cut, 200)
        assert store.truncate_to(cut + 10**9) == 0  # beyond the end: nothing
        with pytest.raises(ValueError):
            store.truncate_to(-1)
    finally:
        await store.close()
    again = MessageStore.open(_cfg(tmp_path))
    await again.start()
    try:
        assert _bodies(again, 0)[-1] == b"after" and len(_bodies(again, 0)) == 201
        assert not [b for b in _bodies(again, 1) if b.startswith(b"drop")]
    finally:
        await again.close()


async def test_cut_forgets_what_the_confirm_gate_held_back(tmp_path: Path) -> None:
    """A deposed master's unconfirmed tail, never dispatched (the gate), is cut: lifting the gate afterwards must not
    dispatch it (its consume-queue units would point at whatever is replicated there next)."""
    store = MessageStore.open(_cfg(tmp_path))
    await store.start()
    try:
        await _put(store, 0, b"confirmed")
        cut = store.commitlog.max_offset
        store.dispatcher.confirmed = lambda: cut
        await _put(store, 0, b"unconfirmed")
        assert store.dispatcher.pending and _bodies(store, 0) == [b"confirmed"]
        assert store.truncate_to(cut) > 0
        store.dispatcher.confirmed = None
        store.dispatcher.drain()
        assert not store.dispatcher.pending
        assert _bodies(store, 0) == [b"confirmed"]
        assert await _put(store, 0, b"after") == (cut, 1)
        assert _bodies(store, 0) == [b"confirmed", b"after"]
    finally:
        await store.close()
