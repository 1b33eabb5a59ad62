"""The pull headers — PULL_MESSAGE (11) request and reply — with hand-tuned codecs: they are decoded and encoded once
per pull (``bench/codec_bench.py`` "header" rows). Same technique as ``protocol.headers.send``: declared fields,
a hand-tuned ``from_ext_fields``, the generated ``_from_ext_fields_checked`` and ``to_ext_fields``.

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

from protocol.headers.codec import Fields, WireHeader, _new, _slot_setters, header, wire

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
    def from_ext_fields(cls, d: Fields) -> Self:
        get = d.get
        try:
            o = _new(cls)
            s = _PULL_SET
            s[0](o, d["consumerGroup"])
            s[1](o, d["topic"])
            s[2](o, int(d["queueId"]))
            s[3](o, int(d["queueOffset"]))
            s[4](o, int(d["maxMsgNums"]))
            s[5](o, int(d["sysFlag"]))
            s[6](o, int(d["commitOffset"]))
            s[7](o, int(d["suspendTimeoutMillis"]))
            s[8](o, int(d["subVersion"]))
            s[9](o, get("subscription"))
            s[10](o, get("expressionType"))
            return o
        except (KeyError, ValueError):
            return cls._from_ext_fields_checked(d)


_PULL_SET: Final = _slot_setters(
    PullMessageRequestHeader,
    "consumer_group topic queue_id queue_offset max_msg_nums sys_flag commit_offset suspend_timeout_millis "
    "sub_version subscription expression_type",
)


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
            o = _new(cls)
            s = _PULL_RESP_SET
            s[0](o, int(sw) if sw else 0)
            s[1](o, int(d["nextBeginOffset"]))
            s[2](o, int(d["minOffset"]))
            s[3](o, int(d["maxOffset"]))
            return o
        except (KeyError, ValueError):
            return cls._from_ext_fields_checked(d)


_PULL_RESP_SET: Final = _slot_setters(
    PullMessageResponseHeader, "suggest_which_broker_id next_begin_offset min_offset max_offset"
)
