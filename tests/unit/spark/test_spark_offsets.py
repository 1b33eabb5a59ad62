"""Offset JSON of the rocketmq Spark source: canonical text, round trips and rejected shapes (no Spark)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_connector.offsets import (
    EARLIEST,
    OffsetFormatError,
    QueueKey,
    dumps,
    from_json_dict,
    loads,
    to_json_dict,
    total_between,
)

names = st.text(alphabet="abcdefgXYZ0123456789_-%|", min_size=1, max_size=8)
offset_maps = st.dictionaries(st.builds(QueueKey, names, names, st.integers(0, 64)), st.integers(0, 2**62), max_size=20)


@given(offset_maps)
def test_round_trip_and_canonical_text(m: dict[QueueKey, int]) -> None:
    nested = to_json_dict(m)
    assert from_json_dict(nested) == m
    # Spark compares offsets by json.dumps(offset) without sort_keys: the text must already be sorted.
    assert json.dumps(nested) == json.dumps(nested, sort_keys=True)
    assert loads(dumps(m)) == m


@given(offset_maps)
def test_insertion_order_does_not_change_the_text(m: dict[QueueKey, int]) -> None:
    reversed_map = dict(reversed(list(m.items())))
    assert json.dumps(to_json_dict(reversed_map)) == json.dumps(to_json_dict(m))


def test_shape() -> None:
    m = {QueueKey("t", "broker-a", 10): 5, QueueKey("t", "broker-a", 2): 7, QueueKey("s", "broker-b", 0): 1}
    assert dumps(m) == '{"s":{"broker-b":{"0":1}},"t":{"broker-a":{"10":5,"2":7}}}'


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[1]", "expected a JSON object"),
        ('{"t": 3}', "must map broker names"),
        ('{"t": {"b": 3}}', "must map queue ids"),
        ('{"t": {"b": {"x": 3}}}', "is not a number"),
        ('{"t": {"b": {"0": "3"}}}', "must be an integer"),
        ('{"t": {"b": {"0": true}}}', "must be an integer"),
        ('{"t": {"b": {"0": -1}}}', "not allowed"),
        ('{"t": ', "not valid JSON"),
    ],
)
def test_bad_shapes_name_the_option(text: str, needle: str) -> None:
    with pytest.raises(OffsetFormatError, match=needle) as info:
        loads(text, what="option 'startingOffsets'")
    assert "startingOffsets" in str(info.value)


def test_sentinels_allowed_when_asked() -> None:
    assert loads('{"t": {"b": {"0": -2, "1": -1}}}', min_value=EARLIEST) == {
        QueueKey("t", "b", 0): -2,
        QueueKey("t", "b", 1): -1,
    }


def test_total_between_counts_new_queues_from_zero() -> None:
    a, b = QueueKey("t", "b", 0), QueueKey("t", "b", 1)
    assert total_between({a: 5}, {a: 8, b: 4}) == 3 + 4
    assert total_between({a: 9}, {a: 8}) == 0
