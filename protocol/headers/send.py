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

Each parses in one ``try`` block with direct indexing and falls back to the field-by-field
``_from_ext_fields_checked`` only to produce the precise error (or for rare spellings such as ``"TRUE"``); objects
are built through their slots' descriptors, which skips the frozen dataclass's guarded ``__setattr__`` (about half
the construction cost). Tests check that both paths agree on any input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Self, TypeVar

from protocol.headers.codec import _BOOL_F, _BOOL_T, Fields, _b, _i, _new, _oi, _os, _s, _slot_setters


@dataclass(frozen=True, slots=True)
class SendMessageRequestHeader:
    """SEND_MESSAGE (10): long field names. The one send header the broker works with (V2 converts to it)."""

    producer_group: str
    topic: str
    default_topic: str
    default_topic_queue_nums: int
    queue_id: int
    sys_flag: int
    born_timestamp: int
    flag: int
    properties: str | None = None
    reconsume_times: int | None = None
    unit_mode: bool = False
    batch: bool = False
    max_reconsume_times: int | None = None
    broker_name: str | None = None

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
    def _from_ext_fields_checked(cls, d: Fields) -> Self:
        return cls(
            producer_group=_s(d, "producerGroup"),
            topic=_s(d, "topic"),
            default_topic=_s(d, "defaultTopic"),
            default_topic_queue_nums=_i(d, "defaultTopicQueueNums"),
            queue_id=_i(d, "queueId"),
            sys_flag=_i(d, "sysFlag"),
            born_timestamp=_i(d, "bornTimestamp"),
            flag=_i(d, "flag"),
            properties=_os(d, "properties"),
            reconsume_times=_oi(d, "reconsumeTimes"),
            unit_mode=_b(d, "unitMode"),
            batch=_b(d, "batch"),
            max_reconsume_times=_oi(d, "maxReconsumeTimes"),
            broker_name=_os(d, "brokerName"),
        )

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

    def to_ext_fields(self) -> Fields:
        out: Fields = {
            "producerGroup": self.producer_group,
            "topic": self.topic,
            "defaultTopic": self.default_topic,
            "defaultTopicQueueNums": str(self.default_topic_queue_nums),
            "queueId": str(self.queue_id),
            "sysFlag": str(self.sys_flag),
            "bornTimestamp": str(self.born_timestamp),
            "flag": str(self.flag),
        }
        if self.properties is not None:
            out["properties"] = self.properties
        if self.reconsume_times is not None:
            out["reconsumeTimes"] = str(self.reconsume_times)
        out["unitMode"] = "true" if self.unit_mode else "false"
        out["batch"] = "true" if self.batch else "false"
        if self.max_reconsume_times is not None:
            out["maxReconsumeTimes"] = str(self.max_reconsume_times)
        if self.broker_name is not None:
            out["brokerName"] = self.broker_name
        return out

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


@dataclass(frozen=True, slots=True)
class SendMessageRequestHeaderV2:
    """SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320): the same fields under one-letter names (table above)."""

    a: str
    b: str
    c: str
    d: int
    e: int
    f: int
    g: int
    h: int
    i: str | None = None
    j: int | None = None
    k: bool = False
    l: int | None = None  # noqa: E741 - the wire name
    m: bool = False
    n: str | None = None

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

    @classmethod
    def _from_ext_fields_checked(cls, d: Fields) -> Self:
        return cls(
            a=_s(d, "a"),
            b=_s(d, "b"),
            c=_s(d, "c"),
            d=_i(d, "d"),
            e=_i(d, "e"),
            f=_i(d, "f"),
            g=_i(d, "g"),
            h=_i(d, "h"),
            i=_os(d, "i"),
            j=_oi(d, "j"),
            k=_b(d, "k"),
            l=_oi(d, "l"),
            m=_b(d, "m"),
            n=_os(d, "n"),
        )

    def to_ext_fields(self) -> Fields:
        out: Fields = {
            "a": self.a,
            "b": self.b,
            "c": self.c,
            "d": str(self.d),
            "e": str(self.e),
            "f": str(self.f),
            "g": str(self.g),
            "h": str(self.h),
        }
        if self.i is not None:
            out["i"] = self.i
        if self.j is not None:
            out["j"] = str(self.j)
        out["k"] = "true" if self.k else "false"
        if self.l is not None:
            out["l"] = str(self.l)
        out["m"] = "true" if self.m else "false"
        if self.n is not None:
            out["n"] = self.n
        return out

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


@dataclass(frozen=True, slots=True)
class SendMessageResponseHeader:
    """Reply of the send commands. ``MSG_REGION`` and ``TRACE_ON`` are extFields J's broker adds beside the header.
    C++ builds its SendResult from ``msgId``, ``queueId`` and ``queueOffset``: all three must be present as text."""

    msg_id: str
    queue_id: int
    queue_offset: int
    transaction_id: str | None = None
    msg_region: str = "DefaultRegion"
    trace_on: bool = True

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

    @classmethod
    def _from_ext_fields_checked(cls, d: Fields) -> Self:
        return cls(
            msg_id=_s(d, "msgId"),
            queue_id=_i(d, "queueId"),
            queue_offset=_i(d, "queueOffset"),
            transaction_id=_os(d, "transactionId"),
            msg_region=d.get("MSG_REGION", "DefaultRegion"),
            trace_on=_b(d, "TRACE_ON", True),
        )

    def to_ext_fields(self) -> Fields:
        out: Fields = {"msgId": self.msg_id, "queueId": str(self.queue_id), "queueOffset": str(self.queue_offset)}
        if self.transaction_id is not None:
            out["transactionId"] = self.transaction_id
        out["MSG_REGION"] = self.msg_region
        out["TRACE_ON"] = "true" if self.trace_on else "false"
        return out


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
