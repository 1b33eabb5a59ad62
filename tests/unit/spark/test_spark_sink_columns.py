"""The sink's columnar path: properties texts built per Arrow batch, rows cut into send batches per topic, the same
checks as the row path; and which inputs take it."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType

from spark_connector.options import parse_sink_options
from spark_connector.sink import SinkColumns
from spark_connector.sink_columns import columnar, text_batches

OPTS = {"namesrvaddr": "h:1", "sendbatchmaxmessages": "3", "sendbatchmaxbytes": "1000"}


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
    out = list(text_batches(iter([rb]), cols, opts))  # type: ignore[arg-type]
    by_topic = [(t, [body for body, _ in items]) for t, items in out]
    # per topic in row order, at most 3 rows and ~1000 bytes (64 counted per row) a batch
    assert by_topic == [("a", [b"0", b"2"]), ("a", [b"3" * 900]), ("a", [b"4"]), ("b", [b"1", b"5"])]
    texts = {body: text for _, items in out for body, text in items}
    assert texts[b"0"] == "TAGS\x01T1\x02KEYS\x01k1 k2\x02WAIT\x01true\x02"
    assert texts[b"1"] == "KEYS\x01k\x02WAIT\x01true\x02"
    assert texts[b"2"] == "WAIT\x01true\x02"  # empty tags, null keys: left out
    assert texts[b"4"] == "TAGS\x01T3\x02WAIT\x01true\x02"  # empty keys: left out


def test_string_bodies_topic_option_and_errors() -> None:
    cols, opts = _cols(StructType([StructField("body", StringType())]), topic="t")
    rb = pa.RecordBatch.from_arrays([pa.array(["é", "b"])], names=["body"])
    assert list(text_batches(iter([rb]), cols, opts)) == [  # type: ignore[arg-type]
        ("t", [("é".encode(), "WAIT\x01true\x02"), (b"b", "WAIT\x01true\x02")])
    ]
    bad = pa.RecordBatch.from_arrays([pa.array(["a", None])], names=["body"])
    with pytest.raises(ValueError, match="row 3 of this task has a null 'body'"):
        list(text_batches(iter([rb, bad]), cols, opts))  # type: ignore[arg-type]
    cols, opts = _cols(StructType([StructField("topic", StringType()), StructField("body", StringType())]))
    rb = pa.RecordBatch.from_arrays([pa.array(["t", ""]), pa.array(["a", "b"])], names=["topic", "body"])
    with pytest.raises(ValueError, match="row 1 of this task has no topic"):
        list(text_batches(iter([rb]), cols, opts))  # type: ignore[arg-type]


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
