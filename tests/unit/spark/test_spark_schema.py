"""The fixed read schema and the Arrow batch builder match what Spark's Python worker checks (no SparkSession)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema

from spark_connector import property_columns
from spark_connector.property_columns import split_properties
from spark_connector.records import RecordArrays, decode_records
from spark_connector.schema import arrow_schema, columns_to_batch, read_schema


@pytest.mark.parametrize("include_properties", [True, False])
def test_arrow_schema_is_what_spark_expects(include_properties: bool) -> None:
    expected = to_arrow_schema(read_schema(include_properties), timezone="UTC")
    assert arrow_schema(include_properties).equals(expected)


def test_schema_columns() -> None:
    assert read_schema().fieldNames() == [
        "topic",
        "brokerName",
        "queueId",
        "queueOffset",
        "msgId",
        "keys",
        "tags",
        "body",
        "properties",
        "bornTimestamp",
        "storeTimestamp",
        "bornHost",
        "reconsumeTimes",
    ]
    assert "properties" not in read_schema(False).fieldNames()


def _columns() -> RecordArrays:
    from protocol.record import encode_record

    records = []
    for i in range(4):
        props = {"KEYS": f"k{i}", "TAGS": "tagA" if i != 1 else "tagB", "UNIQ_KEY": f"u{i}", "a": "b"}
        if i == 2:
            props = {}
        records.append(
            bytes(
                encode_record(
                    topic="t",
                    body=b"x" * i,
                    properties=props,
                    queue_id=1,
                    queue_offset=10 + i,
                    born_timestamp=1_700_000_000_123,
                    born_host=("127.0.0.1", 5555),
                    store_timestamp=1_700_000_000_456,
                )
            )
        )
    return decode_records(b"".join(records))


@pytest.mark.parametrize("include_properties", [True, False])
def test_columns_to_batch(include_properties: bool) -> None:
    batch = columns_to_batch(
        _columns(), topic="t", broker="broker-a", queue_id=1, include_properties=include_properties
    )
    assert batch.schema.equals(arrow_schema(include_properties))
    rows = batch.to_pylist()
    assert [r["queueOffset"] for r in rows] == [10, 11, 12, 13]
    assert {r["topic"] for r in rows} == {"t"} and {r["brokerName"] for r in rows} == {"broker-a"}
    assert {r["queueId"] for r in rows} == {1}
    assert rows[0]["keys"] == "k0" and rows[0]["tags"] == "tagA" and rows[0]["msgId"] == "u0"
    assert rows[2]["keys"] is None and rows[2]["tags"] is None and rows[2]["msgId"]
    assert rows[1]["body"] == b"x" and rows[0]["bornHost"] == "127.0.0.1:5555"
    assert rows[0]["storeTimestamp"].timestamp() == pytest.approx(1_700_000_000.456)
    if include_properties:
        assert dict(rows[0]["properties"]) == {"UNIQ_KEY": "u0", "a": "b"}
        assert rows[2]["properties"] == []


def test_tag_filter_drops_other_tags() -> None:
    batch = columns_to_batch(_columns(), topic="t", broker="b", queue_id=1, tags_filter=frozenset({"tagA"}))
    assert batch.column("queueOffset").to_pylist() == [10, 13]


def _split_by_python(texts: list[bytes]) -> list[tuple[int, str, str]]:
    """The rule split_properties implements, written out per row: pieces at \\x02, kept when they hold \\x01."""
    out = []
    for row, text in enumerate(texts):
        for piece in text.decode().split("\x02"):
            if "\x01" in piece:
                name, value = piece.split("\x01", 1)
                out.append((row, name, value))
    return out


@pytest.mark.parametrize(
    "texts",
    [
        [b"TAGS\x01a\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01id\x02", b"", b"A\x01\x02B\x01x\x01y"],
        [b"", b"", b""],
        [b"no separators", b"\x02\x02", b"\x01", b"\x01\x02", b"\x02v\x01"],
        ["név\x01értek\x02ü\x01ö".encode(), b"last\x01piece without a trailing separator"],
        [b"a\x01b"],
        [],
    ],
)
@pytest.mark.parametrize("sliced", [False, True])
def test_split_properties_matches_the_per_row_rule(texts: list[bytes], sliced: bool) -> None:
    arr = pa.array([b"x\x01y\x02", *texts], pa.binary()).cast(pa.binary_view())
    if sliced:  # an array that starts past the first row of its buffers, as a concatenated batch's part may
        arr, expected = arr.slice(1), _split_by_python(texts)
    else:
        expected = _split_by_python([b"x\x01y\x02", *texts])
    parents, names, values = split_properties(arr)
    assert list(zip(parents.tolist(), names.to_pylist(), values.to_pylist(), strict=True)) == expected


def test_split_properties_rejects_invalid_utf8() -> None:
    with pytest.raises(pa.ArrowInvalid):
        split_properties(pa.array([b"a\x01\xff\x02"], pa.binary()))


def test_one_layout_batch_rows() -> None:
    """A batch whose properties share one layout (the uniform path): odd characters, empty values, binary bodies
    holding the separators, no UNIQ_KEY on any row (the offset message id)."""
    from protocol.record import encode_record

    records = [
        bytes(
            encode_record(
                topic="t",
                body=bytes([1, 2, 0, 255, i]) * 3,
                properties={"TAGS": "tâg", "KEYS": f"k {i:02d}", "empty": "", "név": f"v\x01{i % 10}"},
                queue_id=1,
                queue_offset=100 + i,
                physical_offset=5000 + i,
                born_host=("10.0.0.1", 7),
                store_host=("10.0.0.2", 10911),
            )
        )
        for i in range(12)
    ]
    cols = decode_records(b"".join(records))
    assert property_columns.uniform_columns(cols.properties, True) is not None
    rows = columns_to_batch(cols, topic="t", broker="b", queue_id=1).to_pylist()
    assert [r["body"] for r in rows] == [bytes([1, 2, 0, 255, i]) * 3 for i in range(12)]
    assert [r["keys"] for r in rows] == [f"k {i:02d}" for i in range(12)]
    assert {r["tags"] for r in rows} == {"tâg"}
    assert [dict(r["properties"]) for r in rows] == [{"empty": "", "név": f"v\x01{i % 10}"} for i in range(12)]
    assert [r["msgId"] for r in rows] == [cols.offset_msg_id(i) for i in range(12)]
    assert len({r["msgId"] for r in rows}) == 12
