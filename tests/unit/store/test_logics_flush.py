"""The batched logics flush: queues with few dirty units wait for a later pass, and the checkpoint never claims
durability for their units; the marks round-trip and a damaged marks file reads as none."""

from __future__ import annotations

from pathlib import Path

from _store_util import BORN, get_all, small_config

from broker.store import MessageStore, PutRequest
from broker.store.cq_marks import decode_marks, encode_marks, read_marks
from broker.store.logics_flush import LEAST_PAGES


async def test_a_regular_pass_syncs_only_busy_queues_and_holds_the_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "s"
    cfg = small_config(root, mapped_file_size_consume_queue=20 * 2000)
    store = MessageStore.open(cfg)
    try:
        busy = LEAST_PAGES * 4096 // 20 + 5  # units enough for LEAST_PAGES dirty pages
        quiet_first = (await store.put_message(PutRequest("Quiet", 0, 0, 0, 1, BORN, b"q0", {}))).items[0]
        for i in range(busy):
            await store.put_message(PutRequest("Busy", 0, 0, 0, 1, BORN, b"b%d" % i, {}))
        await store.put_message(PutRequest("Quiet", 0, 0, 0, 1, BORN, b"q1", {}))
        store.dispatcher.drain()
        store.commitlog.flush()
        store._flush_logics(False)
        quiet = store._queues[("Quiet", 0)].queue.files[-1]
        busy_f = store._queues[("Busy", 0)].queue.files[-1]
        assert busy_f.flushed == busy_f.wrote and quiet.flushed < quiet.wrote
        # the quiet queue's first unsynced unit is its first message: the checkpoint stays at or below it
        assert store._checkpoint.dispatched_offset <= quiet_first.wrote_offset
        assert read_marks(str(root)) == {("Busy", 0): busy, ("Quiet", 0): 0}
        store._flush_logics(True)
        assert quiet.flushed == quiet.wrote
        assert store._checkpoint.dispatched_offset == store.commitlog.max_offset
        assert read_marks(str(root)) == {("Busy", 0): busy, ("Quiet", 0): 2}
    finally:
        await store.close()
    store = MessageStore.open(cfg)
    try:
        assert [m.body for m in get_all(store, "Quiet", 0)] == [b"q0", b"q1"]
    finally:
        await store.close()


def test_marks_round_trip_and_damage_reads_as_none() -> None:
    marks = {("T", 0): 5, ("Tópico", 7): 1 << 40}
    data = encode_marks(marks)
    assert decode_marks(data) == marks
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= 0x40
        assert decode_marks(bytes(bad)) == {}
    assert decode_marks(data[:-1]) == {}
