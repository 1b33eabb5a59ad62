"""The SEND_BATCH_MESSAGE body (J ``MessageDecoder.encodeMessages``): records concatenated, each

| field        | size   | notes                                             |
|--------------|--------|---------------------------------------------------|
| TOTALSIZE    | int32  | this entry, this field included                   |
| MAGICCODE    | int32  | 0                                                 |
| BODYCRC      | int32  | 0                                                 |
| FLAG         | int32  | user flag                                         |
| BODYLEN+BODY | int32 + bytes |                                            |
| PROPSLEN+PROPERTIES | int16 + bytes | the properties string (``protocol.message_properties``) |

Topic and queue come from the request header. ``scan_batch`` checks a body once and keeps it whole as a
``BatchView``: where each entry's body and properties sit in it (flat lists of ints) and each properties string as
received, no object per entry; the broker's batch path encodes records straight from those spans
(``protocol.record.encode_records_v4``), never parsing or re-encoding properties. ``BatchItem``s (``decode_batch``,
or indexing a view) are for everyone else.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, overload

from protocol.message_properties import decode_properties, encode_properties
from protocol.record import I16, RecordError

_BATCH_HEAD: Final = struct.Struct(">iiiii")  # totalSize, magic, bodyCRC, flag, bodyLen
assert _BATCH_HEAD.size == 20
# The same entry head as byte offsets (big-endian types in numpy's notation), for columnar encoders that write the
# heads of many entries at once (client.bulk re-exports it); BODY follows at BATCH_HEAD_SIZE, then PROPSLEN
# (BATCH_PROPS_LEN) + PROPERTIES.
BATCH_HEAD_FIELDS: Final[dict[str, tuple[int, str]]] = {
    "total_size": (0, ">i4"),
    "magic": (4, ">i4"),
    "body_crc": (8, ">i4"),
    "flag": (12, ">i4"),
    "body_length": (16, ">i4"),
}
BATCH_HEAD_SIZE: Final = _BATCH_HEAD.size
BATCH_PROPS_LEN: Final = ">i2"


class BatchItem:
    """One message of a SEND_BATCH_MESSAGE body (topic and queue come from the request header).

    Its properties exist as the properties string (``text``: what the wire carries and the store writes verbatim)
    and as a dict (``properties``); each is made from the other on first use, so the broker's batch path —
    ``decode_batch`` then the store — never parses and re-encodes them. Build one with either; do not mutate the
    dict after ``text`` was read."""

    __slots__ = ("_props", "_text", "body", "flag")

    def __init__(
        self, body: bytes, properties: dict[str, str] | None = None, flag: int = 0, *, text: str | None = None
    ) -> None:
        self.body = body
        self.flag = flag
        self._props = properties if properties is not None or text is not None else {}
        self._text = text

    @property
    def properties(self) -> dict[str, str]:
        props = self._props
        if props is None:
            props = self._props = decode_properties(self._text or "")
        return props

    @properties.setter
    def properties(self, props: dict[str, str]) -> None:
        self._props = props
        self._text = None

    @property
    def text(self) -> str:
        """The properties string (``name\\x01value\\x02`` pairs)."""
        text = self._text
        if text is None:
            text = self._text = encode_properties(self._props or {})
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchItem):
            return NotImplemented
        return self.body == other.body and self.flag == other.flag and self.properties == other.properties

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BatchItem(body={self.body!r}, properties={self.properties!r}, flag={self.flag})"


def encode_batch(items: Iterable[BatchItem | tuple[int, bytes, dict[str, str]]]) -> bytes:
    """The SEND_BATCH_MESSAGE body: ``BatchItem``s or ``(flag, body, properties)`` tuples."""
    return encode_batch_texts(
        (it.flag, it.body, it.text) if isinstance(it, BatchItem) else (it[0], it[1], encode_properties(it[2]))
        for it in items
    )


def encode_batch_texts(items: Iterable[tuple[int, bytes, str]]) -> bytes:
    """The SEND_BATCH_MESSAGE body from ``(flag, body, properties string)`` items: the producer's batch path, with
    no BatchItem or properties dict per message."""
    parts: list[bytes] = []
    add = parts.extend
    pack_head = _BATCH_HEAD.pack
    pack_len = I16.pack
    for flag, data, text in items:
        props = text.encode()
        plen = len(props)
        blen = len(data)
        add((pack_head(22 + blen + plen, 0, 0, flag, blen), data, pack_len(plen), props))
    return b"".join(parts)


class BatchView(Sequence[BatchItem]):
    """A checked SEND_BATCH_MESSAGE body kept whole (``scan_batch``): ``spans`` holds three ints per entry, where
    its body starts, where its properties start and where they end (its body ends 2 bytes before its properties:
    PROPSLEN); ``flags`` and ``texts`` (the properties strings as received) one each. As a sequence it gives
    ``BatchItem``s, made on access."""

    __slots__ = ("flags", "payload", "spans", "texts")

    def __init__(self, payload: bytes, spans: list[int], flags: list[int], texts: list[str]) -> None:
        self.payload = payload
        self.spans = spans
        self.flags = flags
        self.texts = texts

    def __len__(self) -> int:
        return len(self.flags)

    @overload
    def __getitem__(self, i: int) -> BatchItem: ...

    @overload
    def __getitem__(self, i: slice) -> list[BatchItem]: ...

    def __getitem__(self, i: int | slice) -> BatchItem | list[BatchItem]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self.flags)
        spans = self.spans
        body = self.payload[spans[3 * i] : spans[3 * i + 1] - 2]
        return BatchItem(body, None, self.flags[i], text=self.texts[i])

    def __iter__(self) -> Iterator[BatchItem]:
        return (self[i] for i in range(len(self.flags)))


def scan_batch(body: bytes | bytearray | memoryview) -> BatchView:
    """Check a SEND_BATCH_MESSAGE body and note where its entries' parts are (``BatchView``); RecordError on
    inconsistent lengths or properties that are not UTF-8.

    The big-endian lengths and the flag are read byte by byte (compiled, an index into ``bytes`` is a native load:
    a third of the cost of a ``struct`` unpack's tuple per entry)."""
    spans: list[int] = []
    flags: list[int] = []
    texts: list[str] = []
    if not isinstance(body, bytes):
        body = bytes(body)  # one copy; the view keeps it
    pos = 0
    end = len(body)
    try:
        while pos < end:
            total = body[pos] << 24 | body[pos + 1] << 16 | body[pos + 2] << 8 | body[pos + 3]
            flag = body[pos + 12] << 24 | body[pos + 13] << 16 | body[pos + 14] << 8 | body[pos + 15]
            blen = body[pos + 16] << 24 | body[pos + 17] << 16 | body[pos + 18] << 8 | body[pos + 19]
            nxt = pos + total
            p = pos + 20 + blen  # the properties length
            # a negative int32 reads as >= 2**31 here: too long for any body
            if total < 22 or nxt > end or p + 2 > nxt:
                raise RecordError(f"bad batch entry at {pos}")
            plen = body[p] << 8 | body[p + 1]
            if p + 2 + plen != nxt:  # a negative int16 reads as >= 2**15: more than the entry holds
                raise RecordError(f"bad batch entry properties at {pos}")
            spans.append(pos + 20)
            spans.append(p + 2)
            spans.append(nxt)
            flags.append(flag - 0x1_0000_0000 if flag & 0x8000_0000 else flag)
            texts.append(body[p + 2 : nxt].decode() if plen else "")
            pos = nxt
    except IndexError:
        raise RecordError(f"truncated batch entry at {pos}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"undecodable batch properties at {pos}: {exc}") from None
    return BatchView(body, spans, flags, texts)


def decode_batch(body: bytes | bytearray | memoryview) -> list[BatchItem]:
    """Unpack a SEND_BATCH_MESSAGE body (``scan_batch``'s checks, then one ``BatchItem`` per entry, each keeping its
    properties string as received: parsed only if ``properties`` is read)."""
    return list(scan_batch(body))
