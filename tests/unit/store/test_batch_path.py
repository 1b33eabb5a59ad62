"""The batch put path: items keep the properties string they arrived with, a batch's consume-queue units and
index entries are written in one pass (and still right across consume-queue and index file boundaries), and the
arrival listeners hear a batch once per tags code, at the last message carrying it."""

from __future__ import annotations

from pathlib import Path

from _store_util import BORN, get_all, small_config

from broker.store import MessageStore
from broker.store.dispatcher import Arrival
from broker.store.request import BatchPutRequest, GetRequest, MessageFilter
from protocol.batch import BatchItem, decode_batch, encode_batch

T = "BatchT"


def _wire(n: int, start: int = 0) -> bytes:
    return encode_batch(
        [
            BatchItem(b"body-%d" % i, {"TAGS": f"t{i % 3}", "KEYS": f"k{i} shared", "UNIQ_KEY": f"U{i:08d}"}, i)
            for i in range(start, start + n)
        ]
    )


async def test_batch_units_and_index_across_file_boundaries(tmp_path: Path) -> None:
    # 5 units per consume-queue file and 6 entries per index file: batches of 8 straddle both
    store = MessageStore.open(small_config(tmp_path, mapped_file_size_consume_queue=5 * 20, max_index_num=6))
    heard: list[tuple[int, int, str | None]] = []

    def listener(a: Arrival) -> None:
        assert a.properties is not None
        heard.append((a.next_offset, a.tags_code, a.properties.get("UNIQ_KEY")))

    store.add_arrival_listener(listener)
    await store.start()
    try:
        for first in (0, 8, 16):
            res = await store.put_messages(
                BatchPutRequest(T, 1, 0, 1_700_000_000_000, BORN, decode_batch(_wire(8, first)))
            )
            assert res.ok, res
            assert [i.queue_offset for i in res.items] == list(range(first, first + 8))
        # a batch that fits the current file after an odd start: the one-write path
        res = await store.put_messages(BatchPutRequest(T, 1, 0, 1_700_000_000_000, BORN, decode_batch(_wire(2, 24))))
        assert res.ok
        msgs = get_all(store, T, 1)
        assert [m.body for m in msgs] == [b"body-%d" % i for i in range(26)]
        assert [m.flag for m in msgs] == list(range(26))
        assert [m.properties["UNIQ_KEY"] for m in msgs] == [f"U{i:08d}" for i in range(26)]
        assert [m.tags for m in msgs] == [f"t{i % 3}" for i in range(26)]
        store.dispatcher.drain()
        # once per tags code of a batch, for the last message with it (8 messages cycle through t0, t1, t2)
        expect = [i for first in (0, 8, 16) for i in sorted(max(j for j in range(first, first + 8) if j % 3 == t)
                                                             for t in range(3))]  # fmt: skip
        expect += [24, 25]  # the 2-message batch: t0, t1
        assert [h[0] for h in heard] == [i + 1 for i in expect]
        assert [h[2] for h in heard] == [f"U{i:08d}" for i in expect]
        assert len({h[1] for h in heard}) == 3  # three tags, three codes
        for i in (0, 7, 8, 13, 25):
            found = store.query_message(T, f"k{i}", 5, 0, 2**62)
            assert len(found) == 1, i
            found = store.query_message(T, f"U{i:08d}", 5, 0, 2**62)
            assert len(found) == 1, i
        assert len(store.query_message(T, "shared", 64, 0, 2**62)) == 26
        assert store.index is not None and len(store.index.files) > 1
    finally:
        await store.close()


async def test_batch_stores_the_received_properties_string(tmp_path: Path) -> None:
    """The producer's properties bytes go to the log as they came (order kept, no re-encoding), the store's CRC
    trailer spliced after them; a string without a final separator gets one."""
    store = MessageStore.open(small_config(tmp_path))
    await store.start()
    try:
        items = [BatchItem(b"a", text="Z\x01last\x02A\x01first\x02"), BatchItem(b"b", text="K\x01v")]
        res = await store.put_messages(BatchPutRequest(T, 0, 0, 1, BORN, decode_batch(encode_batch(items))))
        assert res.ok
        raw = store.get_message_sync(GetRequest("g", T, 0, 0, 32)).buffer
        assert b"Z\x01last\x02A\x01first\x02__CRC32#\x01" in raw
        assert b"K\x01v\x02__CRC32#\x01" in raw
        assert [m.properties for m in get_all(store, T, 0)] == [{"Z": "last", "A": "first"}, {"K": "v"}]
    finally:
        await store.close()


async def test_a_batch_from_an_ipv6_producer_goes_message_by_message_with_its_properties(tmp_path: Path) -> None:
    """An IPv6 born host takes the generic encoder, one message at a time: consecutive offsets, each message's own
    properties (read from its request), the host kept."""
    store = MessageStore.open(small_config(tmp_path))
    await store.start()
    try:
        items = [BatchItem(b"a", text="K\x01one"), BatchItem(b"b", {"K": "two"})]
        born = ("::1", 5000)
        res = await store.put_messages(BatchPutRequest(T, 1, 0, 1, born, decode_batch(encode_batch(items))))
        assert res.ok and [r.queue_offset for r in res.items] == [0, 1]
        got = get_all(store, T, 1)
        assert [(m.body, m.properties, m.born_host) for m in got] == [
            (b"a", {"K": "one"}, born),
            (b"b", {"K": "two"}, born),
        ]
    finally:
        await store.close()


def test_batch_item_text_and_dict_agree() -> None:
    item = decode_batch(encode_batch([BatchItem(b"x", {"a": "1", "b": "2"}, 3)]))[0]
    assert item.text == "a\x011\x02b\x012\x02"
    assert item.properties == {"a": "1", "b": "2"}
    assert item == BatchItem(b"x", {"a": "1", "b": "2"}, 3)
    item.properties = {"c": "3"}
    assert item.text == "c\x013\x02"


async def test_a_batch_wakes_held_pulls_filtered_by_a_tag_that_is_not_its_last(tmp_path: Path) -> None:
    """Held pulls filtered by tag wake on a batch whenever one of its messages matches past their offset, though the
    listeners hear the batch once per tags code; a pull waiting past the batch's end, or on another tag, stays held."""
    import asyncio

    from broker.services.long_polling import LongPollingService, Wake
    from protocol.message_properties import tag_hash
    from tests.unit.broker.polling_support import hold

    store = MessageStore.open(small_config(tmp_path))
    polling = LongPollingService()
    store.add_arrival_listener(polling.notify_arrival)
    await store.start()
    try:

        def held(offset: int, tag: str) -> asyncio.Task[Wake]:
            code = tag_hash(tag)
            return asyncio.create_task(
                hold(polling, GetRequest("", T, 2, offset, 1, filter=MessageFilter(lambda c: c == code)), 30.0)
            )

        first_tag, later_offset, other_tag = held(0, "t0"), held(5, "t1"), held(0, "t9")
        await asyncio.sleep(0)  # the holds register
        assert polling.held_count == 3
        # tags t0, t1, t2, t0, t1: t0 first at offset 0 and last at 3; t1's last is offset 4 (next offset 5)
        res = await store.put_messages(BatchPutRequest(T, 2, 0, 1_700_000_000_000, BORN, decode_batch(_wire(5))))
        assert res.ok
        store.dispatcher.drain()
        assert await asyncio.wait_for(first_tag, 5) is Wake.ARRIVED
        await asyncio.sleep(0)
        assert not later_offset.done() and not other_tag.done()  # nothing past offset 5; no t9 at all
        res = await store.put_messages(
            BatchPutRequest(T, 2, 0, 1_700_000_000_000, BORN, decode_batch(_wire(3, 5)))
        )  # t2, t0, t1
        assert res.ok
        store.dispatcher.drain()
        assert await asyncio.wait_for(later_offset, 5) is Wake.ARRIVED
        assert not other_tag.done()
        polling.release_all()
        assert await other_tag is Wake.SHUTDOWN
    finally:
        await store.close()


def test_the_loop_form_encodes_the_bytes_of_the_single_record_encoder() -> None:
    """``encode_records_v4`` (a batch, from the received body's spans) writes exactly what ``encode_record_v4`` writes
    per record: sealed with and without a final separator, empty properties, unsealed, binary bodies."""
    from protocol.batch import scan_batch
    from protocol.crc import crc32
    from protocol.record import SEAL_PREFIX, RecordRun, encode_record_v4, encode_records_v4, host_block_v4

    texts = ["K\x01v\x02", "A\x011\x02B\x01two", "", "UNIQ_KEY\x01" + "F" * 32 + "\x02", "WAIT\x01true\x02"]
    bodies = [b"x" * 1024, bytes(range(256)), b"\x00", b"body", b"\xff" * 7]
    view = scan_batch(
        encode_batch([BatchItem(b, text=t, flag=i * 3) for i, (b, t) in enumerate(zip(bodies, texts, strict=True))])
    )
    seals = [SEAL_PREFIX if not t or t.endswith("\x02") else b"\x02" + SEAL_PREFIX for t in texts]
    seals[4] = b""  # unsealed
    topic = b"\x06BatchT"
    born, store_host = host_block_v4(("10.0.0.7", 5555)), host_block_v4(("127.0.0.1", 10911))
    assert born is not None and store_host is not None
    sizes = [
        90 + len(topic) + len(b) + len(t.encode()) + (len(s) + 11 if s else 0)
        for b, t, s in zip(bodies, texts, seals, strict=True)
    ]
    run = RecordRun(3, 100, 1, 7_000, 0, 1_700_000_000_123, born, 1_700_000_000_456, store_host, topic)
    got = encode_records_v4(run, view.payload, view.spans, view.flags, sizes, seals)
    want = b""
    for i, (b, t, s) in enumerate(zip(bodies, texts, seals, strict=True)):
        want += encode_record_v4(
            sizes[i], crc32(b), 3, i * 3, 100 + i, 7_000 + sum(sizes[:i]), 0, 1_700_000_000_123, born,
            1_700_000_000_456, store_host, 0, 0, b, topic, t.encode(), s,
        )  # fmt: skip
    assert bytes(got) == want


async def test_batches_of_unique_keys_only_and_of_mixed_properties_are_indexed_and_tagged(tmp_path: Path) -> None:
    """The batch dispatch's column forms: no tags nor keys at all (as the Spark sink sends), then tags and keys on
    some messages only and a user property ending in ``S``: each message is found by its keys and unique key, and
    its consume-queue unit carries its tags code (a tag filter finds exactly it)."""
    from protocol.message_properties import tag_hash

    sink = [BatchItem(b"s%d" % i, text=f"WAIT\x01true\x02UNIQ_KEY\x01S{i:031X}\x02") for i in range(7)]
    mixed = [
        BatchItem(b"m0", text="CLASS\x01x\x02UNIQ_KEY\x01M0\x02"),
        BatchItem(b"m1", text="TAGS\x01ta\x02UNIQ_KEY\x01M1\x02"),
        BatchItem(b"m2", text="KEYS\x01ka kb\x02"),
        BatchItem(b"m3", text=""),
        BatchItem(b"m4", text="TAGS\x01tb\x02KEYS\x01ka\x02UNIQ_KEY\x01M4\x02"),
    ]
    store = MessageStore.open(small_config(tmp_path))
    await store.start()
    try:
        for items in (sink, mixed):
            res = await store.put_messages(
                BatchPutRequest(T, 0, 0, 1_700_000_000_000, BORN, decode_batch(encode_batch(items)))
            )
            assert res.ok
        store.dispatcher.drain()
        msgs = get_all(store, T, 0)
        assert [m.body for m in msgs] == [it.body for it in sink + mixed]
        assert [m.tags for m in msgs] == [None] * 8 + ["ta", None, None, "tb"]
        for key, n in (("ka", 2), ("kb", 1), ("M0", 1), ("M1", 1), ("M4", 1), (f"S{3:031X}", 1), ("x", 0)):
            assert len(store.query_message(T, key, 8, 0, 2**62)) == n, key
        for tag in ("ta", "tb"):
            code = tag_hash(tag)
            got = store.get_message_sync(
                GetRequest("g", T, 0, 0, 32, filter=MessageFilter(lambda c, code=code: c == code))
            )
            assert [m.tags for m in got.messages()] == [tag]
    finally:
        await store.close()
