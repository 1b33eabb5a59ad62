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

The fields are declared once with ``wire()`` (``protocol.headers.codec``), which generates ``to_ext_fields``, the
exact-error reader ``_from_ext_fields_checked`` and the constructor (it sets the slots without the frozen dataclass's
guarded ``__setattr__``: half the cost). Only the readers are hand-tuned: one ``try`` block with direct indexing into
the constructor, falling back to ``_from_ext_fields_checked`` only to produce the precise error (or for rare
spellings such as ``"TRUE"``). The request's one reader takes either wire form's names (``SEND_V1_NAMES`` /
``SEND_V2_NAMES``, from the ``wire()`` declarations): ``read_send_request`` / ``read_send_request_v2``. Tests
check that both paths agree on any input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Final, Self

from protocol.headers.codec import _BOOL_F, _BOOL_T, Fields, WireHeader, header, wire


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
    def from_ext_fields(cls, d: Fields) -> SendMessageRequestHeader:
        return read_send_request(d)

    @classmethod
    def from_v2_ext_fields(cls, d: Fields) -> SendMessageRequestHeader:
        """Read SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE wire names straight into this (V1) header."""
        return read_send_request_v2(d)

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
        """``cls(...)`` positionally, without ``unit_mode`` (False) and ``broker_name`` (None): what a producer
        builds once per send."""
        return cls(
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
        return SendMessageRequestHeaderV2(
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
    def from_ext_fields(cls, d: Fields) -> SendMessageRequestHeaderV2:
        """Through ``read_send_request_v2`` (the broker's reader of these names; only tools build a V2 object)."""
        return read_send_request_v2(d).to_v2()

    def to_v1(self) -> SendMessageRequestHeader:
        return SendMessageRequestHeader(
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


# The request header's wire names in ``SendMessageRequestHeader``'s field order, V1 and V2 (V2 declares
# maxReconsumeTimes ``l`` before batch ``m``), taken from the ``wire()`` declarations above: the one reader below takes
# either, and the broker reads a send's ext fields with them straight into its request
# (``broker.services.send.SendRequest.of_ext_fields``), falling back to that reader for the exact error.
# ``WIRE_BOOL``: the boolean spellings read.
SEND_V1_NAMES: Final[tuple[str, ...]] = tuple(f.metadata["wire"][0] for f in fields(SendMessageRequestHeader))
_v2_names = [f.metadata["wire"][0] for f in fields(SendMessageRequestHeaderV2)]
SEND_V2_NAMES: Final[tuple[str, ...]] = (*_v2_names[:11], _v2_names[12], _v2_names[11], _v2_names[13])
WIRE_BOOL: Final = _BOOL_F


def _read_send(
    d: Fields, names: tuple[str, ...], checked: Callable[[Fields], SendMessageRequestHeader]
) -> SendMessageRequestHeader:
    """The send header in ``d`` under ``names`` (``SEND_V1_NAMES`` / ``SEND_V2_NAMES``), as the V1 header. A
    missing or malformed field (or a rare spelling such as ``"TRUE"``) takes ``checked``, the declared reader of
    those names, which raises its precise error or reads it."""
    get = d.get
    try:
        rt = get(names[9])
        mrt = get(names[12])
        return SendMessageRequestHeader(
            d[names[0]],
            d[names[1]],
            d[names[2]],
            int(d[names[3]]),
            int(d[names[4]]),
            int(d[names[5]]),
            int(d[names[6]]),
            int(d[names[7]]),
            get(names[8]),
            int(rt) if rt else None,
            _BOOL_F[get(names[10], "")],
            _BOOL_F[get(names[11], "")],
            int(mrt) if mrt else None,
            get(names[13]),
        )
    except (KeyError, ValueError):
        return checked(d)


def _checked_v2(d: Fields) -> SendMessageRequestHeader:
    return SendMessageRequestHeaderV2._from_ext_fields_checked(d).to_v1()


def read_send_request(d: Fields) -> SendMessageRequestHeader:
    """The SEND_MESSAGE header in ``d`` (long names)."""
    return _read_send(d, SEND_V1_NAMES, SendMessageRequestHeader._from_ext_fields_checked)


def read_send_request_v2(d: Fields) -> SendMessageRequestHeader:
    """The SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE header in ``d`` (one-letter names) as the V1 header, with no V2
    object between."""
    return _read_send(d, SEND_V2_NAMES, _checked_v2)


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
            return cls(
                d["msgId"],
                int(d["queueId"]),
                int(d["queueOffset"]),
                get("transactionId"),
                get("MSG_REGION", "DefaultRegion"),
                _BOOL_T[get("TRACE_ON", "")],
            )
        except (KeyError, ValueError):
            return cls._from_ext_fields_checked(d)


class _SendV2AsV1:
    """SEND_MESSAGE_V2 wire names read straight into a ``SendMessageRequestHeader`` (no V2 object, no ``to_v1``)."""

    __slots__ = ()

    @staticmethod
    def from_ext_fields(d: Fields, /) -> SendMessageRequestHeader:
        return read_send_request_v2(d)


SEND_V2_AS_V1: Final = _SendV2AsV1()
