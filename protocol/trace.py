"""Message-trace records: the text body of the messages that clients with tracing on write to the trace topic
(``RMQ_SYS_TRACE_TOPIC`` by default), exactly as the Java client's ``TraceDataEncoder`` writes and reads them, so
the Dashboard and ``mqadmin queryMsgTraceById`` read ours and we read theirs.

A body is records one after another (UTF-8). Fields are separated by CONTENT_SPLITOR ``\\x01``; each record ends with
FIELD_SPLITOR ``\\x02``. A null field is the text ``null``; booleans are ``true``/``false``.

| type             | fields in order                                                                                       |
|------------------|-------------------------------------------------------------------------------------------------------|
| ``Pub``          | Pub, timestamp (send start, ms), regionId, producer group, topic, msgId (UNIQ_KEY), tags, keys,        |
|                  | storeHost (broker ``ip:port``), bodyLength, costTime (ms), msgType ordinal, offsetMsgId, success       |
|                  | (readers also take 13 fields — no offsetMsgId — or a 15th, clientHost)                                 |
| ``SubBefore``    | SubBefore, timestamp, regionId, consumer group, requestId (one per consumed batch), msgId,            |
|                  | retryTimes (reconsume times), keys                                                                    |
| ``SubAfter``     | SubAfter, requestId, msgId, costTime, success, keys, contextCode, timestamp, consumer group           |
|                  | (readers also take 6 or 7 fields: the CLOUD channel writes no timestamp and group)                    |
| ``EndTransaction`` | EndTransaction, timestamp, regionId, group, topic, msgId, tags, keys, storeHost, msgType ordinal,   |
|                  | transactionId, transactionState (COMMIT_MESSAGE / ROLLBACK_MESSAGE / UNKNOW), fromTransactionCheck     |

msgType ordinals (J ``MessageType``): Normal_Msg 0, Trans_Msg_Half 1, Trans_msg_Commit 2, Delay_Msg 3.
contextCode (J ``ConsumeReturnType``): SUCCESS 0, TIME_OUT 1, EXCEPTION 2, RETURNNULL 3, FAILED 4.
The trace message's KEYS property is every traced msgId plus every business key, space-joined: the index then finds
a message's trace records by its msgId.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

CONTENT_SPLITOR: Final = "\x01"
FIELD_SPLITOR: Final = "\x02"
DEFAULT_TRACE_TOPIC: Final = "RMQ_SYS_TRACE_TOPIC"
KEY_SEPARATOR: Final = " "


class TraceType(enum.StrEnum):
    PUB = "Pub"
    SUB_BEFORE = "SubBefore"
    SUB_AFTER = "SubAfter"
    END_TRANSACTION = "EndTransaction"


class TraceMessageType(enum.IntEnum):
    """J ``MessageType`` (the ordinal is written)."""

    NORMAL = 0
    TRANS_HALF = 1
    TRANS_COMMIT = 2
    DELAY = 3


class ConsumeReturnType(enum.IntEnum):
    """J ``ConsumeReturnType`` (SubAfter's contextCode)."""

    SUCCESS = 0
    TIME_OUT = 1
    EXCEPTION = 2
    RETURNNULL = 3
    FAILED = 4


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One record (J ``TraceContext`` with one ``TraceBean``). Fields a type does not write keep their defaults."""

    type: TraceType
    msg_id: str
    timestamp: int = 0
    region_id: str | None = ""  # None: written ``null`` (J's SubBefore of a message without MSG_REGION)
    group: str = ""
    topic: str = ""
    tags: str | None = None
    keys: str | None = None
    store_host: str = ""
    body_length: int = 0
    cost_time: int = 0
    msg_type: int = TraceMessageType.NORMAL
    offset_msg_id: str | None = None
    success: bool = True
    request_id: str = ""
    retry_times: int = 0
    context_code: int = ConsumeReturnType.SUCCESS
    client_host: str | None = None
    transaction_id: str | None = None
    transaction_state: str = ""
    from_transaction_check: bool = False


def _t(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def encode_record(r: TraceRecord) -> str:
    """One record as J's ``TraceDataEncoder.encoderFromContextBean`` writes it (the non-CLOUD channel)."""
    if r.type is TraceType.PUB:
        fields: tuple[object, ...] = (
            r.type.value, r.timestamp, r.region_id, r.group, r.topic, r.msg_id, r.tags, r.keys, r.store_host,
            r.body_length, r.cost_time, int(r.msg_type), r.offset_msg_id, r.success,
        )  # fmt: skip
    elif r.type is TraceType.SUB_BEFORE:
        fields = (r.type.value, r.timestamp, r.region_id, r.group, r.request_id, r.msg_id, r.retry_times, r.keys)
    elif r.type is TraceType.SUB_AFTER:
        fields = (
            r.type.value, r.request_id, r.msg_id, r.cost_time, r.success, r.keys, int(r.context_code), r.timestamp,
            r.group,
        )  # fmt: skip
    else:
        fields = (
            r.type.value, r.timestamp, r.region_id, r.group, r.topic, r.msg_id, r.tags, r.keys, r.store_host,
            int(r.msg_type), r.transaction_id, r.transaction_state, r.from_transaction_check,
        )  # fmt: skip
    return CONTENT_SPLITOR.join(_t(f) for f in fields) + FIELD_SPLITOR


def encode_records(records: Iterable[TraceRecord]) -> str:
    return "".join(encode_record(r) for r in records)


def trace_keys(records: Iterable[TraceRecord]) -> list[str]:
    """The KEYS of a trace message holding ``records`` (J ``TraceTransferBean.transKey``): each msgId and each
    business key, once, in first-seen order."""
    seen: dict[str, None] = {}
    for r in records:
        seen.setdefault(r.msg_id, None)
        if r.keys:
            for k in r.keys.split(KEY_SEPARATOR):
                if k:
                    seen.setdefault(k, None)
    return list(seen)


def _opt(text: str) -> str | None:
    return None if text == "null" else text


def _bool(text: str) -> bool:
    return text.strip().lower() == "true"  # J Boolean.parseBoolean


def _decode_one(f: list[str]) -> TraceRecord | None:
    kind = f[0]
    if kind == TraceType.PUB and len(f) >= 13:
        offset_id, ok = (f[12], f[13]) if len(f) >= 14 else (None, f[12])
        return TraceRecord(
            TraceType.PUB, f[5], int(f[1]), _opt(f[2]), f[3], f[4], _opt(f[6]), _opt(f[7]), f[8], int(f[9]), int(f[10]),
            int(f[11]), _opt(offset_id) if offset_id is not None else None, _bool(ok),
            client_host=f[14] if len(f) >= 15 else None,
        )  # fmt: skip
    if kind == TraceType.SUB_BEFORE and len(f) >= 8:
        return TraceRecord(
            TraceType.SUB_BEFORE,
            f[5],
            int(f[1]),
            _opt(f[2]),
            f[3],
            keys=_opt(f[7]),
            request_id=f[4],
            retry_times=int(f[6]),
        )
    if kind == TraceType.SUB_AFTER and len(f) >= 6:
        ts, group = (int(f[7]), f[8]) if len(f) >= 9 else (0, "")
        return TraceRecord(
            TraceType.SUB_AFTER, f[2], ts, group=group, keys=_opt(f[5]), cost_time=int(f[3]), success=_bool(f[4]),
            request_id=f[1], context_code=int(f[6]) if len(f) >= 7 and f[6] else 0,
        )  # fmt: skip
    if kind == TraceType.END_TRANSACTION and len(f) >= 13:
        return TraceRecord(
            TraceType.END_TRANSACTION, f[5], int(f[1]), _opt(f[2]), f[3], f[4], _opt(f[6]), _opt(f[7]), f[8],
            msg_type=int(f[9]), transaction_id=_opt(f[10]), transaction_state=f[11],
            from_transaction_check=_bool(f[12]),
        )  # fmt: skip
    return None


def decode_records(text: str) -> list[TraceRecord]:
    """Every record of a trace body (J ``decoderFromTraceDataString``); records of an unknown type or with too few
    or malformed fields are skipped (J would throw on the latter and lose the whole body)."""
    out: list[TraceRecord] = []
    for context in text.split(FIELD_SPLITOR):
        if not context:
            continue
        try:
            record = _decode_one(context.split(CONTENT_SPLITOR))
        except (ValueError, IndexError):
            continue
        if record is not None:
            out.append(record)
    return out
