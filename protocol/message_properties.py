"""Message properties: the ``name\\x01value\\x02`` text every record and SEND header carries, RocketMQ's standard
property names (``PropertyKey``, J ``MessageConst``), and the consume-queue tags code (Java ``String.hashCode``).

| piece                | shape                                                                                 |
|----------------------|---------------------------------------------------------------------------------------|
| one property         | ``name`` ``\\x01`` (NAME_VALUE_SEPARATOR) ``value`` ``\\x02`` (PROPERTY_SEPARATOR)      |
| properties string    | pairs back to back, written with a trailing ``\\x02`` as J and C++ write it; read leniently |
| tags code            | Java ``String.hashCode()`` of the TAGS value (signed 32-bit, 0 for none)               |
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

NAME_VALUE_SEPARATOR: Final = "\x01"
PROPERTY_SEPARATOR: Final = "\x02"


class PropertyKey:
    """RocketMQ's standard message property names (MessageConst). Attribute names are J's constant names; every key
    also has an attribute named like the key string itself (``PropertyKey.TRACE_ON == "TRACE_ON"``)."""

    KEYS: Final = "KEYS"
    TAGS: Final = "TAGS"
    WAIT_STORE_MSG_OK: Final = "WAIT"
    DELAY_TIME_LEVEL: Final = "DELAY"
    RETRY_TOPIC: Final = "RETRY_TOPIC"
    REAL_TOPIC: Final = "REAL_TOPIC"
    REAL_QUEUE_ID: Final = "REAL_QID"
    TRANSACTION_PREPARED: Final = "TRAN_MSG"
    PRODUCER_GROUP: Final = "PGROUP"
    MIN_OFFSET: Final = "MIN_OFFSET"
    MAX_OFFSET: Final = "MAX_OFFSET"
    BUYER_ID: Final = "BUYER_ID"
    ORIGIN_MESSAGE_ID: Final = "ORIGIN_MESSAGE_ID"
    TRANSFER_FLAG: Final = "TRANSFER_FLAG"
    CORRECTION_FLAG: Final = "CORRECTION_FLAG"
    MQ2_FLAG: Final = "MQ2_FLAG"
    RECONSUME_TIME: Final = "RECONSUME_TIME"
    MSG_REGION: Final = "MSG_REGION"
    TRACE_SWITCH: Final = "TRACE_ON"
    UNIQ_CLIENT_MESSAGE_ID_KEYIDX: Final = "UNIQ_KEY"
    MAX_RECONSUME_TIMES: Final = "MAX_RECONSUME_TIMES"
    CONSUME_START_TIMESTAMP: Final = "CONSUME_START_TIME"
    TRANSACTION_PREPARED_QUEUE_OFFSET: Final = "TRAN_PREPARED_QUEUE_OFFSET"
    TRANSACTION_ID: Final = "__transactionId__"
    TRANSACTION_CHECK_TIMES: Final = "TRANSACTION_CHECK_TIMES"
    CHECK_IMMUNITY_TIME_IN_SECONDS: Final = "CHECK_IMMUNITY_TIME_IN_SECONDS"
    INSTANCE_ID: Final = "INSTANCE_ID"
    CORRELATION_ID: Final = "CORRELATION_ID"
    REPLY_TO_CLIENT: Final = "REPLY_TO_CLIENT"
    TTL: Final = "TTL"
    ARRIVE_TIME: Final = "ARRIVE_TIME"
    PUSH_REPLY_TIME: Final = "PUSH_REPLY_TIME"
    CLUSTER: Final = "CLUSTER"
    MESSAGE_TYPE: Final = "MSG_TYPE"
    INNER_MULTI_DISPATCH: Final = "INNER_MULTI_DISPATCH"
    INNER_MULTI_QUEUE_OFFSET: Final = "INNER_MULTI_QUEUE_OFFSET"
    # the same keys under the names of their strings
    UNIQ_KEY: Final = "UNIQ_KEY"
    DELAY: Final = "DELAY"
    WAIT: Final = "WAIT"
    REAL_QID: Final = "REAL_QID"
    TRAN_MSG: Final = "TRAN_MSG"
    PGROUP: Final = "PGROUP"
    TRACE_ON: Final = "TRACE_ON"
    CONSUME_START_TIME: Final = "CONSUME_START_TIME"
    TRAN_PREPARED_QUEUE_OFFSET: Final = "TRAN_PREPARED_QUEUE_OFFSET"
    MSG_TYPE: Final = "MSG_TYPE"


def encode_properties(props: dict[str, str]) -> str:
    """``name\\x01value\\x02`` for each pair, trailing separator included (as J and C++ write it)."""
    if not props:
        return ""
    return "".join([f"{k}\x01{v}\x02" for k, v in props.items()])


def decode_properties(text: str) -> dict[str, str]:
    """Parse a properties string; tolerant of a missing trailing separator and empty pieces."""
    out: dict[str, str] = {}
    if not text:
        return out
    for piece in text.split(PROPERTY_SEPARATOR):
        if not piece:
            continue
        name, sep, value = piece.partition(NAME_VALUE_SEPARATOR)
        if sep and name:
            out[name] = value
    return out


def get_property(text: str, name: str) -> str | None:
    """One property's value straight from a properties string, without decoding the rest (the store's hot path).

    A name matches only at the start of a pair (the string's start or after ``\\x02``). When a name occurs twice the
    last one wins, as in ``decode_properties``."""
    key = name + NAME_VALUE_SEPARATOR
    i = text.rfind(key)
    while i > 0 and text[i - 1] != PROPERTY_SEPARATOR:
        i = text.rfind(key, 0, i)
    if i < 0:
        return None
    start = i + len(key)
    end = text.find(PROPERTY_SEPARATOR, start)
    return text[start:] if end < 0 else text[start:end]


_TAG_HASH_CACHE: dict[str, int] = {}
_TAG_HASH_CACHE_MAX: Final = 8192


def tag_hash(tag: str | None) -> int:
    """Java ``String.hashCode()`` of the tag (signed 32-bit; 0 for no tag), the consume-queue tags code.

    Tags have few distinct values, so results are cached (bounded)."""
    if not tag:
        return 0
    h = _TAG_HASH_CACHE.get(tag)
    if h is None:
        h = java_string_hash(tag)
        if len(_TAG_HASH_CACHE) >= _TAG_HASH_CACHE_MAX:
            _TAG_HASH_CACHE.clear()
        _TAG_HASH_CACHE[tag] = h
    return h


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode()``: over UTF-16 code units, 32-bit signed."""
    h = 0
    for unit in _utf16_units(s):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def _utf16_units(s: str) -> Iterable[int]:
    if s.isascii():
        return s.encode()
    data = s.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def append_properties(raw: str, text: str) -> str:
    """The encoded pairs of ``text`` after those of ``raw``: straight on when ``raw`` is empty or ends with the
    separator, else after one."""
    if raw and not raw.endswith(PROPERTY_SEPARATOR):
        return raw + PROPERTY_SEPARATOR + text
    return raw + text
