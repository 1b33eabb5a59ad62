"""The source's property-derived columns (``keys``, ``tags``, the ``UNIQ_KEY`` for ``msgId``, the ``properties`` map)
from a batch's raw properties texts, two ways with one result.

RocketMQ's properties text is ``name\x01value\x02``... (:data:`spark_connector.schema.PROPERTY_SEPARATOR` and
:data:`~spark_connector.schema.NAME_VALUE_SEPARATOR`). The rule, per row: split at each ``\x02``; a piece without
``\x01`` is dropped; the name ends at the first ``\x01`` (the value may hold more). ``keys``/``tags``/``UNIQ_KEY``
read the last piece of that name, "" or absent as null; the map holds the other pieces in order.

* :func:`uniform_columns`: when every row's text has one length and one layout — the same names and separators at
  the same bytes, only value bytes differing (one producer's messages: ``TAGS``, a fixed-width ``UNIQ_KEY``,
  ``WAIT``...) — row 0 is split once in Python and every column is a slice of the rows laid as an ``n x length``
  byte matrix (numpy), checked in one pass: no separator and no byte past ASCII in a byte that varies, so every row
  splits as row 0 does and is UTF-8 as row 0 is. Returns ``None`` for any other batch.
* :func:`split_columns`: any batch, through :func:`spark_connector.schema.split_properties`' bulk split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"
# Properties broken out into columns, or that change from pull to pull (the Java client adds MIN/MAX_OFFSET), so
# that a replayed range yields the same rows: never in the map.
BROKEN_OUT_PROPERTIES = frozenset({"KEYS", "TAGS", "MIN_OFFSET", "MAX_OFFSET"})
# The properties the columns read, looked up once per piece (pyarrow.compute.index_in); codes are indexes here.
_LOOKED_UP_NAMES = ("KEYS", "TAGS", "UNIQ_KEY", *sorted(BROKEN_OUT_PROPERTIES - {"KEYS", "TAGS"}))
_LOOKED_UP = pa.array(_LOOKED_UP_NAMES, pa.string())
_LOOKED_UP_CODE = {name: i for i, name in enumerate(_LOOKED_UP_NAMES)}
_BROKEN_OUT_CODES = np.array([_LOOKED_UP_CODE[name] for name in sorted(BROKEN_OUT_PROPERTIES)])
_SEPARATORS = (ord(NAME_VALUE_SEPARATOR), ord(PROPERTY_SEPARATOR))


@dataclass(frozen=True, slots=True)
class PropertyColumns:
    """The columns read from the properties (``msg_id`` is the ``UNIQ_KEY``, null where the row has none)."""

    keys: pa.Array
    tags: pa.Array
    msg_id: pa.Array
    properties: pa.Array | None  # map<string,string>; None when not asked for


def columns(props: pa.Array, include_properties: bool) -> PropertyColumns:
    """The property columns of ``props`` (binary or binary_view texts), by the uniform path when it applies."""
    return uniform_columns(props, include_properties) or split_columns(props, include_properties)


def split_columns(props: pa.Array, include_properties: bool) -> PropertyColumns:
    """Any batch: every piece split in bulk (numpy over the bytes), the looked-up names found with one hash look-up
    per piece; nothing per message in Python."""
    n = len(props)
    parents_np, names, values = split_properties(props)
    codes = pc.fill_null(pc.index_in(names, value_set=_LOOKED_UP), -1).to_numpy()
    value_offsets = np.frombuffer(values.buffers()[1], np.int32, len(values) + 1, values.offset * 4)
    empty = value_offsets[1:] == value_offsets[:-1]

    def column(name: str) -> pa.Array:
        """The value of property ``name`` per row ("" and absent read as null; the last one wins)."""
        hit = np.flatnonzero(codes == _LOOKED_UP_CODE[name])
        idx = np.full(n, -1, dtype=np.int64)
        idx[parents_np[hit]] = np.where(empty[hit], -1, hit)
        return values.take(pa.array(idx, mask=idx < 0))

    mapped = None
    if include_properties:
        keep = ~np.isin(codes, _BROKEN_OUT_CODES)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(parents_np[keep], minlength=n), out=offsets[1:])
        if keep.all():
            mapped = pa.MapArray.from_arrays(pa.array(offsets), names, values)
        else:
            kept = pa.array(keep)
            mapped = pa.MapArray.from_arrays(pa.array(offsets), names.filter(kept), values.filter(kept))
    return PropertyColumns(column("KEYS"), column("TAGS"), column("UNIQ_KEY"), mapped)


_NAME_VALUE = ord(NAME_VALUE_SEPARATOR)
_PROPERTY = ord(PROPERTY_SEPARATOR)


def split_properties(props: pa.Array) -> tuple[np.ndarray, pa.Array, pa.Array]:
    """Every ``name\x01value`` piece of every row's properties text, as (row index, name, value) arrays in row
    order: a row's text is split at each ``\x02`` (its last piece runs to the row's end), a piece without ``\x01``
    is dropped, and the name ends at the first ``\x01`` (the value may hold more).

    One pass of numpy over the text's bytes finds the separators; the pieces are then one string array over the
    text whose value boundaries are [gap, name, ``\x01``, value]* (no byte copied), and the names and the values
    are two ``take``s of it: no Python work per row or per piece."""
    text = props.cast(pa.string())  # UTF-8 checked once for the whole batch
    n = len(text)
    if n == 0:
        return np.zeros(0, np.int64), pa.array([], pa.string()), pa.array([], pa.string())
    _, offsets_buf, data_buf = text.buffers()
    offs = np.frombuffer(offsets_buf, np.int32, n + 1, text.offset * 4).astype(np.int64)
    lo, hi = int(offs[0]), int(offs[-1])
    raw = np.frombuffer(data_buf, np.uint8, hi - lo, lo) if hi > lo else np.zeros(0, np.uint8)
    pos2 = np.flatnonzero(raw == _PROPERTY) + lo
    pos1 = np.flatnonzero(raw == _NAME_VALUE) + lo
    count = np.diff(np.searchsorted(pos2, offs)) + 1  # pieces per row
    last = np.zeros(len(pos2) + n, np.bool_)  # each row's last piece ends at the row's end, the others at a \x02
    last[np.cumsum(count) - 1] = True
    ends = np.empty(len(last), np.int64)
    ends[last] = offs[1:]
    ends[~last] = pos2
    starts = np.empty(len(last), np.int64)
    starts[0] = lo
    starts[1:] = ends[:-1] + ~last[:-1]  # past the \x02, or the next row's start
    sep = np.append(pos1, hi)[np.searchsorted(pos1, starts)]  # each piece's first \x01 (if before its end)
    ok = sep < ends
    parents = np.repeat(np.arange(n), count)[ok]
    starts, ends, sep = starts[ok], ends[ok], sep[ok]
    m = len(starts)
    bounds = np.empty(4 * m + 2, np.int32)
    bounds[0], bounds[-1] = lo, hi
    bounds[1:-1:4], bounds[2:-1:4], bounds[3:-1:4], bounds[4:-1:4] = starts, sep, sep + 1, ends
    pieces = pa.StringArray.from_buffers(4 * m + 1, pa.py_buffer(bounds), data_buf)
    return parents, pieces.take(pa.array(np.arange(1, 4 * m, 4))), pieces.take(pa.array(np.arange(3, 4 * m, 4)))


@dataclass(frozen=True, slots=True)
class _Piece:
    name: str
    value: tuple[int, int]  # byte span of the value in a row


def _layout(row: bytes) -> list[_Piece] | None:
    """Row 0's pieces (the rule in the module docstring), or None when it is not UTF-8."""
    try:
        row.decode()
    except UnicodeDecodeError:
        return None
    pieces = []
    at = 0
    for piece in row.split(PROPERTY_SEPARATOR.encode()):
        cut = piece.find(NAME_VALUE_SEPARATOR.encode())
        if cut >= 0:
            pieces.append(_Piece(piece[:cut].decode(), (at + cut + 1, at + len(piece))))
        at += len(piece) + 1
    return pieces


def _fixed_width(data: np.ndarray, n: int) -> pa.Array:
    """``n`` strings of one width from the bytes ``data`` (``n x width``)."""
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(data.shape[1])
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data)))


def _row_strings(parts: list[np.ndarray], n: int) -> pa.Array:
    """``n * len(parts)`` strings, row by row: part j of row i is ``parts[j][i]`` (each part ``n x width_j``)."""
    if not parts:
        return pa.array([], pa.string())
    widths = np.array([p.shape[1] for p in parts], np.int64)
    per_row = int(widths.sum())
    data = np.concatenate(parts, axis=1)
    starts = (np.arange(n, dtype=np.int64)[:, None] * per_row + np.concatenate([[0], np.cumsum(widths)[:-1]])).ravel()
    offsets = np.append(starts, n * per_row).astype(np.int32)
    return pa.StringArray.from_buffers(n * len(parts), pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data)))


def uniform_columns(props: pa.Array, include_properties: bool) -> PropertyColumns | None:
    """The property columns when every row's text has row 0's length and layout (see the module docstring), else
    ``None``."""
    text = props.cast(pa.binary())
    n = len(text)
    if n == 0:
        return None
    _, offsets_buf, data_buf = text.buffers()
    offs = np.frombuffer(offsets_buf, np.int32, n + 1, text.offset * 4)
    width = int(offs[1]) - int(offs[0])
    if width == 0 or int(offs[-1]) - int(offs[0]) != n * width or (np.diff(offs) != width).any():
        return None
    rows = np.frombuffer(data_buf, np.uint8, n * width, int(offs[0])).reshape(n, width)
    pieces = _layout(rows[0].tobytes())
    if pieces is None:
        return None
    varies = (rows != rows[0]).any(axis=0)
    if varies.any():
        moving = rows[:, varies]  # row 0's bytes too
        if ((moving >= 0x80) | (moving == _SEPARATORS[0]) | (moving == _SEPARATORS[1])).any():
            return None  # a separator or a multi-byte character may move between rows: not one layout
    first = rows[0]
    for p in pieces:  # names are the same in every row (a name whose bytes vary takes the general path)
        begin = p.value[0] - 1 - len(p.name.encode())
        if varies[begin : p.value[0]].any():
            return None

    def slice_of(p: _Piece) -> np.ndarray:
        a, b = p.value
        return rows[:, a:b]

    def column(name: str) -> pa.Array:
        hits = [p for p in pieces if p.name == name]
        if not hits or hits[-1].value[0] == hits[-1].value[1]:
            return pa.nulls(n, pa.string())
        a, b = hits[-1].value
        if not varies[a:b].any():
            return pa.repeat(pa.scalar(first[a:b].tobytes().decode(), pa.string()), n)
        return _fixed_width(slice_of(hits[-1]), n)

    mapped = None
    if include_properties:
        kept = [p for p in pieces if p.name not in BROKEN_OUT_PROPERTIES]
        name_bytes = [np.frombuffer(p.name.encode(), np.uint8) for p in kept]
        names = _row_strings([np.broadcast_to(b, (n, len(b))) for b in name_bytes], n)
        values = _row_strings([slice_of(p) for p in kept], n)
        offsets = np.arange(n + 1, dtype=np.int32) * len(kept)
        mapped = pa.MapArray.from_arrays(pa.array(offsets), names, values)
    return PropertyColumns(column("KEYS"), column("TAGS"), column("UNIQ_KEY"), mapped)
