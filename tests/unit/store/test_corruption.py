"""The corruption matrix on real files: damage anywhere costs only the damaged records.

Each case writes a store, stops it (cleanly, or as a SIGKILL leaves it: abort marker present, checkpoint behind the
end, everything written still in the files), damages the files, reopens, and checks that the store opens, serves
every undamaged message (counted), never serves the damaged one, and says what it did (integrity report + log).
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from _store_util import BORN, small_config

from broker.store import AppendResult, GetMessageStatus, MessageStore
from broker.store.record_check import is_sealed, verify
from broker.store.request import GetRequest, PutRequest
from protocol.message_ext import MessageExt
from protocol.record import RecordError, RecordMessage, RecordPlace, body_bounds, encode_message, encode_record
from tests.eventually import eventually

T = "TopicCorrupt"
FILE = 4096
N = 60


@dataclass
class Written:
    qid: int
    qoff: int
    body: bytes
    at: AppendResult


def _cfg(root: Path):
    return small_config(root, mapped_file_size_commit_log=FILE)


async def _write(root: Path, *, crash: bool) -> list[Written]:
    """N messages over two queues (several 4 KiB segments). ``crash``: the checkpoint is written half-way, then
    the store dies without closing (the page cache keeps every write, as after kill -9)."""
    store = MessageStore.open(_cfg(root))
    out: list[Written] = []
    for i in range(N):
        qid = i % 2
        body = b"body-%03d-" % i + bytes([65 + i % 26]) * 150
        res = await store.put_message(PutRequest(T, qid, 0, 0, 1, BORN, body, {"TAGS": "tagA", "KEYS": f"k{i}"}))
        assert res.ok
        out.append(Written(qid, i // 2, body, res.items[0]))
        if crash and i == N // 2:
            store.dispatcher.drain()
            store.commitlog.flush()
            store._flush_logics()  # the checkpoint a crash leaves behind: half-way
            assert 0 < store._checkpoint.dispatched_offset < FILE * 4
    if crash:
        store.dispatcher.drain()
        store._release()  # no final flush, no checkpoint, abort marker stays
        assert (root / "abort").exists()
    else:
        await store.close()
    return out


def _served(store: MessageStore) -> dict[int, list[MessageExt]]:
    """Every message a consumer gets by pulling each queue from 0 to its max offset."""
    out: dict[int, list[MessageExt]] = {}
    for qid in (0, 1):
        got: list[MessageExt] = []
        off = 0
        for _ in range(1000):
            r = store.get_message_sync(GetRequest("g", T, qid, off, 32))
            if r.status in (GetMessageStatus.OFFSET_OVERFLOW_ONE, GetMessageStatus.NO_MATCHED_LOGIC_QUEUE):
                break
            assert r.next_begin_offset > off, r
            got.extend(r.messages())
            off = r.next_begin_offset
        out[qid] = got
    return out


def _damage(root: Path, phys: int, rel: int, data: bytes) -> None:
    start = phys - phys % FILE
    with open(root / "commitlog" / f"{start:020d}", "r+b") as f:
        f.seek(phys % FILE + rel)
        f.write(data)


def _record(root: Path, w: Written) -> bytes:
    start = w.at.wrote_offset - w.at.wrote_offset % FILE
    with open(root / "commitlog" / f"{start:020d}", "rb") as f:
        f.seek(w.at.wrote_offset % FILE)
        return f.read(w.at.size)


def _victim(written: list[Written], where: str) -> Written:
    """A record in the middle of the active (last) segment, or of an older one."""
    last_file = max(w.at.wrote_offset // FILE for w in written)
    seg = last_file if where == "active" else 1
    inside = [w for w in written if w.at.wrote_offset // FILE == seg]
    assert len(inside) >= 3
    return inside[len(inside) // 2]


def _body_flip(rec: bytes) -> tuple[int, bytes]:
    start, _ = body_bounds(rec, 0)
    return start + 20, bytes([rec[start + 20] ^ 0xFF, rec[start + 21] ^ 0x55])


def _props_valid(rec: bytes) -> tuple[int, bytes]:
    return rec.index(b"tagA"), b"evil"


def _props_invalid(rec: bytes) -> tuple[int, bytes]:
    return rec.index(b"tagA"), b"\xff\xfeAB"


def _size_flip(rec: bytes) -> tuple[int, bytes]:
    (size,) = struct.unpack_from(">i", rec, 0)
    return 0, struct.pack(">i", size + 4)


def _magic_flip(rec: bytes) -> tuple[int, bytes]:
    return 4, bytes([rec[4] ^ 0x10])


def _trailer_name_flip(rec: bytes) -> tuple[int, bytes]:
    at = len(rec) - 20 + 3  # a byte of "__CRC32#": would pass the record off as unsealed
    return at, bytes([rec[at] ^ 0x01])


DAMAGE = {
    "trailer-name": _trailer_name_flip,
    "body": _body_flip,
    "props-valid-utf8": _props_valid,
    "props-invalid-utf8": _props_invalid,
    "header-size": _size_flip,
    "header-magic": _magic_flip,
}


@pytest.mark.parametrize("stop", ["clean", "sigkill"])
@pytest.mark.parametrize("where", ["active", "older"])
@pytest.mark.parametrize("kind", sorted(DAMAGE))
async def test_damaged_record(tmp_path: Path, kind: str, where: str, stop: str, caplog) -> None:
    root = tmp_path / "s"
    written = await _write(root, crash=stop == "sigkill")
    victim = _victim(written, where)
    rel, data = DAMAGE[kind](_record(root, victim))
    _damage(root, victim.at.wrote_offset, rel, data)
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        served = _served(store)
        for qid in (0, 1):
            want = [w for w in written if w.qid == qid and w is not victim]
            got = served[qid]
            assert [m.body for m in got] == [w.body for w in want]  # every undamaged message, in order
            assert all(m.properties.get("TAGS") == "tagA" for m in got)
        assert sum(len(v) for v in served.values()) == N - 1
        assert store.look_message_by_offset(victim.at.wrote_offset) is None  # nor by id (VIEW_MESSAGE_BY_ID)
        rep = store.integrity
        assert rep.quarantined_records + rep.skipped_reads >= 1
        assert str(victim.at.wrote_offset) in caplog.text  # says what it did, naming the record's offset
        # the store keeps working: a put after recovery is served
        await store.start()
        res = await store.put_message(PutRequest(T, victim.qid, 0, 0, 1, BORN, b"after", {}))
        assert res.ok
        assert _served(store)[victim.qid][-1].body == b"after"
    finally:
        await store.close()
    # and a second restart serves the same (the quarantine is not repeated into loss)
    store = MessageStore.open(_cfg(root))
    try:
        assert sum(len(v) for v in _served(store).values()) == N
    finally:
        await store.close()


def _cq_path(root: Path, qid: int) -> Path:
    d = root / "consumequeue" / T / str(qid)
    return d / sorted(os.listdir(d))[0]


@pytest.mark.parametrize("stop", ["clean", "sigkill"])
async def test_consume_queue_truncated_mid_unit(tmp_path: Path, stop: str, caplog) -> None:
    root = tmp_path / "s"
    written = await _write(root, crash=stop == "sigkill")
    path = _cq_path(root, 0)
    os.truncate(path, 20 * 7 + 9)  # seven whole units and part of the eighth
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        served = _served(store)
        assert [m.body for m in served[0]] == [w.body for w in written if w.qid == 0]
        assert len(served[1]) == N // 2
        assert store.integrity.rebuilt_queues == 1
        assert str(path) in caplog.text
    finally:
        await store.close()


@pytest.mark.parametrize("bogus", ["far-beyond-the-log", "another-queues-record"])
async def test_bogus_consume_queue_unit(tmp_path: Path, bogus: str, caplog) -> None:
    root = tmp_path / "s"
    written = await _write(root, crash=False)
    q0 = [w for w in written if w.qid == 0]
    q1 = [w for w in written if w.qid == 1]
    phys = 10**15 if bogus == "far-beyond-the-log" else q1[5].at.wrote_offset
    with open(_cq_path(root, 0), "r+b") as f:
        f.seek(20 * 5)
        f.write(struct.pack(">qiq", phys, q0[5].at.size, 0))
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        served = _served(store)
        assert [m.body for m in served[0]] == [w.body for w in q0]  # nothing skipped, the unit was repaired
        assert [m.body for m in served[1]] == [w.body for w in q1]
        assert store.integrity.repaired_units >= 1
        assert "unit 5" in caplog.text
    finally:
        await store.close()


@pytest.mark.parametrize("where", ["active", "older"])
async def test_segment_shorter_than_its_size(tmp_path: Path, where: str, caplog) -> None:
    root = tmp_path / "s"
    written = await _write(root, crash=False)
    last_file = max(w.at.wrote_offset // FILE for w in written)
    seg = last_file if where == "active" else 1
    inside = [w for w in written if w.at.wrote_offset // FILE == seg]
    cut = inside[len(inside) // 2].at.wrote_offset
    path = root / "commitlog" / f"{seg * FILE:020d}"
    os.truncate(path, cut % FILE)
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        served = _served(store)
        lost = {id(w) for w in inside if w.at.wrote_offset >= cut}
        for qid in (0, 1):
            assert [m.body for m in served[qid]] == [w.body for w in written if w.qid == qid and id(w) not in lost]
        assert store.integrity.repaired_files >= 1
        assert str(path) in caplog.text
    finally:
        await store.close()


async def test_checkpoint_deleted(tmp_path: Path, caplog) -> None:
    root = tmp_path / "s"
    written = await _write(root, crash=True)
    (root / "checkpoint").unlink()
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        served = _served(store)
        for qid in (0, 1):
            assert [m.body for m in served[qid]] == [w.body for w in written if w.qid == qid]
        assert "checkpoint missing" in caplog.text
    finally:
        await store.close()


async def test_bogus_unit_met_by_a_read_is_repaired(tmp_path: Path, caplog) -> None:
    """A unit that goes bad while the store runs (phys far beyond the log): the pull finds the record near its
    neighbours', rewrites the unit and serves it — nothing after it is skipped."""
    root = tmp_path / "s"
    written = await _write(root, crash=False)
    q0 = [w for w in written if w.qid == 0]
    store = MessageStore.open(_cfg(root))
    try:
        store._queues[(T, 0)].rewrite(5, 10**15, q0[5].at.size, 0)
        caplog.set_level(logging.WARNING)
        assert [m.body for m in _served(store)[0]] == [w.body for w in q0]
        assert store._queues[(T, 0)].unit(5)[0] == q0[5].at.wrote_offset
        assert store.integrity.repaired_units == 1 and "unit 5" in caplog.text
    finally:
        await store.close()


def _scrubbed(store: MessageStore) -> bool:
    """Whether the start-up scrub has finished."""
    return any(t.get_name() == "store-scrub" and t.done() for t in store._tasks)


@pytest.mark.parametrize("damaged", [False, True])
async def test_scrub_verifies_older_records_and_stops_at_damage(tmp_path: Path, damaged: bool) -> None:
    root = tmp_path / "s"
    written = await _write(root, crash=False)
    victim = _victim(written, "older")
    if damaged:
        rel, data = _body_flip(_record(root, victim))
        _damage(root, victim.at.wrote_offset, rel, data)
    store = MessageStore.open(_cfg(root))
    try:
        assert store._trusted_from == store.get_commit_log_max_offset()  # clean stop: nothing older verified yet
        await store.start()
        await eventually(lambda: _scrubbed(store), timeout=30, what="the start-up scrub", step=0.01)
        if damaged:
            assert store._trusted_from > victim.at.wrote_offset  # never trusted past the damage
            assert (root / "quarantine" / f"{victim.at.wrote_offset:020d}.bin").exists()
        else:
            assert store._trusted_from == 0
        served = _served(store)
        assert sum(len(v) for v in served.values()) == N - (1 if damaged else 0)
        assert all(m.body != victim.body for m in served[victim.qid]) or not damaged
    finally:
        await store.close()


@pytest.mark.parametrize("how", ["truncated", "garbage-header"])
async def test_index_file_damaged_is_rebuilt(tmp_path: Path, how: str, caplog) -> None:
    root = tmp_path / "s"
    await _write(root, crash=False)
    (path,) = (root / "index").iterdir()
    if how == "truncated":
        os.truncate(path, path.stat().st_size // 3)
    else:
        with open(path, "r+b") as f:
            f.write(struct.pack(">qqqqii", 5, 1, 900, 3, 0, 1 << 30))
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        for i in (0, 17, N - 1):
            assert len(store.query_message(T, f"k{i}", 4, 0, 2**62)) == 1
        assert "index file" in caplog.text and str(path) in caplog.text
    finally:
        await store.close()


async def test_records_written_before_sealing_still_read_and_checked(tmp_path: Path, caplog) -> None:
    """A store written before records carried the CRC trailer (no ``crc_since`` file): its records are served; one
    whose properties are not UTF-8 is quarantined at start-up instead of stopping it; new records are sealed."""
    root = tmp_path / "s"
    (root / "commitlog").mkdir(parents=True)
    seg = bytearray(FILE)
    pos = 0
    bodies = []
    for i in range(6):
        props = f"TAGS\x01old\x02KEYS\x01o{i}\x02"
        rec = encode_record(
            topic=T, body=b"old-%d" % i, properties=props.encode() if i != 3 else b"TAGS\x01\xff\xfe\x02",
            queue_id=0, queue_offset=i, physical_offset=pos, store_host=("10.0.0.9", 10911),
        )  # fmt: skip
        seg[pos : pos + len(rec)] = rec
        pos += len(rec)
        bodies.append(b"old-%d" % i)
    (root / "commitlog" / f"{0:020d}").write_bytes(bytes(seg))
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        got = [m.body for m in _served(store)[0]]
        assert got == bodies[:3] + bodies[4:]
        assert store.integrity.quarantined_records == 1 and "undecodable" in caplog.text
        await store.start()
        res = await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"new", {"TAGS": "n"}))
        assert res.ok
        raw = store.select_one_message_by_offset(res.items[0].wrote_offset)
        assert raw is not None and is_sealed(raw, 0, len(raw))
        assert [m.body for m in _served(store)[0]][-1] == b"new"
    finally:
        await store.close()
    # crc_since, then the range this store appended sealed records in: from the old records' end to the last one's
    end = res.items[0].wrote_offset + res.items[0].size
    assert (root / "crc_since").read_bytes() == struct.pack(">qqq", pos, pos, end)


async def test_segment_longer_than_its_size(tmp_path: Path, caplog) -> None:
    root = tmp_path / "s"
    written = await _write(root, crash=False)
    path = root / "commitlog" / f"{FILE:020d}"
    with open(path, "ab") as f:
        f.write(b"\xee" * 1000)
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        assert sum(len(v) for v in _served(store).values()) == len(written)
        assert path.stat().st_size == FILE and (root / "commitlog" / f"{FILE:020d}.overlong").stat().st_size == 1000
        assert "over the segment size" in caplog.text
    finally:
        await store.close()


async def test_body_flip_after_a_real_sigkill(tmp_path: Path, caplog) -> None:
    """A real SYNC_FLUSH writer process, SIGKILLed mid-stream; then two body bytes flipped in an acknowledged
    record in the middle of the log: every other acknowledged message is served, byte for byte."""
    from test_crash import _cfg as crash_cfg
    from test_crash import _run_and_kill

    root = tmp_path / "store"
    acked = _run_and_kill(root, acks_wanted=300)
    victim = sorted(acked, key=lambda a: a[3])[len(acked) // 2]  # (producer, seq, qoff, phys, digest)
    seg_size = 64 * 1024
    with open(root / "commitlog" / f"{victim[3] - victim[3] % seg_size:020d}", "r+b") as f:
        f.seek(victim[3] % seg_size + 100)
        b = f.read(2)
        f.seek(victim[3] % seg_size + 100)
        f.write(bytes([b[0] ^ 0xFF, b[1] ^ 0x0F]))
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(crash_cfg(root))
    try:
        served: dict[tuple[int, int], tuple[int, str]] = {}
        for p in range(4):
            off = 0
            while True:
                r = store.get_message_sync(GetRequest("g", "CrashTopic", p, off, 32))
                if r.status is not GetMessageStatus.FOUND and r.next_begin_offset == off:
                    break
                for m in r.messages():
                    served[(p, m.queue_offset)] = (m.commit_log_offset, hashlib.sha256(m.body).hexdigest())
                off = r.next_begin_offset
        for p, _seq, qoff, phys, dig in acked:
            if (p, qoff) == (victim[0], victim[2]):
                assert (p, qoff) not in served
            else:
                assert served[(p, qoff)] == (phys, dig)
        assert str(victim[3]) in caplog.text
    finally:
        await store.close()


async def test_eight_byte_blank_filler_at_a_file_end_is_not_damage(tmp_path: Path) -> None:
    """A record that leaves exactly the 8-byte blank filler at the end of its file (found by the kill -9 cycles)."""
    root = tmp_path / "s"
    store = MessageStore.open(_cfg(root))
    first = await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"f" * (FILE - 8 - 123), {}))
    assert first.ok and first.items[0].size == FILE - 8
    assert (await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"second", {}))).items[0].wrote_offset == FILE
    store.dispatcher.drain()
    store._release()  # a crash with no checkpoint: the whole log is scanned
    store = MessageStore.open(_cfg(root))
    try:
        assert [len(m.body) for m in _served(store)[0]] == [FILE - 8 - 123, 6]
        assert store.integrity.quarantined_records == 0 and not (root / "quarantine").exists()
    finally:
        await store.close()


async def test_consume_queue_shorter_than_the_checkpoint_promised(tmp_path: Path, caplog) -> None:
    """After a crash, a consume queue lost units the checkpoint said were durable (zeroed, same file size): the
    records after the checkpoint reveal the gap and the missing units come back from the commit log, not as
    markers."""
    root = tmp_path / "s"
    written = await _write(root, crash=True)
    with open(_cq_path(root, 0), "r+b") as f:
        f.seek(20 * 10)
        f.write(bytes(20 * 20))  # units 10..29 of queue 0 gone
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        served = _served(store)
        assert [m.body for m in served[0]] == [w.body for w in written if w.qid == 0]
        assert store.integrity.rebuilt_queues == 1 and "rebuilt from the commit log" in caplog.text
    finally:
        await store.close()


def test_unsealed_records_after_crc_since_read_unless_a_damaged_trailer() -> None:
    """A broker downgraded and upgraded again wrote unsealed records after ``crc_since``: they verify; a record
    whose trailer name lost a byte does not."""
    plain = bytes(encode_record(topic=T, body=b"b", properties="TAGS\x01t\x02KEYS\x01k1700000000000\x02"))
    assert verify(plain, 0, require_seal=True) == len(plain)
    msg = RecordMessage(T, 0, 0, 0, 0, ("127.0.0.1", 0), b"b", "TAGS\x01t\x02")
    rec = encode_message(msg, RecordPlace(seal=True))
    assert verify(bytes(rec), 0, require_seal=True) == len(rec)
    rec[len(rec) - 20 + 2] ^= 0x40
    with pytest.raises(RecordError):
        verify(bytes(rec), 0, require_seal=True)


@pytest.mark.parametrize("stop", ["clean", "sigkill"])
async def test_consume_queue_units_zeroed_at_the_very_end(tmp_path: Path, stop: str, caplog) -> None:
    """The last units of a queue's last file zeroed after they were durable, with no later record of that queue to
    reveal the gap: start-up notices (the marks) and rebuilds them from the commit log."""
    root = tmp_path / "s"
    written = await _write(root, crash=stop == "sigkill")
    if stop == "sigkill":  # the crash case of _write leaves marks from half-way: make them current, as a flush would
        store = MessageStore.open(_cfg(root))
        await store.close()
    q0 = [w for w in written if w.qid == 0]
    with open(_cq_path(root, 0), "r+b") as f:
        f.seek(20 * 20)
        f.write(bytes(20 * 10))  # units 20..29, the last ten of queue 0
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        served = _served(store)
        assert [m.body for m in served[0]] == [w.body for w in q0]
        assert len(served[1]) == N // 2
        assert store.integrity.rebuilt_queues == 1 and "were durable" in caplog.text
        res = await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"next", {}))
        assert res.ok and res.items[0].queue_offset == len(q0)  # the next message does not reuse an offset
    finally:
        await store.close()


@pytest.mark.parametrize("stop", ["clean", "sigkill", "sigkill-stopped-early"])
async def test_large_rebuild_runs_in_the_background_and_pulls_wait_for_it(
    tmp_path: Path, stop: str, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    """A queue whose rebuild is large (here: any) is rebuilt after start-up. Meanwhile a pull past what is rebuilt
    is told to retry the same offset (never an offset reset), earlier offsets are served, other queues take puts,
    its own puts are refused; then every message is there, and puts go on after the last one. A stop before the
    rebuild ends redoes it at the next start."""
    import broker.store.recovery as recovery_mod

    root = tmp_path / "s"
    written = await _write(root, crash=stop != "clean")
    q0 = [w for w in written if w.qid == 0]
    os.truncate(_cq_path(root, 0), 20 * 7 + 9)  # seven whole units and part of the eighth
    monkeypatch.setattr(recovery_mod, "BACKGROUND_BYTES", 0)
    caplog.set_level(logging.WARNING)
    store = MessageStore.open(_cfg(root))
    try:
        assert store._rebuild is not None and store._rebuild.busy(T, 0)
        assert "rebuilt in the background" in caplog.text
        r = store.get_message_sync(GetRequest("g", T, 0, 20, 32))
        assert r.status is GetMessageStatus.OFFSET_OVERFLOW_ONE and r.next_begin_offset == 20
        r = store.get_message_sync(GetRequest("g", T, 0, 3, 32))
        assert r.status is GetMessageStatus.FOUND and [m.body for m in r.messages()] == [w.body for w in q0[3:7]]
        refused = await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"no", {}))
        assert refused.status.name == "SERVICE_NOT_AVAILABLE"
        other = await store.put_message(PutRequest(T, 1, 0, 0, 1, BORN, b"q1-more", {}))
        assert other.ok and other.items[0].queue_offset == N // 2
        if stop != "sigkill-stopped-early":  # the records after the checkpoint were kept aside meanwhile
            await store._rebuild.run()
            assert not store._rebuild.busy(T, 0)
            assert [m.body for m in _served(store)[0]] == [w.body for w in q0]
            res = await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"after", {}))
            assert res.ok and res.items[0].queue_offset == len(q0)
            assert "in the background: " in caplog.text
    finally:
        await store.close()
    if stop == "sigkill-stopped-early":  # stopped before the background rebuild ran: the next start redoes it
        monkeypatch.setattr(recovery_mod, "BACKGROUND_BYTES", 1 << 40)
        store = MessageStore.open(_cfg(root))
        try:
            assert [m.body for m in _served(store)[0]] == [w.body for w in q0]
            res = await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"after", {}))
            assert res.ok and res.items[0].queue_offset == len(q0)
        finally:
            await store.close()


async def test_topic_deleted_while_its_queue_is_rebuilt_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deleting a topic whose queue is being rebuilt stops the rebuild for it: the walk finishes without writing
    the deleted queue's files back, and the topic's queues are gone."""
    import broker.store.recovery as recovery_mod

    root = tmp_path / "s"
    await _write(root, crash=False)
    os.truncate(_cq_path(root, 0), 20 * 7 + 9)
    monkeypatch.setattr(recovery_mod, "BACKGROUND_BYTES", 0)
    store = MessageStore.open(_cfg(root))
    try:
        assert store._rebuild is not None and store._rebuild.busy(T, 0)
        assert store.delete_topics([T]) == 2
        assert not store._rebuild.busy(T, 0)
        await store._rebuild.run()
        assert not (root / "consumequeue" / T / "0").exists() or not os.listdir(root / "consumequeue" / T / "0")
        assert store.get_message_sync(GetRequest("g", T, 0, 0, 32)).status is GetMessageStatus.NO_MATCHED_LOGIC_QUEUE
        assert store.integrity.rebuilt_queues == 0
    finally:
        await store.close()
