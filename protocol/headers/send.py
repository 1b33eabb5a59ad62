"""The send headers — SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) / SEND_BATCH_MESSAGE (320) and their reply — with
hand-tuned codecs: they are decoded and encoded once per message (``bench/codec_bench.py`` "header" rows).

SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE use one-letter names (``SendMessageRequestHeaderV2``); ``to_v1``/``to_v2``
convert, and ``SendMessageRequestHeader.from_v2_ext_fields`` / ``to_v2_ext_fields`` go straight between the V1 object
and the V2 wire names (what the broker and the client do per message; ``SEND_V2_AS_V1`` is the V2 reader as a header
class, for ``decode_header``):

    | V2 | V1 name               | V2 | V1 name              | V2 | V1 name           |
    |----|-----------------------|----|----------------------|----|-------------------|
    | a  | producerGroup         | f  | sysFlag              | k  | unitMode          |
    | b  | topic                 | g  | bornTimestamp        | l  | maxReconsumeTimes |
    | c  | defaultTopic          | h  | flag                 | m  | batch             |
    | d  | defaultTopicQueueNums | i  | properties           | n  | brokerName        |
    | e  | queueId               | j  | reconsumeTimes       |    |                   |

The reply: ``!msgId !queueId !queueOffset transactionId MSG_REGION TRACE_ON``.

The fields are declared once with ``wire()`` (``protocol.headers.codec``), which generates ``to_ext_fields`` and the
exact-error reader ``_from_ext_fields_checked``. Only ``from_ext_fields`` (and the V1 ↔ V2 conversions) are
hand-tuned: one ``try`` block with direct indexing that falls back to ``_from_ext_fields_checked`` only to produce
the precise error (or for rare spellings such as ``"TRUE"``); objects are built through their slots' descriptors,
which skips the frozen dataclass's guarded ``__setattr__`` (about half the construction cost). Tests check that
both paths agree on any input.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Final, Self, TypeVar

from protocol.headers.codec import (
    _BOOL_F,
    _BOOL_T,
    Fields,
    WireHeader,
    _new,
    _slot_setters,
    header,
    wire,
)


@header
class SendMessageRequestHeader(WireHeader):
    """SEND_MESSAGE (10): long field names. The one send header the broker works with (V2 converts to it)."""

    producer_group: str = wire("producerGroup")
    topic: str = wire("topic")
    default_topic: str = wire("defaultTopic")
    default_topic_queue_nums: int = wire("defaultTopicQueueNums")
    queue_id: int = wire("queueId")
    sys_flag: int = wire("sysFlag")
    born_timestamp: int = wire("bornTimestamp")
    flag: int = wire("flag")
    properties: str | None = wire("properties", default=None)
    reconsume_times: int | None = wire("reconsumeTimes", default=None)
    unit_mode: bool = wire("unitMode", default=False)
    batch: bool = wire("batch", default=False)
    max_reconsume_times: int | None = wire("maxReconsumeTimes", default=None)
    broker_name: str | None = wire("brokerName", default=None)

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        get = d.get
        try:
            rt = get("reconsumeTimes")
            mrt = get("maxReconsumeTimes")
            return _make_v1(
                cls,
                d["producerGroup"],
                d["topic"],
                d["defaultTopic"],
                int(d["defaultTopicQueueNums"]),
                int(d["queueId"]),
                int(d["sysFlag"]),
                int(d["bornTimestamp"]),
                int(d["flag"]),
                get("properties"),
                int(rt) if rt else None,
                _BOOL_F[get("unitMode", "")],
                _BOOL_F[get("batch", "")],
                int(mrt) if mrt else None,
                get("brokerName"),
            )
        except (KeyError, ValueError):
            return cls._from_ext_fields_checked(d)

    @classmethod
    def from_v2_ext_fields(cls, d: Fields) -> Self:
        """Read SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE wire names straight into this (V1) header."""
        get = d.get
        try:
            j = get("j")
            lv = get("l")
            return _make_v1(
                cls,
                d["a"],
                d["b"],
                d["c"],
                int(d["d"]),
                int(d["e"]),
                int(d["f"]),
                int(d["g"]),
                int(d["h"]),
                get("i"),
                int(j) if j else None,
                _BOOL_F[get("k", "")],
                _BOOL_F[get("m", "")],
                int(lv) if lv else None,
                get("n"),
            )
        except (KeyError, ValueError):
            v2 = SendMessageRequestHeaderV2._from_ext_fields_checked(d)
            return _make_v1(cls, v2.a, v2.b, v2.c, v2.d, v2.e, v2.f, v2.g, v2.h, v2.i, v2.j, v2.k, v2.m, v2.l, v2.n)

    @classmethod
    def of(
        cls,
        producer_group: str,
        topic: str,
        default_topic: str,
        default_topic_queue_nums: int,
        queue_id: int,
        sys_flag: int,
        born_timestamp: int,
        flag: int,
        properties: str | None = None,
        reconsume_times: int | None = None,
        batch: bool = False,
        max_reconsume_times: int | None = None,
    ) -> Self:
        """``cls(...)`` positionally without the frozen ``__setattr__`` guard (a producer builds one per send);
        ``unit_mode`` False, no ``broker_name``."""
        return _make_v1(
            cls,
            producer_group,
            topic,
            default_topic,
            default_topic_queue_nums,
            queue_id,
            sys_flag,
            born_timestamp,
            flag,
            properties,
            reconsume_times,
            False,
            batch,
            max_reconsume_times,
            None,
        )

    def to_v2_ext_fields(self) -> Fields:
        """The SEND_MESSAGE_V2 wire fields (one-letter names) of this header, without building a V2 object."""
        out: Fields = {
            "a": self.producer_group,
            "b": self.topic,
            "c": self.default_topic,
            "d": str(self.default_topic_queue_nums),
            "e": str(self.queue_id),
            "f": str(self.sys_flag),
            "g": str(self.born_timestamp),
            "h": str(self.flag),
        }
        if self.properties is not None:
            out["i"] = self.properties
        if self.reconsume_times is not None:
            out["j"] = str(self.reconsume_times)
        out["k"] = "true" if self.unit_mode else "false"
        if self.max_reconsume_times is not None:
            out["l"] = str(self.max_reconsume_times)
        out["m"] = "true" if self.batch else "false"
        if self.broker_name is not None:
            out["n"] = self.broker_name
        return out

    def to_v2(self) -> SendMessageRequestHeaderV2:
        return _make_v2(
            SendMessageRequestHeaderV2,
            self.producer_group,
            self.topic,
            self.default_topic,
            self.default_topic_queue_nums,
            self.queue_id,
            self.sys_flag,
            self.born_timestamp,
            self.flag,
            self.properties,
            self.reconsume_times,
            self.unit_mode,
            self.max_reconsume_times,
            self.batch,
            self.broker_name,
        )


@header
class SendMessageRequestHeaderV2(WireHeader):
    """SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320): the same fields under one-letter names (table above)."""

    a: str = wire("a")
    b: str = wire("b")
    c: str = wire("c")
    d: int = wire("d")
    e: int = wire("e")
    f: int = wire("f")
    g: int = wire("g")
    h: int = wire("h")
    i: str | None = wire("i", default=None)
    j: int | None = wire("j", default=None)
    k: bool = wire("k", default=False)
    l: int | None = wire("l", default=None)  # noqa: E741 - the wire name
    m: bool = wire("m", default=False)
    n: str | None = wire("n", default=None)

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        get = d.get
        try:
            j = get("j")
            lv = get("l")
            return _make_v2(
                cls,
                d["a"],
                d["b"],
                d["c"],
                int(d["d"]),
                int(d["e"]),
                int(d["f"]),
                int(d["g"]),
                int(d["h"]),
                get("i"),
                int(j) if j else None,
                _BOOL_F[get("k", "")],
                int(lv) if lv else None,
                _BOOL_F[get("m", "")],
                get("n"),
            )
        except (KeyError, ValueError):
            return cls._from_ext_fields_checked(d)

    def to_v1(self) -> SendMessageRequestHeader:
        return _make_v1(
            SendMessageRequestHeader,
            self.a,
            self.b,
            self.c,
            self.d,
            self.e,
            self.f,
            self.g,
            self.h,
            self.i,
            self.j,
            self.k,
            self.m,
            self.l,
            self.n,
        )


_V1 = TypeVar("_V1", bound=SendMessageRequestHeader)
_V2 = TypeVar("_V2", bound=SendMessageRequestHeaderV2)
_V1_SET: Final = _slot_setters(
    SendMessageRequestHeader,
    "producer_group topic default_topic default_topic_queue_nums queue_id sys_flag born_timestamp flag properties "
    "reconsume_times unit_mode batch max_reconsume_times broker_name",
)
_V2_SET: Final = _slot_setters(SendMessageRequestHeaderV2, "a b c d e f g h i j k l m n")


def _make_v1(
    cls: type[_V1],
    producer_group: str,
    topic: str,
    default_topic: str,
    default_topic_queue_nums: int,
    queue_id: int,
    sys_flag: int,
    born_timestamp: int,
    flag: int,
    properties: str | None,
    reconsume_times: int | None,
    unit_mode: bool,
    batch: bool,
    max_reconsume_times: int | None,
    broker_name: str | None,
) -> _V1:
    """``cls(...)`` for the send header, positionally, without the frozen ``__setattr__`` guard."""
    o = _new(cls)
    s = _V1_SET
    s[0](o, producer_group)
    s[1](o, topic)
    s[2](o, default_topic)
    s[3](o, default_topic_queue_nums)
    s[4](o, queue_id)
    s[5](o, sys_flag)
    s[6](o, born_timestamp)
    s[7](o, flag)
    s[8](o, properties)
    s[9](o, reconsume_times)
    s[10](o, unit_mode)
    s[11](o, batch)
    s[12](o, max_reconsume_times)
    s[13](o, broker_name)
    return o


def _make_v2(
    cls: type[_V2],
    a: str,
    b: str,
    c: str,
    d: int,
    e: int,
    f: int,
    g: int,
    h: int,
    i: str | None,
    j: int | None,
    k: bool,
    l: int | None,  # noqa: E741 - the wire name
    m: bool,
    n: str | None,
) -> _V2:
    o = _new(cls)
    s = _V2_SET
    s[0](o, a)
    s[1](o, b)
    s[2](o, c)
    s[3](o, d)
    s[4](o, e)
    s[5](o, f)
    s[6](o, g)
    s[7](o, h)
    s[8](o, i)
    s[9](o, j)
    s[10](o, k)
    s[11](o, l)
    s[12](o, m)
    s[13](o, n)
    return o


@header
class SendMessageResponseHeader(WireHeader):
    """Reply of the send commands. ``MSG_REGION`` and ``TRACE_ON`` are extFields J's broker adds beside the header.
    C++ builds its SendResult from ``msgId``, ``queueId`` and ``queueOffset``: all three must be present as text."""

    msg_id: str = wire("msgId")
    queue_id: int = wire("queueId")
    queue_offset: int = wire("queueOffset")
    transaction_id: str | None = wire("transactionId", default=None)
    msg_region: str = wire("MSG_REGION", default="DefaultRegion")
    trace_on: bool = wire("TRACE_ON", default=True)

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        get = d.get
        try:
            o = _new(cls)
            s = _SEND_RESP_SET
            s[0](o, d["msgId"])
            s[1](o, int(d["queueId"]))
            s[2](o, int(d["queueOffset"]))
            s[3](o, get("transactionId"))
            s[4](o, get("MSG_REGION", "DefaultRegion"))
            s[5](o, _BOOL_T[get("TRACE_ON", "")])
            return o
        except (KeyError, ValueError):
            return cls._from_ext_fields_checked(d)


_SEND_RESP_SET: Final = _slot_setters(
    SendMessageResponseHeader, "msg_id queue_id queue_offset transaction_id msg_region trace_on"
)


class _SendV2AsV1:
    """SEND_MESSAGE_V2 wire names read straight into a ``SendMessageRequestHeader`` (no V2 object, no ``to_v1``)."""

    __slots__ = ()

    @staticmethod
    def from_ext_fields(d: Fields, /) -> SendMessageRequestHeader:
        return SendMessageRequestHeader.from_v2_ext_fields(d)


SEND_V2_AS_V1: Final = _SendV2AsV1()

# The request header's wire names in ``SendMessageRequestHeader``'s field order, V1 and V2 (V2 declares
# maxReconsumeTimes ``l`` before batch ``m``), taken from the ``wire()`` declarations above: the broker reads a send's
# ext fields with them straight into its request (``broker.services.send.SendRequest.of_ext_fields``), without a
# header object, and falls back to the readers above for the exact error. ``WIRE_BOOL``: the boolean spellings read.
SEND_V1_NAMES: Final[tuple[str, ...]] = tuple(f.metadata["wire"][0] for f in fields(SendMessageRequestHeader))
_v2_names = [f.metadata["wire"][0] for f in fields(SendMessageRequestHeaderV2)]
SEND_V2_NAMES: Final[tuple[str, ...]] = (*_v2_names[:11], _v2_names[12], _v2_names[11], _v2_names[13])
WIRE_BOOL: Final = _BOOL_F
