"""The fixed read schema and the Arrow batch builder match what Spark's Python worker checks (no SparkSession)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from pyspark.sql.pandas.types import to_arrow_schema

from spark_connector.schema import BatchBuilder, arrow_schema, read_schema


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


@pytest.mark.parametrize("include_properties", [True, False])
def test_builder(include_properties: bool) -> None:
    b = BatchBuilder(include_properties=include_properties)
    for i in range(3):
        props = {"KEYS": f"k{i}", "TAGS": "tagA", "MIN_OFFSET": "0", "MAX_OFFSET": "9", "UNIQ_KEY": f"u{i}", "a": "b"}
        if i == 2:
            props = {}
        b.add(
            topic="t",
            broker="broker-a",
            queue_id=1,
            queue_offset=10 + i,
            msg_id=f"u{i}",
            body=b"x" * i,
            properties=props,
            born_timestamp_ms=1_700_000_000_123,
            store_timestamp_ms=1_700_000_000_456,
            born_host="127.0.0.1:5555",
            reconsume_times=0,
        )
    assert len(b) == 3
    batch = b.flush()
    assert len(b) == 0
    assert batch.schema.equals(arrow_schema(include_properties))
    rows = batch.to_pylist()
    assert [r["queueOffset"] for r in rows] == [10, 11, 12]
    assert rows[0]["keys"] == "k0" and rows[0]["tags"] == "tagA"
    assert rows[2]["keys"] is None and rows[2]["tags"] is None
    assert rows[1]["body"] == b"x"
    assert rows[0]["storeTimestamp"].timestamp() == pytest.approx(1_700_000_000.456)
    if include_properties:
        assert dict(rows[0]["properties"]) == {"UNIQ_KEY": "u0", "a": "b"}
        assert rows[2]["properties"] == []
