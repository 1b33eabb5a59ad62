"""client.bulk.decode_columns against protocol's record decoder, on records encoded by protocol's encoder."""

from __future__ import annotations

import zlib

import pytest

from client.bulk import decode_columns
from protocol.record import SYSFLAG_COMPRESSED, encode_record
from protocol.record_decode import decode_records


def _records() -> bytes:
    parts = []
    for i in range(6):
        props = {"TAGS": f"t{i % 2}", "KEYS": f"k{i}", "p": "v"}
        if i != 3:  # one message without a producer id: msgId falls back to the offset id
            props["UNIQ_KEY"] = f"UNIQ{i:04d}"
        body = f"body-{i}".encode() * (i + 1)
        flag = 0
        if i == 4:
            body, flag = zlib.compress(body), SYSFLAG_COMPRESSED
        parts.append(
            encode_record(
                topic="t",
                body=body,
                properties=props,
                queue_id=1,
                queue_offset=10 + i,
                physical_offset=1000 * i,
                sys_flag=flag,
                born_timestamp=1_700_000_000_000 + i,
                born_host=("10.0.0.7", 40868) if i != 5 else ("::1", 5),
                store_timestamp=1_700_000_000_500 + i,
                store_host=("10.0.0.1", 10911),
                reconsume_times=i,
            )
        )
    return b"".join(bytes(p) for p in parts)


def test_columns_match_the_record_decoder() -> None:
    buf = _records()
    cols = decode_columns(buf)
    msgs = decode_records(buf, decompress=True)
    assert cols.queue_offset == [m.queue_offset for m in msgs]
    assert cols.msg_ids() == [m.msg_id for m in msgs]
    assert cols.body == [m.body for m in msgs]
    assert cols.born_timestamp == [m.born_timestamp for m in msgs]
    assert cols.store_timestamp == [m.store_timestamp for m in msgs]
    assert cols.reconsume_times == [m.reconsume_times for m in msgs]
    assert cols.born_host[0] == "10.0.0.7:40868"  # ip:port, never a tuple's repr
    assert cols.born_host[5] == "[::1]:5"
    assert cols.msg_ids()[3] == msgs[3].offset_msg_id == cols.offset_msg_id(3)


def test_offset_bounds_and_appending() -> None:
    buf = _records()
    cols = decode_columns(buf, min_offset=12, end_offset=14)
    assert cols.queue_offset == [12, 13]
    decode_columns(buf, cols, min_offset=14)
    assert cols.queue_offset == [12, 13, 14, 15]


def test_a_truncated_body_raises() -> None:
    from protocol.record import RecordError

    with pytest.raises(RecordError):
        decode_columns(_records()[:-5])
