"""spark_connector.property_columns: the uniform path (one layout, rows as a byte matrix) gives exactly the general
bulk split's columns whenever it applies, and declines every batch it cannot read as one layout."""

from __future__ import annotations

import pytest

pytest.importorskip("pyarrow")

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_connector.property_columns import PropertyColumns, columns, split_columns, uniform_columns


def _texts(rows: list[bytes], view: bool = True) -> pa.Array:
    arr = pa.array(rows, pa.binary())
    return arr.cast(pa.binary_view()) if view else arr


def _same(a: PropertyColumns, b: PropertyColumns) -> None:
    for name in ("keys", "tags", "msg_id", "properties"):
        x, y = getattr(a, name), getattr(b, name)
        if x is None or y is None:
            assert x is y is None
            continue
        x.validate(full=True)
        assert x.type == y.type and x.to_pylist() == y.to_pylist(), name


def _uniq(i: int) -> bytes:
    return f"7F0000010A2B18B4AAC2{i:012X}".encode()


UNIFORM = [
    # one producer's messages: constant TAGS/WAIT, fixed-width UNIQ_KEY
    [b"TAGS\x01bench\x02UNIQ_KEY\x01" + _uniq(i) + b"\x02WAIT\x01true\x02" for i in range(50)],
    # fixed-width KEYS that vary, MIN/MAX_OFFSET (never in the map), a duplicate name (the last one wins)
    [b"KEYS\x01k%03d\x02MIN_OFFSET\x010\x02TAGS\x01a\x02TAGS\x01b\x02x\x01%03d" % (i, i) for i in range(30)],
    # empty values read as null in the columns and "" in the map; an empty name; a value holding \x01
    [b"TAGS\x01\x02UNIQ_KEY\x01\x02\x01e\x02p\x01v\x01w%d" % (i % 10) for i in range(12)],
    # non-ASCII in the constant bytes; no trailing separator; a piece without \x01 (dropped)
    ["név\x01értek\x02junk\x02UNIQ_KEY\x01{}".format("ab"[i % 2]).encode() for i in range(9)],
    # one row; rows all equal
    [b"TAGS\x01t\x02a\x01b"],
    [b"KEYS\x01same\x02"] * 5,
]


@pytest.mark.parametrize("rows", UNIFORM)
@pytest.mark.parametrize("include_properties", [True, False])
@pytest.mark.parametrize("view", [True, False])
def test_uniform_path_matches_the_split(rows: list[bytes], include_properties: bool, view: bool) -> None:
    props = _texts(rows, view)
    got = uniform_columns(props, include_properties)
    assert got is not None
    _same(got, split_columns(props, include_properties))


def test_sliced_input() -> None:
    rows = [b"long\x01prefix row\x02"] + [b"TAGS\x01x\x02UNIQ_KEY\x01%04d" % i for i in range(8)]
    props = _texts(rows).slice(1)
    got = uniform_columns(props, True)
    assert got is not None and got.msg_id.to_pylist() == [f"{i:04d}" for i in range(8)]
    _same(got, split_columns(props, True))


DECLINED = [
    [b"TAGS\x01a\x02", b"TAGS\x01bb\x02"],  # lengths differ
    [b"a\x01b\x02c\x01d", b"a\x01b\x02c\x02d"],  # a separator moves
    [b"a\x01bc", b"a\x01\x01c"],  # a value gains a \x01
    ["k\x01é".encode(), "k\x01ü".encode()],  # a multi-byte character varies
    [b"ab\x01v", b"ac\x01v"],  # a name varies
    [b"k\x01\xff", b"k\x01\xff"],  # not UTF-8: the split raises for it
    [b"", b""],  # empty texts
    [],
]


@pytest.mark.parametrize("rows", DECLINED)
def test_other_batches_take_the_split(rows: list[bytes]) -> None:
    props = _texts(rows)
    assert uniform_columns(props, True) is None
    if rows and rows[0] == b"k\x01\xff":
        with pytest.raises(pa.ArrowInvalid):
            columns(props, True)
        return
    _same(columns(props, True), split_columns(props, True))


_byte_text = st.lists(st.sampled_from([b"\x01", b"\x02", b"a", b"b", b"TAGS", b"KEYS", b"UNIQ_KEY", "é".encode()]))


@settings(max_examples=300, deadline=None)
@given(
    base=_byte_text.map(b"".join),
    changes=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(b"\x01\x02xyz\xc3")), max_size=4),
    n=st.integers(1, 6),
)
def test_whatever_the_bytes_both_paths_agree(base: bytes, changes: list[tuple[int, int]], n: int) -> None:
    rows = []
    for r in range(n):
        row = bytearray(base)
        for at, byte in changes[: r % (len(changes) + 1)]:
            if at < len(row):
                row[at] = byte
        rows.append(bytes(row))
    props = _texts(rows)
    try:
        want = split_columns(props, True)
    except pa.ArrowInvalid:  # not UTF-8: the uniform path must not accept it either
        assert uniform_columns(props, True) is None
        return
    got = uniform_columns(props, True)
    if got is not None:
        _same(got, want)
