"""The sink's columnar path: SEND_BATCH_MESSAGE bodies built per Arrow batch (decoded back here with the broker's own
decoder), rows cut into send batches per topic, fresh unique ids, the same checks as the row path; and which inputs
take it."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType

from protocol.batch import decode_batch
from spark_connector.options import parse_sink_options
from spark_connector.sink import SinkColumns
from spark_connector.sink_columns import EncodedBatch, columnar, encoded_batches

OPTS = {"namesrvaddr": "h:1", "sendbatchmaxmessages": "3", "sendbatchmaxbytes": "1000"}


def _rows(batch: EncodedBatch) -> list[tuple[bytes, str]]:
    """(body, properties text without the id) of each row of a send; checks each row has a fresh 32-char id."""
    if batch.single is not None:
        assert batch.count == 1 and not batch.payload
        return [batch.single]
    items = decode_batch(batch.payload)
    assert len(items) == batch.count >= 2
    ids = batch.msg_ids.split(",")
    out = []
    for item, msg_id in zip(items, ids, strict=True):
        text, uniq = item.text.split("UNIQ_KEY\x01")
        assert uniq == msg_id + "\x02" and len(msg_id) == 32 and item.flag == 0
        out.append((item.body, text))
    return out


def _cols(schema: StructType, **options: str) -> tuple[SinkColumns, object]:
    opts = parse_sink_options({**OPTS, **options})
    return SinkColumns.from_schema(schema, opts), opts


def test_texts_sizes_and_topics() -> None:
    schema = StructType(
        [StructField(n, StringType()) for n in ("topic", "tags", "keys")] + [StructField("body", BinaryType())]
    )
    cols, opts = _cols(schema)
    assert columnar(cols)
    rb = pa.RecordBatch.from_arrays(
        [
            pa.array(["a", "b", "a", "a", "a", "b"]),
            pa.array(["T1", None, "", "T2", "T3", "T4"]),
            pa.array(["k1 k2", "k", None, None, "", "x"]),
            pa.array([b"0", b"1", b"2", b"3" * 900, b"4", b"5"]),
        ],
        names=["topic", "tags", "keys", "body"],
    )
    out = list(encoded_batches(iter([rb]), cols, opts))  # type: ignore[arg-type]
    by_topic = [(b.topic, [body for body, _ in _rows(b)]) for b in out]
    # per topic in row order, at most 3 rows and ~1000 bytes (64 counted per row) a batch
    assert by_topic == [("a", [b"0", b"2"]), ("a", [b"3" * 900]), ("a", [b"4"]), ("b", [b"1", b"5"])]
    texts = {body: text for b in out for body, text in _rows(b)}
    ids = [i for b in out if b.single is None for i in b.msg_ids.split(",")]
    assert len(ids) == len(set(ids)) == 4
    assert texts[b"0"] == "TAGS\x01T1\x02KEYS\x01k1 k2\x02WAIT\x01true\x02"
    assert texts[b"1"] == "KEYS\x01k\x02WAIT\x01true\x02"
    assert texts[b"2"] == "WAIT\x01true\x02"  # empty tags, null keys: left out
    assert texts[b"4"] == "TAGS\x01T3\x02WAIT\x01true\x02"  # empty keys: left out


def test_string_bodies_topic_option_and_errors() -> None:
    cols, opts = _cols(StructType([StructField("body", StringType())]), topic="t")
    rb = pa.RecordBatch.from_arrays([pa.array(["é", "b"])], names=["body"])
    [out] = encoded_batches(iter([rb]), cols, opts)  # type: ignore[arg-type]
    assert (out.topic, _rows(out)) == ("t", [("é".encode(), "WAIT\x01true\x02"), (b"b", "WAIT\x01true\x02")])
    bad = pa.RecordBatch.from_arrays([pa.array(["a", None])], names=["body"])
    with pytest.raises(ValueError, match="row 3 of this task has a null 'body'"):
        list(encoded_batches(iter([rb, bad]), cols, opts))  # type: ignore[arg-type]
    empty = pa.RecordBatch.from_arrays([pa.array(["a", ""])], names=["body"])
    with pytest.raises(ValueError, match="row 1 of this task has an empty 'body'"):
        list(encoded_batches(iter([empty]), cols, opts))  # type: ignore[arg-type]
    cols, opts = _cols(StructType([StructField("topic", StringType()), StructField("body", StringType())]))
    rb = pa.RecordBatch.from_arrays([pa.array(["t", ""]), pa.array(["a", "b"])], names=["topic", "body"])
    with pytest.raises(ValueError, match="row 1 of this task has no topic"):
        list(encoded_batches(iter([rb]), cols, opts))  # type: ignore[arg-type]


def test_properties_over_the_int16_limit_are_refused() -> None:
    cols, opts = _cols(StructType([StructField("body", BinaryType()), StructField("tags", StringType())]), topic="t")
    rb = pa.RecordBatch.from_arrays([pa.array([b"a", b"b"]), pa.array(["x", "y" * 40_000])], names=["body", "tags"])
    with pytest.raises(ValueError, match=r"properties of row 1 .* RocketMQ allows 32767"):
        list(encoded_batches(iter([rb]), cols, opts))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "extra",
    [
        StructField("queueId", IntegerType()),
        StructField("keys", ArrayType(StringType())),
    ],
)
def test_pinned_rows_and_key_lists_take_the_row_path(extra: StructField) -> None:
    cols, _ = _cols(StructType([StructField("body", BinaryType()), extra]), topic="t")
    assert not columnar(cols)
