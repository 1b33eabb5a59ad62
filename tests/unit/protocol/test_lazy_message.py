"""LazyMessageExt (what the push consumer decodes): the same message as an eager decode, whatever is read first."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.message_ext import LazyMessageExt, MessageExt
from protocol.message_properties import PropertyKey, encode_properties
from protocol.record import STORE_CRC_PROPERTY, SYSFLAG_COMPRESSED, RecordError, encode_record
from protocol.record_decode import decode_records

PROPS = {
    PropertyKey.TAGS: "TagA",
    PropertyKey.KEYS: "k1 k2",
    PropertyKey.UNIQ_KEY: "U1",
    "a": "1",
    STORE_CRC_PROPERTY: "9",
}


def records(props: dict[str, str] | str, n: int = 2) -> bytes:
    return b"".join(
        bytes(
            encode_record(topic="T", body=b"b%d" % i, properties=props, queue_offset=i, store_host=("10.0.0.1", 10911))
        )
        for i in range(n)
    )


def test_lazy_decode_equals_eager_decode() -> None:
    buf = records(PROPS)
    eager, lazy = decode_records(buf), decode_records(buf, lazy=True)
    assert all(type(m) is LazyMessageExt for m in lazy)
    assert [m.tags for m in lazy] == ["TagA", "TagA"]
    assert [m.msg_id for m in lazy] == ["U1", "U1"]
    assert lazy == eager
    assert lazy[0].properties == {k: v for k, v in PROPS.items() if k != STORE_CRC_PROPERTY}


def test_tags_and_msg_id_read_from_the_text_match_the_dict() -> None:
    (m,) = decode_records(records({"a": "1"}, 1), lazy=True)
    assert m.tags is None
    assert m.msg_id == m.offset_msg_id  # no UNIQ_KEY: the offset id
    assert m.keys == []


@pytest.mark.parametrize("decode_first", [False, True])
@pytest.mark.parametrize("text", [encode_properties(PROPS), "TAGS\x01x\x02a\x011"])  # with and without a trailing \x02
def test_added_properties_win_before_and_after_decoding(decode_first: bool, text: str) -> None:
    (m,) = decode_records(records(text, 1), lazy=True)
    if decode_first:
        assert m.properties["a"] == "1"
    m.add_properties(encode_properties({"a": "2", PropertyKey.MIN_OFFSET: "0"}))  # type: ignore[attr-defined]
    assert m.properties["a"] == "2" and m.properties[PropertyKey.MIN_OFFSET] == "0"
    assert STORE_CRC_PROPERTY not in m.properties


@pytest.mark.parametrize("text", [encode_properties(PROPS), "TAGS\x01x\x02a\x011", ""])
def test_extra_props_at_decode_equal_added_properties(text: str) -> None:
    extra = encode_properties({"a": "2", PropertyKey.MIN_OFFSET: "0", PropertyKey.MAX_OFFSET: "7"})
    added = decode_records(records(text), lazy=True)
    for m in added:
        m.add_properties(extra)  # type: ignore[attr-defined]
    at_decode = decode_records(records(text), lazy=True, extra_props=extra)
    assert [m.tags for m in at_decode] == [m.tags for m in added]
    assert [m.properties for m in at_decode] == [m.properties for m in added]
    assert at_decode[1].properties["a"] == "2" and at_decode[1].properties[PropertyKey.MAX_OFFSET] == "7"


def test_assigning_properties_replaces_the_text() -> None:
    (m,) = decode_records(records(PROPS, 1), lazy=True)
    m.properties = {"x": "y"}
    assert m.properties == {"x": "y"} and m.tags is None


def test_replace_copy_and_pickle_keep_the_properties() -> None:
    (m,) = decode_records(records(PROPS, 1), lazy=True)
    want = decode_records(records(PROPS, 1))[0].properties
    r = dataclasses.replace(m, topic="U")
    assert r.topic == "U" and r.properties == want
    (m,) = decode_records(records(PROPS, 1), lazy=True)
    assert copy.copy(m).properties == want
    (m,) = decode_records(records(PROPS, 1), lazy=True)
    back = pickle.loads(pickle.dumps(m))
    assert back.properties == want and back.tags == "TagA"
    assert isinstance(back, MessageExt)


_TEXT = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x01\x02")
_NAMES = st.one_of(
    st.sampled_from([PropertyKey.TAGS, PropertyKey.UNIQ_KEY, "TAGSX", "XTAGS"]), st.text(_TEXT, min_size=1)
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_NAMES, st.text(_TEXT), max_size=6))
def test_any_properties_decode_alike(props: dict[str, str]) -> None:
    buf = records(props, 1)
    (lazy,) = decode_records(buf, lazy=True)
    (eager,) = decode_records(buf)
    assert lazy.tags == eager.tags
    assert lazy.msg_id == eager.msg_id
    assert lazy.properties == eager.properties


_HOSTS = st.sampled_from([("10.0.0.1", 10911), ("192.168.1.7", 5), ("::1", 10911), ("fe80::1", 7)])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.binary(max_size=64),
            st.booleans(),
            _HOSTS,
            _HOSTS,
            st.dictionaries(_NAMES, st.text(_TEXT)),
            st.sampled_from(["T", "U", "TT", "", "主题"]),  # the topic is reused while it repeats
        ),
        max_size=5,
    ),
    st.booleans(),
    st.sampled_from(["", "MIN_OFFSET\x010\x02MAX_OFFSET\x019\x02"]),
)
def test_a_pull_body_decodes_as_record_by_record(
    recs: list[tuple[bytes, bool, tuple[str, int], tuple[str, int], dict[str, str], str]],
    decompress: bool,
    extra: str,
) -> None:
    """A pull body (bytes: the inline common case) decodes as ``decode_record`` decodes each record (a memoryview
    takes that path): IPv6 hosts, compressed bodies, any properties, the queue bounds appended."""
    buf = b"".join(
        bytes(
            encode_record(
                topic=topic,
                body=zlib.compress(body) if packed else body,
                properties=props,
                queue_offset=i,
                sys_flag=SYSFLAG_COMPRESSED if packed else 0,
                born_host=born,
                store_host=store,
            )
        )
        for i, (body, packed, born, store, props, topic) in enumerate(recs)
    )
    fast = decode_records(buf, decompress=decompress, lazy=True, extra_props=extra)
    slow = decode_records(memoryview(buf), decompress=decompress, lazy=True, extra_props=extra)
    assert fast == slow
    assert [m.body for m in fast] == [b if decompress or not p else zlib.compress(b) for b, p, *_ in recs]
    assert [(m.tags, m.msg_id) for m in fast] == [(m.tags, m.msg_id) for m in slow]
    assert [(m.topic, m.born_host, m.store_host) for m in fast] == [(t, b, s) for _b, _p, b, s, _d, t in recs]


@pytest.mark.parametrize("field", ["topic", "properties"])
def test_undecodable_text_after_a_good_record_is_refused_like_a_record(field: str) -> None:
    """The second record's topic (same length as the first's) or properties are not UTF-8."""
    good = bytes(encode_record(topic="TA", body=b"x", properties="a\x011\x02"))
    bad = bytearray(encode_record(topic="TA", body=b"x", properties="a\x011\x02"))
    bad[-7 if field == "topic" else -2] = 0xFF
    buf = good + bytes(bad)
    with pytest.raises(RecordError, match="undecodable") as fast:
        decode_records(buf, lazy=True)
    with pytest.raises(RecordError) as slow:
        decode_records(memoryview(buf), lazy=True)
    assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("cut", [1, 2, 3, 10, 40, 89, 95])
def test_a_truncated_pull_body_is_refused_like_a_record(cut: int) -> None:
    buf = records(PROPS, 2)
    with pytest.raises(RecordError) as fast:
        decode_records(buf[:-cut], lazy=True)
    with pytest.raises(RecordError) as slow:
        decode_records(memoryview(buf[:-cut]), lazy=True)
    assert str(fast.value) == str(slow.value)
