"""protocol.record / record_decode / message_properties / msg_id / batch (and runtime.msg_id): the stored-record codec, properties, ids, tag hash and the SEND_BATCH body."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.batch import BatchItem, decode_batch, encode_batch, encode_batch_texts
from protocol.message_properties import decode_properties, encode_properties, tag_hash
from protocol.msg_id import create_offset_msg_id, decode_offset_msg_id
from protocol.record import (
    BLANK,
    BLANK_MAGIC,
    FIXED_SIZE_V4,
    MAGIC_V1,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES,
    POS_BODYCRC,
    POS_MAGIC,
    POS_PHYSICALOFFSET,
    POS_QUEUEOFFSET,
    POS_STORETIMESTAMP_V4,
    SYSFLAG_BORNHOST_V6,
    SYSFLAG_STOREHOST_V6,
    RecordError,
    body_crc,
    check_record,
    encode_record,
)
from protocol.record_decode import decode_record, decode_records
from runtime.msg_id import create_uniq_id, create_uniq_ids

# -- strategies ------------------------------------------------------------------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x01\x02"), max_size=20)
prop_names = _text.filter(bool)
properties = st.dictionaries(prop_names, _text, max_size=8)
ipv4 = st.ip_addresses(v=4).map(str)
ipv6 = st.ip_addresses(v=6).filter(lambda a: a.ipv4_mapped is None).map(str)
ports = st.integers(0, 65535)
i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
topic_bytes = st.binary(min_size=1, max_size=MAX_TOPIC_BYTES)
# topics are str on the wire; keep them ASCII-safe in length (≤127 bytes once encoded)
topics = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=MAX_TOPIC_BYTES).filter(
    lambda t: len(t.encode()) <= MAX_TOPIC_BYTES
)


@st.composite
def records(draw: st.DrawFn, hosts: st.SearchStrategy[str] = ipv4) -> dict:
    return {
        "topic": draw(topics),
        "body": draw(st.binary(max_size=2048)),
        "properties": draw(properties),
        "queue_id": draw(st.integers(0, 2**31 - 1)),
        "flag": draw(i32),
        "queue_offset": draw(st.integers(0, 2**63 - 1)),
        "physical_offset": draw(st.integers(0, 2**63 - 1)),
        "sys_flag": draw(st.sampled_from([0, 1, 2, 4, 8, 12])),
        "born_timestamp": draw(i64),
        "born_host": (draw(hosts), draw(ports)),
        "store_timestamp": draw(i64),
        "store_host": (draw(hosts), draw(ports)),
        "reconsume_times": draw(st.integers(0, 2**31 - 1)),
        "prepared_transaction_offset": draw(i64),
    }


def _assert_same(msg, r: dict) -> None:
    assert msg.topic == r["topic"]
    assert msg.body == r["body"]
    assert msg.properties == r["properties"]
    assert msg.queue_id == r["queue_id"]
    assert msg.flag == r["flag"]
    assert msg.queue_offset == r["queue_offset"]
    assert msg.commit_log_offset == r["physical_offset"]
    assert msg.sys_flag & ~(SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6) == r["sys_flag"]
    assert msg.born_timestamp == r["born_timestamp"]
    assert msg.born_host == r["born_host"]
    assert msg.store_timestamp == r["store_timestamp"]
    assert msg.store_host == r["store_host"]
    assert msg.reconsume_times == r["reconsume_times"]
    assert msg.prepared_transaction_offset == r["prepared_transaction_offset"]
    assert msg.body_crc == zlib.crc32(r["body"]) & 0x7FFFFFFF


# -- record round trip -----------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(records())
def test_record_round_trip_ipv4(r: dict) -> None:
    buf = encode_record(**r)
    topic_len = len(r["topic"].encode())
    props_len = len(encode_properties(r["properties"]).encode())
    assert len(buf) == FIXED_SIZE_V4 + len(r["body"]) + topic_len + props_len
    # fixed positions the store patches in place
    assert struct.unpack_from(">i", buf, POS_MAGIC)[0] == MAGIC_V1
    assert struct.unpack_from(">q", buf, POS_QUEUEOFFSET)[0] == r["queue_offset"]
    assert struct.unpack_from(">q", buf, POS_PHYSICALOFFSET)[0] == r["physical_offset"]
    assert struct.unpack_from(">q", buf, POS_STORETIMESTAMP_V4)[0] == r["store_timestamp"]
    msg, end = decode_record(buf)
    assert end == len(buf)
    assert msg.store_size == len(buf)
    _assert_same(msg, r)
    assert check_record(buf, 0) == len(buf)


@settings(max_examples=100, deadline=None)
@given(records(hosts=ipv6))
def test_record_round_trip_ipv6(r: dict) -> None:
    buf = encode_record(**r)
    msg, end = decode_record(buf)
    assert end == len(buf)
    assert msg.sys_flag & SYSFLAG_BORNHOST_V6 and msg.sys_flag & SYSFLAG_STOREHOST_V6
    # hosts come back in canonical form
    assert msg.born_host == r["born_host"] and msg.store_host == r["store_host"]
    assert check_record(buf, 0) == len(buf)


@settings(max_examples=50, deadline=None)
@given(st.lists(records(), min_size=1, max_size=5))
def test_records_back_to_back(rs: list[dict]) -> None:
    buf = b"".join(bytes(encode_record(**r)) for r in rs)
    msgs = decode_records(buf)
    assert len(msgs) == len(rs)
    for m, r in zip(msgs, rs, strict=True):
        _assert_same(m, r)


def test_properties_given_as_text_or_bytes_are_stored_verbatim() -> None:
    text = "KEYS\x01k1 k2\x02TAGS\x01TagA\x02"
    a = encode_record(topic="T", body=b"x", properties=text)
    b = encode_record(topic=b"T", body=b"x", properties=text.encode())
    c = encode_record(topic="T", body=b"x", properties={"KEYS": "k1 k2", "TAGS": "TagA"})
    assert a == b == c
    msg = decode_record(a)[0]
    assert msg.tags == "TagA"
    assert msg.keys == ["k1", "k2"]


def test_compressed_body_inflates_only_on_request() -> None:
    raw = b"hello " * 100
    buf = encode_record(topic="T", body=zlib.compress(raw), sys_flag=1)
    assert decode_record(buf)[0].body == zlib.compress(raw)
    assert decode_record(buf, decompress=True)[0].body == raw
    bad = encode_record(topic="T", body=b"not zlib", sys_flag=1)
    with pytest.raises(RecordError):
        decode_record(bad, decompress=True)


# -- limits ----------------------------------------------------------------------------------------------------------


def test_topic_limit() -> None:
    encode_record(topic="t" * MAX_TOPIC_BYTES, body=b"")
    with pytest.raises(ValueError, match="topic"):
        encode_record(topic="t" * (MAX_TOPIC_BYTES + 1), body=b"")
    # the limit is in bytes, not characters
    with pytest.raises(ValueError, match="topic"):
        encode_record(topic="é" * 64, body=b"")
    m = decode_record(encode_record(topic="t" * MAX_TOPIC_BYTES, body=b"b"))[0]
    assert m.topic == "t" * MAX_TOPIC_BYTES


def test_properties_limit() -> None:
    ok = "a" * (MAX_PROPERTIES_BYTES - 3) + "\x01v\x02"
    assert len(ok) == MAX_PROPERTIES_BYTES
    buf = encode_record(topic="T", body=b"", properties=ok)
    assert decode_record(buf)[0].properties == {"a" * (MAX_PROPERTIES_BYTES - 3): "v"}
    with pytest.raises(ValueError, match="properties"):
        encode_record(topic="T", body=b"", properties=ok + "x")
    with pytest.raises(ValueError, match="properties"):
        encode_record(topic="T", body=b"", properties={"k": "é" * 16384})


# -- properties ------------------------------------------------------------------------------------------------------


@given(properties)
def test_properties_round_trip(p: dict[str, str]) -> None:
    text = encode_properties(p)
    assert decode_properties(text) == p
    if p:
        assert text.endswith("\x02")
        # lenient: no trailing separator, doubled separators, leading separator
        assert decode_properties(text[:-1]) == p
        assert decode_properties("\x02" + text.replace("\x02", "\x02\x02")) == p


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("a\x01b", {"a": "b"}),
        ("a\x01b\x02", {"a": "b"}),
        ("\x02\x02a\x01b\x02\x02c\x01\x02", {"a": "b", "c": ""}),
        ("novalue\x02a\x011", {"a": "1"}),  # a piece without \x01 is skipped
        ("\x01orphan\x02a\x011", {"a": "1"}),  # an empty name is skipped
        ("UNIQ_KEY\x01ü€😀\x02", {"UNIQ_KEY": "ü€😀"}),
        ("a\x011\x02a\x012\x02", {"a": "2"}),  # the last one wins, as in J's HashMap
    ],
)
def test_properties_leniency(text: str, expected: dict[str, str]) -> None:
    assert decode_properties(text) == expected


# -- ids and hashes --------------------------------------------------------------------------------------------------


def _java_hash(s: str) -> int:
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("TagA", 2598919),
        ("", 0),
        (None, 0),
        ("a", 97),
        ("hello", 99162322),
        ("TagB", 2598920),
        ("polygenelubricants", -2147483648),  # the well-known Integer.MIN_VALUE hashCode
        ("Aa", 2112),
        ("BB", 2112),
    ],
)
def test_tag_hash_matches_java(tag: str | None, expected: int) -> None:
    assert tag_hash(tag) == expected


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_tag_hash_is_utf16_java_hash(s: str) -> None:
    h = tag_hash(s)
    assert -(2**31) <= h < 2**31
    assert h == _java_hash(s)


def test_tag_hash_non_bmp_uses_surrogate_pairs() -> None:
    # "😀" is U+1F600 = UTF-16 D83D DE00: 31 * 0xD83D + 0xDE00
    assert tag_hash("😀") == 31 * 0xD83D + 0xDE00


@given(ipv4, ports, st.integers(0, 2**63 - 1))
def test_offset_msg_id_round_trip_v4(ip: str, port: int, off: int) -> None:
    mid = create_offset_msg_id(ip, port, off)
    assert len(mid) == 32 and mid == mid.upper()
    assert decode_offset_msg_id(mid) == (ip, port, off)
    assert decode_offset_msg_id(mid.lower()) == (ip, port, off)


@given(ipv6, ports, st.integers(0, 2**63 - 1))
def test_offset_msg_id_round_trip_v6(ip: str, port: int, off: int) -> None:
    mid = create_offset_msg_id(ip, port, off)
    assert len(mid) == 56
    assert decode_offset_msg_id(mid) == (ip, port, off)


def test_offset_msg_id_known_value() -> None:
    # J: MessageDecoder.createMessageId(10.0.0.1:10911, 0x1234)
    assert create_offset_msg_id("10.0.0.1", 10911, 0x1234) == "0A00000100002A9F0000000000001234"
    assert decode_offset_msg_id("0A00000100002A9F0000000000001234") == ("10.0.0.1", 10911, 0x1234)


@pytest.mark.parametrize("bad", ["", "zz", "0A0000010000", "0A00000100002A9F00000000000012", "G" * 32])
def test_offset_msg_id_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        decode_offset_msg_id(bad)


def test_message_ext_ids() -> None:
    buf = encode_record(topic="T", body=b"b", store_host=("10.0.0.1", 10911), physical_offset=0x1234)
    m = decode_record(buf)[0]
    assert m.offset_msg_id == "0A00000100002A9F0000000000001234"
    assert m.msg_id == m.offset_msg_id
    m2 = decode_record(encode_record(topic="T", body=b"b", properties={"UNIQ_KEY": "ABC"}))[0]
    assert m2.msg_id == "ABC"


# -- batch body ------------------------------------------------------------------------------------------------------


@given(st.lists(st.builds(BatchItem, st.binary(max_size=512), properties, i32), max_size=10))
def test_batch_round_trip(items: list[BatchItem]) -> None:
    body = encode_batch(items)
    assert decode_batch(body) == items
    assert decode_batch(memoryview(body)) == items


@given(st.lists(st.builds(BatchItem, st.binary(max_size=512), properties, i32), max_size=10))
def test_batch_from_texts_is_the_batch_from_items(items: list[BatchItem]) -> None:
    body = encode_batch_texts([(it.flag, it.body, it.text) for it in items])
    assert body == encode_batch(items)
    assert decode_batch(body) == items


@pytest.mark.parametrize("n", [0, 1, 2, 32, 65_536])
def test_uniq_ids_of_a_batch(n: int) -> None:
    ids = create_uniq_ids(n)
    assert len(ids) == n == len(set(ids))  # unique: the 16-bit counter takes each value once in 65,536 ids
    one = create_uniq_id()
    for i in ids:
        assert len(i) == 32 and i == i.upper() and int(i, 16) >= 0
        assert i[:20] == one[:20]  # ip, pid and the per-process hash, as a single id has them


def test_batch_layout_matches_java() -> None:
    body = encode_batch([BatchItem(b"abc", {"k": "v"}, 7)])
    # totalSize | magic 0 | bodyCRC 0 | flag | bodyLen | body | propsLen | props
    assert body == struct.pack(">iiiii", 20 + 3 + 2 + 4, 0, 0, 7, 3) + b"abc" + struct.pack(">h", 4) + b"k\x01v\x02"


@pytest.mark.parametrize("cut", [1, 5, 19, 20, 22, 25])
def test_batch_truncated_rejected(cut: int) -> None:
    body = encode_batch([BatchItem(b"abc", {"k": "v"}), BatchItem(b"defg", {})])
    with pytest.raises(RecordError):
        decode_batch(body[:-cut])


def test_batch_garbled_rejected() -> None:
    body = bytearray(encode_batch([BatchItem(b"abc", {"k": "v"})]))
    struct.pack_into(">i", body, 16, 1000)  # body length past the entry
    with pytest.raises(RecordError):
        decode_batch(bytes(body))
    body = bytearray(encode_batch([BatchItem(b"abc", {"k": "v"})]))
    struct.pack_into(">i", body, 0, 10)  # total size below the minimum
    with pytest.raises(RecordError):
        decode_batch(bytes(body))


def test_batch_negative_flag_and_negative_lengths() -> None:
    """Lengths and the flag are read as big-endian int32 / int16: a negative flag comes back as sent, a negative
    body or properties length is refused."""
    item = decode_batch(encode_batch([BatchItem(b"abc", {"k": "v"}, -7), BatchItem(b"d", {}, -(2**31))]))
    assert [i.flag for i in item] == [-7, -(2**31)]
    for pos, fmt in ((16, ">i"), (23, ">h")):  # body length, properties length
        body = bytearray(encode_batch([BatchItem(b"abc", {"k": "v"})]))
        struct.pack_into(fmt, body, pos, -1)
        with pytest.raises(RecordError):
            decode_batch(bytes(body))
    body = bytearray(encode_batch([BatchItem(b"abc", {"k": "v"})]))
    struct.pack_into(">i", body, 0, -30)  # total size
    with pytest.raises(RecordError):
        decode_batch(bytes(body))


# -- check_record (recovery) -----------------------------------------------------------------------------------------


def _rec(**kw: object) -> bytes:
    base: dict = {"topic": "TopicTest", "body": b"body-bytes" * 10, "properties": {"TAGS": "TagA", "KEYS": "k"}}
    base.update(kw)
    return bytes(encode_record(**base))


def test_check_record_blank_filler() -> None:
    filler = struct.pack(">ii", 4096, BLANK_MAGIC) + bytes(4088)
    assert check_record(filler, 0) == BLANK
    rec = _rec()
    assert check_record(rec + filler, len(rec)) == BLANK


def test_check_record_valid_at_offset() -> None:
    a, b = _rec(), _rec(body=b"other")
    assert check_record(a + b, 0) == len(a)
    assert check_record(a + b, len(a)) == len(b)
    # CRC disabled still validates the structure
    assert check_record(a + b, len(a), check_crc=False) == len(b)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_check_record_rejects_every_truncation(data: st.DataObject) -> None:
    rec = _rec(body=data.draw(st.binary(max_size=300)))
    cut = data.draw(st.integers(0, len(rec) - 1))
    with pytest.raises(RecordError):
        check_record(rec[:cut], 0)
    with pytest.raises(RecordError):
        decode_record(rec[:cut])


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda b: struct.pack_into(">i", b, POS_MAGIC, 0x12345678), id="magic"),
        pytest.param(lambda b: struct.pack_into(">i", b, 0, 10), id="size-too-small"),
        pytest.param(lambda b: struct.pack_into(">i", b, 0, 1 << 30), id="size-too-big"),
        pytest.param(lambda b: struct.pack_into(">i", b, 0, len(b) - 1), id="size-one-short"),
        pytest.param(lambda b: b.__setitem__(len(b) - 30, b[len(b) - 30] ^ 0x40), id="last-body-byte"),
        pytest.param(lambda b: struct.pack_into(">i", b, POS_BODYCRC, 1), id="crc"),
        pytest.param(lambda b: b.__setitem__(100, b[100] ^ 0xFF), id="body-byte"),
        pytest.param(lambda b: struct.pack_into(">i", b, 88, 1 << 20), id="body-len"),
        pytest.param(lambda b: struct.pack_into(">i", b, 88, -5), id="negative-body-len"),
    ],
)
def test_check_record_rejects_garbled(mutate) -> None:
    rec = _rec()
    b = bytearray(rec)
    mutate(b)
    assert bytes(b) != rec
    with pytest.raises(RecordError):
        check_record(b, 0)


def test_check_record_crc_only_when_asked() -> None:
    b = bytearray(_rec())
    b[100] ^= 0xFF  # a body byte
    with pytest.raises(RecordError, match="CRC"):
        check_record(b, 0)
    assert check_record(b, 0, check_crc=False) == len(b)


def test_check_record_rejects_zeros_and_short_header() -> None:
    with pytest.raises(RecordError):
        check_record(bytes(200), 0)
    with pytest.raises(RecordError):
        check_record(bytes(7), 0)
    rec = _rec()
    with pytest.raises(RecordError):
        check_record(rec + b"\x00" * 4, len(rec))


def test_body_crc_is_java_masked() -> None:
    assert body_crc(b"") == 0
    assert body_crc(b"hello") == zlib.crc32(b"hello") & 0x7FFFFFFF
    assert 0 <= body_crc(b"\xff" * 1000) < 2**31
