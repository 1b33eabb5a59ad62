"""Recovery at open: torn tails are cut and never served, consume queues ahead of the commit log are truncated,
clean restarts keep everything, and offsets continue after recovery."""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

import pytest
from _store_util import BORN, get_all, put, small_config

from broker.store import MessageStore
from protocol.record import encode_record

T = "TopicRec"
FILE = 4096


def _cfg(root: Path, **kw):
    kw.setdefault("mapped_file_size_commit_log", FILE)
    return small_config(root, **kw)


async def _fill(store: MessageStore, n: int, rnd: random.Random) -> dict[int, list[bytes]]:
    model: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    for i in range(n):
        qid = rnd.randrange(3)
        body = rnd.randbytes(rnd.randrange(0, 700))
        await put(store, T, qid, body, {"TAGS": f"t{i % 3}", "KEYS": f"key{i}"})
        model[qid].append(body)
    return model


def _check(store: MessageStore, model: dict[int, list[bytes]]) -> None:
    for qid, bodies in model.items():
        assert store.get_max_offset_in_queue(T, qid) == len(bodies)
        assert [m.body for m in get_all(store, T, qid)] == bodies


def _write_at(root: Path, phys: int, data: bytes, file_size: int = FILE) -> None:
    """Write raw bytes into the commit log at global offset ``phys`` (within one file)."""
    start = phys - phys % file_size
    path = root / "commitlog" / f"{start:020d}"
    assert phys % file_size + len(data) <= file_size
    with open(path, "r+b") as f:
        f.seek(phys % file_size)
        f.write(data)


def _torn_bytes(rnd: random.Random, room: int) -> bytes:
    """A torn tail of random length and kind: garbage, a prefix of a real record, or a record with a bad CRC."""
    kind = rnd.choice(["garbage", "prefix", "badcrc", "size-only"])
    rec = bytes(encode_record(topic=T, body=rnd.randbytes(rnd.randrange(1, 300)), properties={"TAGS": "x"}))
    if kind == "garbage":
        data = rnd.randbytes(rnd.randrange(1, 600))
    elif kind == "prefix":
        data = rec[: rnd.randrange(1, len(rec))]
    elif kind == "badcrc":
        b = bytearray(rec)
        b[91 + 2] ^= 0x55  # first body byte: the CRC no longer matches
        data = bytes(b)
    else:
        data = struct.pack(">i", len(rec))
    return data[: max(1, room)]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("clean_marker", [False, True], ids=["unclean", "clean-marker"])
async def test_torn_tail_truncated(tmp_path: Path, seed: int, clean_marker: bool) -> None:
    rnd = random.Random(seed)
    root = tmp_path / "s"
    store = MessageStore.open(_cfg(root))
    model = await _fill(store, rnd.randrange(5, 60), rnd)
    end = store.get_commit_log_max_offset()
    await store.close()

    room = FILE - end % FILE
    if room < 8:
        pytest.skip("the tail file is full")
    _write_at(root, end, _torn_bytes(rnd, room))
    if not clean_marker:
        (root / "abort").write_bytes(b"")  # the previous run died
    store = MessageStore.open(_cfg(root))
    try:
        assert store.last_exit_ok is clean_marker
        assert store.get_commit_log_max_offset() == end
        _check(store, model)
        # the tail bytes are zeroed: nothing past the end can be read back
        tail = bytes(store.commitlog.queue.files[-1].buffer()[end % FILE :])
        assert tail == bytes(len(tail))
        assert store.select_one_message_by_offset(end) is None
        # offsets continue where the valid data ended
        for qid in (0, 1, 2):
            r = await put(store, T, qid, b"after-%d" % qid)
            assert r.queue_offset == len(model[qid])
            model[qid].append(b"after-%d" % qid)
        assert (await put(store, T, 0, b"x")).wrote_offset >= end
        model[0].append(b"x")
    finally:
        await store.close()
    # and survive another (unclean) restart
    (root / "abort").write_bytes(b"")
    store = MessageStore.open(_cfg(root))
    try:
        _check(store, model)
        assert store.query_message(T, "key0", 5, 0, 2**62)
    finally:
        await store.close()


async def test_garbage_in_a_later_file_is_removed(tmp_path: Path) -> None:
    """A stray file after the last valid record (e.g. a roll that was never written) is removed."""
    root = tmp_path / "s"
    store = MessageStore.open(_cfg(root))
    model = await _fill(store, 20, random.Random(1))
    end = store.get_commit_log_max_offset()
    await store.close()
    nxt = end - end % FILE + FILE
    with open(root / "commitlog" / f"{nxt:020d}", "wb") as f:
        f.write(b"\x01\x02garbage" + bytes(FILE - 9))
    (root / "abort").write_bytes(b"")
    store = MessageStore.open(_cfg(root))
    try:
        _check(store, model)
        assert store.get_commit_log_max_offset() == end
        assert not (root / "commitlog" / f"{nxt:020d}").exists()
    finally:
        await store.close()


async def test_consume_queue_ahead_of_commit_log_is_truncated(tmp_path: Path) -> None:
    """The commit log lost its last records (zeroed) while the consume queues still hold their units."""
    root = tmp_path / "s"
    store = MessageStore.open(_cfg(root, mapped_file_size_commit_log=64 * 1024))
    offs = [await put(store, T, 0, b"m%d" % i, {"KEYS": f"k{i}"}) for i in range(10)]
    await store.close()
    cut = offs[7].wrote_offset
    end = offs[-1].wrote_offset + offs[-1].size
    _write_at(root, cut, bytes(end - cut), 64 * 1024)
    (root / "abort").write_bytes(b"")
    store = MessageStore.open(_cfg(root, mapped_file_size_commit_log=64 * 1024))
    try:
        assert store.get_commit_log_max_offset() == cut
        assert store.get_max_offset_in_queue(T, 0) == 7
        assert [m.body for m in get_all(store, T, 0)] == [b"m%d" % i for i in range(7)]
        # the index no longer answers for the removed messages
        assert store.query_message(T, "k8", 5, 0, 2**62) == []
        assert len(store.query_message(T, "k6", 5, 0, 2**62)) == 1
        assert (await put(store, T, 0, b"new")).queue_offset == 7
        assert [m.body for m in get_all(store, T, 0)][-1] == b"new"
    finally:
        await store.close()


async def test_consume_queue_with_units_past_the_end_is_truncated(tmp_path: Path) -> None:
    """Units written to a consume queue that point beyond the commit log's end are dropped at recovery."""
    root = tmp_path / "s"
    cfg = _cfg(root, mapped_file_size_commit_log=64 * 1024)
    store = MessageStore.open(cfg)
    for i in range(5):
        await put(store, T, 0, b"m%d" % i)
    end = store.get_commit_log_max_offset()
    await store.close()
    cq_file = root / "consumequeue" / T / "0" / f"{0:020d}"
    with open(cq_file, "r+b") as f:
        f.seek(5 * 20)
        f.write(struct.pack(">qiq", end, 120, 0) + struct.pack(">qiq", end + 120, 120, 0))
    (root / "abort").write_bytes(b"")
    store = MessageStore.open(cfg)
    try:
        assert store.get_max_offset_in_queue(T, 0) == 5
        assert [m.body for m in get_all(store, T, 0)] == [b"m%d" % i for i in range(5)]
    finally:
        await store.close()


async def test_consume_queue_rebuilt_when_missing(tmp_path: Path) -> None:
    """Consume queues lost entirely (never flushed) are rebuilt from the commit log on an unclean start."""
    import shutil

    root = tmp_path / "s"
    cfg = _cfg(root)
    store = MessageStore.open(cfg)
    model = await _fill(store, 40, random.Random(7))
    await store.close()
    shutil.rmtree(root / "consumequeue")
    os.unlink(root / "checkpoint")
    (root / "abort").write_bytes(b"")
    store = MessageStore.open(cfg)
    try:
        _check(store, model)
    finally:
        await store.close()


async def test_clean_restart_keeps_everything(tmp_path: Path) -> None:
    root = tmp_path / "s"
    cfg = _cfg(root)
    rnd = random.Random(3)
    store = MessageStore.open(cfg)
    model = await _fill(store, 80, rnd)
    ids = {}
    for i in range(3):
        r = await put(store, "Other", 0, b"o%d" % i, {"UNIQ_KEY": f"U{i}"})
        ids[i] = r
    await store.close()
    assert not (root / "abort").exists()
    for _ in range(2):
        store = MessageStore.open(cfg)
        try:
            assert store.last_exit_ok
            _check(store, model)
            assert [m.body for m in get_all(store, "Other", 0)] == [b"o0", b"o1", b"o2"]
            m = store.look_message_by_offset(ids[1].wrote_offset)
            assert m is not None and m.body == b"o1" and m.offset_msg_id == ids[1].msg_id
            assert m.born_host == BORN and m.store_host == cfg.store_host
            assert len(store.query_message("Other", "U2", 5, 0, 2**62)) == 1
        finally:
            await store.close()
    # new puts continue and survive
    store = MessageStore.open(cfg)
    try:
        r = await put(store, T, 1, b"later")
        assert r.queue_offset == len(model[1])
        model[1].append(b"later")
    finally:
        await store.close()
    store = MessageStore.open(cfg)
    try:
        _check(store, model)
    finally:
        await store.close()


async def test_second_open_is_refused_while_locked(tmp_path: Path) -> None:
    from broker.store.errors import StoreLockedError

    cfg = _cfg(tmp_path / "s")
    store = MessageStore.open(cfg)
    try:
        with pytest.raises(StoreLockedError):
            MessageStore.open(cfg)
    finally:
        await store.close()
    MessageStore.open(cfg).close_sync()
