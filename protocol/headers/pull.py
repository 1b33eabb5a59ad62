"""The pull headers — PULL_MESSAGE (11) request and reply — with hand-tuned codecs: they are decoded and encoded once
per pull (``bench/codec_bench.py`` "header" rows): declared fields, a hand-tuned reader that indexes the fields
and calls the header's constructor (``@header``'s, which sets the slots without the frozen guard), falling back to the
generated ``_from_ext_fields_checked`` only for the precise error; the generated ``to_ext_fields``. The broker reads
a pull's header with ``read_pull_request`` (a plain function: the one reader a pull takes).

| header                    | fields (``!`` = required)                                                           |
|---------------------------|-------------------------------------------------------------------------------------|
| PullMessageRequestHeader  | !consumerGroup !topic !queueId !queueOffset !maxMsgNums !sysFlag !commitOffset      |
|                           | !suspendTimeoutMillis subscription !subVersion expressionType                       |
| PullMessageResponseHeader | suggestWhichBrokerId (absent = 0) !nextBeginOffset !minOffset !maxOffset            |

``sysFlag`` holds the PULL_FLAG_* bits (commit offset 0x1, suspend 0x2, subscription 0x4, class filter 0x8,
lite pull 0x10).
"""

from __future__ import annotations

from typing import Final, Self

from protocol.headers.codec import Fields, WireHeader, header, wire

PULL_FLAG_COMMIT_OFFSET: Final = 0x1
PULL_FLAG_SUSPEND: Final = 0x2
PULL_FLAG_SUBSCRIPTION: Final = 0x4
PULL_FLAG_CLASS_FILTER: Final = 0x8
PULL_FLAG_LITE_PULL: Final = 0x10


@header
class PullMessageRequestHeader(WireHeader):
    """PULL_MESSAGE (11). ``sys_flag`` holds the PULL_FLAG_* bits; C++ sends 6 (suspend + subscription)."""

    consumer_group: str = wire("consumerGroup")
    topic: str = wire("topic")
    queue_id: int = wire("queueId")
    queue_offset: int = wire("queueOffset")
    max_msg_nums: int = wire("maxMsgNums")
    sys_flag: int = wire("sysFlag")
    commit_offset: int = wire("commitOffset")
    suspend_timeout_millis: int = wire("suspendTimeoutMillis")
    sub_version: int = wire("subVersion")
    subscription: str | None = wire("subscription", default=None)
    expression_type: str | None = wire("expressionType", default=None)

    @classmethod
    def from_ext_fields(cls, d: Fields) -> PullMessageRequestHeader:
        return read_pull_request(d)


def read_pull_request(d: Fields) -> PullMessageRequestHeader:
    """The PULL_MESSAGE header in ``d``: the hand-tuned read a broker makes once per pull. A missing or malformed
    field raises the declared reader's precise error (``MissingHeaderFieldError`` / ``BadHeaderFieldError``)."""
    get = d.get
    try:
        return PullMessageRequestHeader(
            d["consumerGroup"],
            d["topic"],
            int(d["queueId"]),
            int(d["queueOffset"]),
            int(d["maxMsgNums"]),
            int(d["sysFlag"]),
            int(d["commitOffset"]),
            int(d["suspendTimeoutMillis"]),
            int(d["subVersion"]),
            get("subscription"),
            get("expressionType"),
        )
    except (KeyError, ValueError):
        return PullMessageRequestHeader._from_ext_fields_checked(d)


@header
class PullMessageResponseHeader(WireHeader):
    """Reply of PULL_MESSAGE, also on PULL_NOT_FOUND / PULL_OFFSET_MOVED (clients copy ``nextBeginOffset``).
    A missing ``suggestWhichBrokerId`` reads as 0 (master)."""

    suggest_which_broker_id: int = wire("suggestWhichBrokerId", required=False)
    next_begin_offset: int = wire("nextBeginOffset")
    min_offset: int = wire("minOffset")
    max_offset: int = wire("maxOffset")

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        try:
            sw = d.get("suggestWhichBrokerId")
            return cls(int(sw) if sw else 0, int(d["nextBeginOffset"]), int(d["minOffset"]), int(d["maxOffset"]))
        except (KeyError, ValueError):
            return cls._from_ext_fields_checked(d)
