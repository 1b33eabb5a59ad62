"""The pull headers — PULL_MESSAGE (11) request and reply — with hand-tuned codecs: they are decoded and encoded once
per pull (``bench/codec_bench.py`` "header" rows). Same technique as ``protocol.headers.send``.

| header                    | fields (``!`` = required)                                                           |
|---------------------------|-------------------------------------------------------------------------------------|
| PullMessageRequestHeader  | !consumerGroup !topic !queueId !queueOffset !maxMsgNums !sysFlag !commitOffset      |
|                           | !suspendTimeoutMillis subscription !subVersion expressionType                       |
| PullMessageResponseHeader | suggestWhichBrokerId (absent = 0) !nextBeginOffset !minOffset !maxOffset            |

``sysFlag`` holds the PULL_FLAG_* bits (commit offset 0x1, suspend 0x2, subscription 0x4, class filter 0x8,
lite pull 0x10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Self

from protocol.headers.codec import Fields, _i, _new, _oi, _os, _s, _slot_setters

PULL_FLAG_COMMIT_OFFSET: Final = 0x1
PULL_FLAG_SUSPEND: Final = 0x2
PULL_FLAG_SUBSCRIPTION: Final = 0x4
PULL_FLAG_CLASS_FILTER: Final = 0x8
PULL_FLAG_LITE_PULL: Final = 0x10


@dataclass(frozen=True, slots=True)
class PullMessageRequestHeader:
    """PULL_MESSAGE (11). ``sys_flag`` holds the PULL_FLAG_* bits; C++ sends 6 (suspend + subscription)."""

    consumer_group: str
    topic: str
    queue_id: int
    queue_offset: int
    max_msg_nums: int
    sys_flag: int
    commit_offset: int
    suspend_timeout_millis: int
    sub_version: int
    subscription: str | None = None
    expression_type: str | None = None

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

    @classmethod
    def _from_ext_fields_checked(cls, d: Fields) -> Self:
        return cls(
            consumer_group=_s(d, "consumerGroup"),
            topic=_s(d, "topic"),
            queue_id=_i(d, "queueId"),
            queue_offset=_i(d, "queueOffset"),
            max_msg_nums=_i(d, "maxMsgNums"),
            sys_flag=_i(d, "sysFlag"),
            commit_offset=_i(d, "commitOffset"),
            suspend_timeout_millis=_i(d, "suspendTimeoutMillis"),
            sub_version=_i(d, "subVersion"),
            subscription=_os(d, "subscription"),
            expression_type=_os(d, "expressionType"),
        )

    def to_ext_fields(self) -> Fields:
        out: Fields = {
            "consumerGroup": self.consumer_group,
            "topic": self.topic,
            "queueId": str(self.queue_id),
            "queueOffset": str(self.queue_offset),
            "maxMsgNums": str(self.max_msg_nums),
            "sysFlag": str(self.sys_flag),
            "commitOffset": str(self.commit_offset),
            "suspendTimeoutMillis": str(self.suspend_timeout_millis),
            "subVersion": str(self.sub_version),
        }
        if self.subscription is not None:
            out["subscription"] = self.subscription
        if self.expression_type is not None:
            out["expressionType"] = self.expression_type
        return out


_PULL_SET: Final = _slot_setters(
    PullMessageRequestHeader,
    "consumer_group topic queue_id queue_offset max_msg_nums sys_flag commit_offset suspend_timeout_millis "
    "sub_version subscription expression_type",
)


@dataclass(frozen=True, slots=True)
class PullMessageResponseHeader:
    """Reply of PULL_MESSAGE, also on PULL_NOT_FOUND / PULL_OFFSET_MOVED (clients copy ``nextBeginOffset``).
    A missing ``suggestWhichBrokerId`` reads as 0 (master)."""

    suggest_which_broker_id: int
    next_begin_offset: int
    min_offset: int
    max_offset: int

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

    @classmethod
    def _from_ext_fields_checked(cls, d: Fields) -> Self:
        return cls(
            suggest_which_broker_id=_oi(d, "suggestWhichBrokerId", 0) or 0,
            next_begin_offset=_i(d, "nextBeginOffset"),
            min_offset=_i(d, "minOffset"),
            max_offset=_i(d, "maxOffset"),
        )

    def to_ext_fields(self) -> Fields:
        return {
            "suggestWhichBrokerId": str(self.suggest_which_broker_id),
            "nextBeginOffset": str(self.next_begin_offset),
            "minOffset": str(self.min_offset),
            "maxOffset": str(self.max_offset),
        }


_PULL_RESP_SET: Final = _slot_setters(
    PullMessageResponseHeader, "suggest_which_broker_id next_begin_offset min_offset max_offset"
)
