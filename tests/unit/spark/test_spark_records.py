"""spark_connector.records (numpy/Arrow gathers) against client.bulk.decode_columns (the per-record decoder), on
records encoded by protocol's encoder: IPv4 records take the gather path, IPv6 or compressed ones the fallback."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

from client.bulk import RecordColumns, RecordError, decode_columns
from protocol.record import MAGIC_V2, SYSFLAG_COMPRESSED, encode_record
from spark_connector.records import RecordArrays, _spans, concat, decode_records


def _record(i: int, *, born: tuple[str, int] = ("10.0.0.7", 40868), compressed: bool = False) -> bytes:
    props = {"TAGS": f"t{i % 2}", "KEYS": f"k{i}", "p": "v é"}
    if i % 3:
        props["UNIQ_KEY"] = f"UNIQ{i:04d}"
    body = f"body-{i}".encode() * (i + 1)
    flag = 0
    if compressed:
        body, flag = zlib.compress(body), SYSFLAG_COMPRESSED
    return bytes(
        encode_record(
            topic="topic-" + "x" * i,
            body=body if i != 2 else b"",
            properties=props,
            queue_id=1,
            queue_offset=10 + i,
            physical_offset=1000 * i,
            sys_flag=flag,
            born_timestamp=1_700_000_000_000 + i,
            born_host=born if i != 4 else ("10.0.0.8", 1),
            store_timestamp=1_700_000_000_500 + i,
            store_host=("10.0.0.1", 10911),
            reconsume_times=i,
        )
    )


def _same(got: RecordArrays, want: RecordColumns) -> None:
    got.body.validate(full=True)  # binary views: inline values (up to 12 bytes) zero-padded, longer ones prefixed
    got.properties.validate(full=True)
    assert got.queue_offset.tolist() == want.queue_offset
    assert got.commit_log_offset.tolist() == want.commit_log_offset
    assert got.body.to_pylist() == want.body
    assert got.properties.to_pylist() == want.properties
    assert got.born_timestamp.tolist() == want.born_timestamp
    assert got.store_timestamp.tolist() == want.store_timestamp
    assert got.born_host.to_pylist() == want.born_host
    assert list(zip(got.store_ip.to_pylist(), got.store_port.tolist(), strict=True)) == want.store_host
    assert got.reconsume_times.tolist() == want.reconsume_times
    assert [got.offset_msg_id(i) for i in range(len(got))] == [want.offset_msg_id(i) for i in range(len(want))]


def test_gathered_columns_match_the_record_decoder() -> None:
    buf = b"".join(_record(i) for i in range(8))
    _same(decode_records(buf), decode_columns(buf))


def test_offset_bounds() -> None:
    buf = b"".join(_record(i) for i in range(8))  # queue offsets 10..17
    got = decode_records(buf, min_offset=12, end_offset=15)
    assert got.queue_offset.tolist() == [12, 13, 14]
    _same(got, decode_columns(buf, min_offset=12, end_offset=15))
    assert len(decode_records(buf, min_offset=18)) == 0 and len(decode_records(b"")) == 0


@pytest.mark.parametrize("odd", ["ipv6", "compressed"])
def test_ipv6_hosts_and_compressed_bodies_take_the_reference_decoder(odd: str) -> None:
    special = _record(5, born=("::1", 5)) if odd == "ipv6" else _record(5, compressed=True)
    buf = b"".join([_record(0), special, _record(6)])
    got = decode_records(buf)
    _same(got, decode_columns(buf))
    assert got.body.to_pylist()[1] == b"body-5" * 6


def test_magic_v2_two_byte_topic_length() -> None:
    rec = bytearray(_record(3))
    # V2: the topic length is an int16, one byte longer than V1's int8; rebuild the tail and the total size.
    body_end = 88 + int.from_bytes(rec[84:88], "big")
    tlen = rec[body_end]
    tail = rec[body_end + 1 :]
    v2 = rec[:body_end] + tlen.to_bytes(2, "big") + tail
    v2[0:4] = len(v2).to_bytes(4, "big")
    v2[4:8] = MAGIC_V2.to_bytes(4, "big", signed=True)
    _same(decode_records(bytes(v2)), decode_columns(bytes(v2)))


def test_bad_lengths_raise() -> None:
    rec = bytearray(_record(3))
    rec[84:88] = (10_000).to_bytes(4, "big")  # a body longer than the record
    with pytest.raises(RecordError):
        decode_records(bytes(rec))
    with pytest.raises(RecordError):
        decode_records(_record(3)[:-5])


def test_concat_keeps_order() -> None:
    a, b = decode_records(_record(0) + _record(1)), decode_records(_record(5, born=("::1", 5)))
    both = concat([a, b])
    assert both.queue_offset.tolist() == [10, 11, 15]
    assert both.born_host.to_pylist() == ["10.0.0.7:40868", "10.0.0.7:40868", "[::1]:5"]
    assert isinstance(both.store_port, np.ndarray) and len(concat([])) == 0


@settings(max_examples=300, deadline=None)
@given(data=st.data(), buf=st.binary(min_size=0, max_size=64))
def test_spans_are_the_slices_they_name(data: st.DataObject, buf: bytes) -> None:
    """Any spans of a buffer (empty, up to 12 bytes inline, longer, ending at the buffer's end, shorter than 12
    bytes) read back as the slices, as valid binary views."""
    cuts = data.draw(st.lists(st.tuples(st.integers(0, len(buf)), st.integers(0, len(buf))), max_size=12))
    spans = [(min(a, b), max(a, b)) for a, b in cuts] + [(len(buf), len(buf))]
    begin = np.array([a for a, _ in spans], np.int64)
    end = np.array([b for _, b in spans], np.int64)
    got = _spans(buf, begin, end)
    got.validate(full=True)
    assert got.to_pylist() == [buf[a:b] for a, b in spans]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), buf=st.binary(min_size=13, max_size=200))
def test_long_spans_are_the_slices_they_name(data: st.DataObject, buf: bytes) -> None:
    """Spans all longer than 12 bytes (bodies, properties: the fast path of :func:`_spans`), up to the buffer's end,
    read back as the slices and equal what the general path builds for them."""
    n = data.draw(st.integers(1, 12))
    starts = data.draw(st.lists(st.integers(0, len(buf) - 13), min_size=n, max_size=n))
    spans = [(a, data.draw(st.integers(a + 13, len(buf)))) for a in starts]
    begin = np.array([a for a, _ in spans], np.int64)
    end = np.array([b for _, b in spans], np.int64)
    got = _spans(buf, begin, end)
    got.validate(full=True)
    assert got.to_pylist() == [buf[a:b] for a, b in spans]
    general = _spans(buf, np.append(begin, 0), np.append(end, 0)).slice(0, n)  # one empty span: the general path
    assert got.buffers()[1].to_pybytes() == general.buffers()[1].to_pybytes()[: 16 * n]
