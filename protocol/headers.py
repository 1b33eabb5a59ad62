"""Typed custom headers (the ``extFields`` of a RemotingCommand) for the commands this project speaks.

Each header is a frozen slotted dataclass with an explicit ``from_ext_fields`` / ``to_ext_fields`` pair — no
reflection, so mistakes stay visible to mypy and the hot path stays cheap. Field names on the wire are exactly
RocketMQ's (``protocol.md`` §b). Rules shared by every header:

* A required field (``!`` in the reference) that is absent raises ``MissingHeaderFieldError`` with J's text
  ``the custom field <name> is null``.
* Numbers arrive as decimal text (the frame decoder already turned JSON numbers into text); text that does not parse
  raises ``BadHeaderFieldError`` naming the field and value.
* Booleans accept ``true``/``false`` in any case and ``1``/``0`` (the C++ client writes ``"0"`` for unitMode/batch).
* ``to_ext_fields`` always writes strings; optional fields that are ``None`` are left out.

SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE use one-letter names (``SendMessageRequestHeaderV2``):

    | V2 | V1 name               | V2 | V1 name              | V2 | V1 name           |
    |----|-----------------------|----|----------------------|----|-------------------|
    | a  | producerGroup         | f  | sysFlag              | k  | unitMode          |
    | b  | topic                 | g  | bornTimestamp        | l  | maxReconsumeTimes |
    | c  | defaultTopic          | h  | flag                 | m  | batch             |
    | d  | defaultTopicQueueNums | i  | properties           | n  | brokerName        |
    | e  | queueId               | j  | reconsumeTimes       |    |                   |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from protocol.errors import MalformedFrameError


class MalformedHeaderError(MalformedFrameError, ValueError):
    """A custom header that cannot be read (missing or malformed field)."""


class MissingHeaderFieldError(MalformedHeaderError):
    def __init__(self, name: str) -> None:
        super().__init__(f"the custom field <{name}> is null")
        self.field = name


class BadHeaderFieldError(MalformedHeaderError):
    def __init__(self, name: str, value: str, kind: str) -> None:
        super().__init__(f"the custom field <{name}> is not a valid {kind}: {value!r}")
        self.field = name


Fields = dict[str, str]


def _s(d: Fields, name: str) -> str:
    v = d.get(name)
    if v is None:
        raise MissingHeaderFieldError(name)
    return v


def _os(d: Fields, name: str) -> str | None:
    return d.get(name)


def _i(d: Fields, name: str) -> int:
    v = d.get(name)
    if v is None:
        raise MissingHeaderFieldError(name)
    try:
        return int(v)
    except ValueError:
        raise BadHeaderFieldError(name, v, "number") from None


def _oi(d: Fields, name: str, default: int | None = None) -> int | None:
    v = d.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise BadHeaderFieldError(name, v, "number") from None


def _b(d: Fields, name: str, default: bool = False) -> bool:
    v = d.get(name)
    if v is None or v == "":
        return default
    low = v.lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    raise BadHeaderFieldError(name, v, "boolean")


def _bs(value: bool) -> str:
    return "true" if value else "false"


def _put(out: Fields, name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        out[name] = _bs(value)
    else:
        out[name] = str(value)


# -- send ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SendMessageRequestHeader:
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
        _put(out, "properties", self.properties)
        _put(out, "reconsumeTimes", self.reconsume_times)
        out["unitMode"] = _bs(self.unit_mode)
        out["batch"] = _bs(self.batch)
        _put(out, "maxReconsumeTimes", self.max_reconsume_times)
        _put(out, "brokerName", self.broker_name)
        return out

    def to_v2(self) -> SendMessageRequestHeaderV2:
        return SendMessageRequestHeaderV2(
            a=self.producer_group,
            b=self.topic,
            c=self.default_topic,
            d=self.default_topic_queue_nums,
            e=self.queue_id,
            f=self.sys_flag,
            g=self.born_timestamp,
            h=self.flag,
            i=self.properties,
            j=self.reconsume_times,
            k=self.unit_mode,
            l=self.max_reconsume_times,
            m=self.batch,
            n=self.broker_name,
        )


@dataclass(frozen=True, slots=True)
class SendMessageRequestHeaderV2:
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
        _put(out, "i", self.i)
        _put(out, "j", self.j)
        out["k"] = _bs(self.k)
        _put(out, "l", self.l)
        out["m"] = _bs(self.m)
        _put(out, "n", self.n)
        return out

    def to_v1(self) -> SendMessageRequestHeader:
        return SendMessageRequestHeader(
            producer_group=self.a,
            topic=self.b,
            default_topic=self.c,
            default_topic_queue_nums=self.d,
            queue_id=self.e,
            sys_flag=self.f,
            born_timestamp=self.g,
            flag=self.h,
            properties=self.i,
            reconsume_times=self.j,
            unit_mode=self.k,
            batch=self.m,
            max_reconsume_times=self.l,
            broker_name=self.n,
        )


@dataclass(frozen=True, slots=True)
class SendMessageResponseHeader:
    msg_id: str
    queue_id: int
    queue_offset: int
    transaction_id: str | None = None
    msg_region: str = "DefaultRegion"
    trace_on: bool = True

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
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
        _put(out, "transactionId", self.transaction_id)
        out["MSG_REGION"] = self.msg_region
        out["TRACE_ON"] = _bs(self.trace_on)
        return out


# -- pull ------------------------------------------------------------------------------------------------------------

PULL_FLAG_COMMIT_OFFSET = 0x1
PULL_FLAG_SUSPEND = 0x2
PULL_FLAG_SUBSCRIPTION = 0x4
PULL_FLAG_CLASS_FILTER = 0x8
PULL_FLAG_LITE_PULL = 0x10


@dataclass(frozen=True, slots=True)
class PullMessageRequestHeader:
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
        _put(out, "subscription", self.subscription)
        _put(out, "expressionType", self.expression_type)
        return out


@dataclass(frozen=True, slots=True)
class PullMessageResponseHeader:
    suggest_which_broker_id: int
    next_begin_offset: int
    min_offset: int
    max_offset: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
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


# -- consumer offsets and queue queries ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueryConsumerOffsetRequestHeader:
    consumer_group: str
    topic: str
    queue_id: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"), _s(d, "topic"), _i(d, "queueId"))

    def to_ext_fields(self) -> Fields:
        return {"consumerGroup": self.consumer_group, "topic": self.topic, "queueId": str(self.queue_id)}


@dataclass(frozen=True, slots=True)
class UpdateConsumerOffsetRequestHeader:
    consumer_group: str
    topic: str
    queue_id: int
    commit_offset: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"), _s(d, "topic"), _i(d, "queueId"), _i(d, "commitOffset"))

    def to_ext_fields(self) -> Fields:
        return {
            "consumerGroup": self.consumer_group,
            "topic": self.topic,
            "queueId": str(self.queue_id),
            "commitOffset": str(self.commit_offset),
        }


@dataclass(frozen=True, slots=True)
class OffsetResponseHeader:
    """Reply of QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET and SEARCH_OFFSET_BY_TIMESTAMP."""

    offset: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_i(d, "offset"))

    def to_ext_fields(self) -> Fields:
        return {"offset": str(self.offset)}


@dataclass(frozen=True, slots=True)
class QueueRequestHeader:
    """``topic`` + ``queueId``: GET_MAX_OFFSET, GET_MIN_OFFSET, GET_EARLIEST_MSG_STORETIME."""

    topic: str
    queue_id: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"), _i(d, "queueId"))

    def to_ext_fields(self) -> Fields:
        return {"topic": self.topic, "queueId": str(self.queue_id)}


GetMaxOffsetRequestHeader = QueueRequestHeader
GetMinOffsetRequestHeader = QueueRequestHeader
GetEarliestMsgStoretimeRequestHeader = QueueRequestHeader


@dataclass(frozen=True, slots=True)
class SearchOffsetRequestHeader:
    topic: str
    queue_id: int
    timestamp: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"), _i(d, "queueId"), _i(d, "timestamp"))

    def to_ext_fields(self) -> Fields:
        return {"topic": self.topic, "queueId": str(self.queue_id), "timestamp": str(self.timestamp)}


@dataclass(frozen=True, slots=True)
class GetEarliestMsgStoretimeResponseHeader:
    timestamp: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_i(d, "timestamp"))

    def to_ext_fields(self) -> Fields:
        return {"timestamp": str(self.timestamp)}


# -- clients ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnregisterClientRequestHeader:
    client_id: str
    producer_group: str | None = None
    consumer_group: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "clientID"), _os(d, "producerGroup") or None, _os(d, "consumerGroup") or None)

    def to_ext_fields(self) -> Fields:
        out: Fields = {"clientID": self.client_id}
        _put(out, "producerGroup", self.producer_group)
        _put(out, "consumerGroup", self.consumer_group)
        return out


@dataclass(frozen=True, slots=True)
class GetConsumerListByGroupRequestHeader:
    consumer_group: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"))

    def to_ext_fields(self) -> Fields:
        return {"consumerGroup": self.consumer_group}


@dataclass(frozen=True, slots=True)
class NotifyConsumerIdsChangedRequestHeader:
    consumer_group: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"))

    def to_ext_fields(self) -> Fields:
        return {"consumerGroup": self.consumer_group}


@dataclass(frozen=True, slots=True)
class ConsumerSendMsgBackRequestHeader:
    offset: int
    group: str
    delay_level: int
    origin_msg_id: str | None = None
    origin_topic: str | None = None
    unit_mode: bool = False
    max_reconsume_times: int | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(
            offset=_i(d, "offset"),
            group=_s(d, "group"),
            delay_level=_i(d, "delayLevel"),
            origin_msg_id=_os(d, "originMsgId"),
            origin_topic=_os(d, "originTopic"),
            unit_mode=_b(d, "unitMode"),
            max_reconsume_times=_oi(d, "maxReconsumeTimes"),
        )

    def to_ext_fields(self) -> Fields:
        out: Fields = {"offset": str(self.offset), "group": self.group, "delayLevel": str(self.delay_level)}
        _put(out, "originMsgId", self.origin_msg_id)
        _put(out, "originTopic", self.origin_topic)
        out["unitMode"] = _bs(self.unit_mode)
        _put(out, "maxReconsumeTimes", self.max_reconsume_times)
        return out


# -- queries and transactions ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ViewMessageRequestHeader:
    offset: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_i(d, "offset"))

    def to_ext_fields(self) -> Fields:
        return {"offset": str(self.offset)}


@dataclass(frozen=True, slots=True)
class QueryMessageRequestHeader:
    topic: str
    key: str
    max_num: int
    begin_timestamp: int
    end_timestamp: int
    unique_key_query: bool = False

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(
            _s(d, "topic"),
            _s(d, "key"),
            _i(d, "maxNum"),
            _i(d, "beginTimestamp"),
            _i(d, "endTimestamp"),
            _b(d, "_UNIQUE_KEY_QUERY"),
        )

    def to_ext_fields(self) -> Fields:
        out: Fields = {
            "topic": self.topic,
            "key": self.key,
            "maxNum": str(self.max_num),
            "beginTimestamp": str(self.begin_timestamp),
            "endTimestamp": str(self.end_timestamp),
        }
        if self.unique_key_query:
            out["_UNIQUE_KEY_QUERY"] = "true"
        return out


@dataclass(frozen=True, slots=True)
class QueryMessageResponseHeader:
    index_last_update_timestamp: int
    index_last_update_phyoffset: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_i(d, "indexLastUpdateTimestamp"), _i(d, "indexLastUpdatePhyoffset"))

    def to_ext_fields(self) -> Fields:
        return {
            "indexLastUpdateTimestamp": str(self.index_last_update_timestamp),
            "indexLastUpdatePhyoffset": str(self.index_last_update_phyoffset),
        }


@dataclass(frozen=True, slots=True)
class EndTransactionRequestHeader:
    producer_group: str
    tran_state_table_offset: int
    commit_log_offset: int
    commit_or_rollback: int
    msg_id: str
    from_transaction_check: bool = False
    transaction_id: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(
            producer_group=_s(d, "producerGroup"),
            tran_state_table_offset=_i(d, "tranStateTableOffset"),
            commit_log_offset=_i(d, "commitLogOffset"),
            commit_or_rollback=_i(d, "commitOrRollback"),
            msg_id=_s(d, "msgId"),
            from_transaction_check=_b(d, "fromTransactionCheck"),
            transaction_id=_os(d, "transactionId"),
        )

    def to_ext_fields(self) -> Fields:
        out: Fields = {
            "producerGroup": self.producer_group,
            "tranStateTableOffset": str(self.tran_state_table_offset),
            "commitLogOffset": str(self.commit_log_offset),
            "commitOrRollback": str(self.commit_or_rollback),
            "msgId": self.msg_id,
            "fromTransactionCheck": _bs(self.from_transaction_check),
        }
        _put(out, "transactionId", self.transaction_id)
        return out


@dataclass(frozen=True, slots=True)
class CheckTransactionStateRequestHeader:
    tran_state_table_offset: int
    commit_log_offset: int
    msg_id: str | None = None
    transaction_id: str | None = None
    offset_msg_id: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(
            _i(d, "tranStateTableOffset"),
            _i(d, "commitLogOffset"),
            _os(d, "msgId"),
            _os(d, "transactionId"),
            _os(d, "offsetMsgId"),
        )

    def to_ext_fields(self) -> Fields:
        out: Fields = {
            "tranStateTableOffset": str(self.tran_state_table_offset),
            "commitLogOffset": str(self.commit_log_offset),
        }
        _put(out, "msgId", self.msg_id)
        _put(out, "transactionId", self.transaction_id)
        _put(out, "offsetMsgId", self.offset_msg_id)
        return out


# -- offsets reset and consumer status -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResetOffsetRequestHeader:
    """INVOKE_BROKER_TO_RESET_OFFSET (222) and RESET_CONSUMER_CLIENT_OFFSET (220). The key is literally
    ``isForce``; C++ reads it with ``atoi``, so ``to_ext_fields(numeric_bool=True)`` writes ``1``/``0``."""

    topic: str
    group: str
    timestamp: int
    is_force: bool

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"), _s(d, "group"), _i(d, "timestamp"), _b(d, "isForce"))

    def to_ext_fields(self, *, numeric_bool: bool = False) -> Fields:
        force = ("1" if self.is_force else "0") if numeric_bool else _bs(self.is_force)
        return {"topic": self.topic, "group": self.group, "timestamp": str(self.timestamp), "isForce": force}


@dataclass(frozen=True, slots=True)
class GetConsumerStatusRequestHeader:
    topic: str
    group: str
    client_addr: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"), _s(d, "group"), _os(d, "clientAddr"))

    def to_ext_fields(self) -> Fields:
        out: Fields = {"topic": self.topic, "group": self.group}
        _put(out, "clientAddr", self.client_addr)
        return out


@dataclass(frozen=True, slots=True)
class GetConsumerRunningInfoRequestHeader:
    consumer_group: str
    client_id: str
    jstack_enable: bool = False

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"), _s(d, "clientId"), _b(d, "jstackEnable"))

    def to_ext_fields(self) -> Fields:
        return {
            "consumerGroup": self.consumer_group,
            "clientId": self.client_id,
            "jstackEnable": _bs(self.jstack_enable),
        }


# -- admin -----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateTopicRequestHeader:
    topic: str
    default_topic: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    order: bool = False

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(
            topic=_s(d, "topic"),
            default_topic=_s(d, "defaultTopic"),
            read_queue_nums=_i(d, "readQueueNums"),
            write_queue_nums=_i(d, "writeQueueNums"),
            perm=_i(d, "perm"),
            topic_filter_type=_s(d, "topicFilterType"),
            topic_sys_flag=_oi(d, "topicSysFlag", 0) or 0,
            order=_b(d, "order"),
        )

    def to_ext_fields(self) -> Fields:
        return {
            "topic": self.topic,
            "defaultTopic": self.default_topic,
            "readQueueNums": str(self.read_queue_nums),
            "writeQueueNums": str(self.write_queue_nums),
            "perm": str(self.perm),
            "topicFilterType": self.topic_filter_type,
            "topicSysFlag": str(self.topic_sys_flag),
            "order": _bs(self.order),
        }


@dataclass(frozen=True, slots=True)
class TopicRequestHeader:
    """A header with only ``topic``: DELETE_TOPIC_IN_BROKER, GET_TOPIC_STATS_INFO, GET_ROUTEINFO_BY_TOPIC."""

    topic: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"))

    def to_ext_fields(self) -> Fields:
        return {"topic": self.topic}


DeleteTopicRequestHeader = TopicRequestHeader
GetTopicStatsInfoRequestHeader = TopicRequestHeader


@dataclass(frozen=True, slots=True)
class GetRouteInfoRequestHeader:
    topic: str
    accept_standard_json_only: bool | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        v = d.get("acceptStandardJsonOnly")
        return cls(_s(d, "topic"), None if v is None else _b(d, "acceptStandardJsonOnly"))

    def to_ext_fields(self) -> Fields:
        out: Fields = {"topic": self.topic}
        _put(out, "acceptStandardJsonOnly", self.accept_standard_json_only)
        return out


@dataclass(frozen=True, slots=True)
class DeleteSubscriptionGroupRequestHeader:
    group_name: str
    remove_offset: bool = False

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "groupName"), _b(d, "removeOffset"))

    def to_ext_fields(self) -> Fields:
        return {"groupName": self.group_name, "removeOffset": _bs(self.remove_offset)}


@dataclass(frozen=True, slots=True)
class GetConsumeStatsRequestHeader:
    consumer_group: str
    topic: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"), _os(d, "topic") or None)

    def to_ext_fields(self) -> Fields:
        out: Fields = {"consumerGroup": self.consumer_group}
        _put(out, "topic", self.topic)
        return out


@dataclass(frozen=True, slots=True)
class ConsumerGroupRequestHeader:
    """``consumerGroup`` only: GET_CONSUMER_CONNECTION_LIST."""

    consumer_group: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"))

    def to_ext_fields(self) -> Fields:
        return {"consumerGroup": self.consumer_group}


@dataclass(frozen=True, slots=True)
class ProducerGroupRequestHeader:
    """``producerGroup`` only: GET_PRODUCER_CONNECTION_LIST."""

    producer_group: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "producerGroup"))

    def to_ext_fields(self) -> Fields:
        return {"producerGroup": self.producer_group}


# -- name server -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegisterBrokerRequestHeader:
    broker_name: str
    broker_addr: str
    cluster_name: str
    ha_server_addr: str
    broker_id: int
    compressed: bool = False
    body_crc32: int = 0

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(
            broker_name=_s(d, "brokerName"),
            broker_addr=_s(d, "brokerAddr"),
            cluster_name=_s(d, "clusterName"),
            ha_server_addr=_s(d, "haServerAddr"),
            broker_id=_i(d, "brokerId"),
            compressed=_b(d, "compressed"),
            body_crc32=_oi(d, "bodyCrc32", 0) or 0,
        )

    def to_ext_fields(self) -> Fields:
        return {
            "brokerName": self.broker_name,
            "brokerAddr": self.broker_addr,
            "clusterName": self.cluster_name,
            "haServerAddr": self.ha_server_addr,
            "brokerId": str(self.broker_id),
            "compressed": _bs(self.compressed),
            "bodyCrc32": str(self.body_crc32),
        }


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRequestHeader:
    broker_name: str
    broker_addr: str
    cluster_name: str
    broker_id: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "brokerName"), _s(d, "brokerAddr"), _s(d, "clusterName"), _i(d, "brokerId"))

    def to_ext_fields(self) -> Fields:
        return {
            "brokerName": self.broker_name,
            "brokerAddr": self.broker_addr,
            "clusterName": self.cluster_name,
            "brokerId": str(self.broker_id),
        }


@dataclass(frozen=True, slots=True)
class KVConfigRequestHeader:
    """PUT_KV_CONFIG (with value), GET_KV_CONFIG / DELETE_KV_CONFIG (without)."""

    namespace: str
    key: str
    value: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "namespace"), _s(d, "key"), _os(d, "value"))

    def to_ext_fields(self) -> Fields:
        out: Fields = {"namespace": self.namespace, "key": self.key}
        _put(out, "value", self.value)
        return out
