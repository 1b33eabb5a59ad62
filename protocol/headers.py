"""Typed custom headers (the ``extFields`` of a RemotingCommand) for every command the name server, broker and clients
speak.

Each header is a frozen slotted dataclass with an explicit ``from_ext_fields`` / ``to_ext_fields`` pair — no
reflection, so mistakes stay visible to mypy and the hot path stays cheap. Field names on the wire are exactly
RocketMQ's (``protocol.md`` §b; J 4.9.7 ``*RequestHeader`` / ``*ResponseHeader`` classes). Rules shared by every
header:

* A required field (``!`` below, ``@CFNotNull`` in J) that is absent raises ``MissingHeaderFieldError`` with J's
  text ``the custom field <name> is null``.
* Numbers arrive as decimal text (the frame decoder already turned JSON numbers into text); text that does not parse
  raises ``BadHeaderFieldError`` naming the field and the value.
* Booleans accept ``true``/``false`` in any case and ``1``/``0`` (the C++ client writes ``"0"`` for unitMode/batch).
* ``to_ext_fields`` always writes strings; booleans as ``true``/``false``; optional fields that are ``None`` are left
  out. The one exception is ``ResetOffsetRequestHeader.to_ext_fields(numeric_bool=True)``: C++ reads ``isForce`` with
  ``atoi``, so it needs ``1``/``0``.

Requests (``!`` = required, otherwise nullable):

    | code | command                              | header class                           | fields                               |
    |------|--------------------------------------|----------------------------------------|--------------------------------------|
    | 10   | SEND_MESSAGE                         | SendMessageRequestHeader               | !producerGroup !topic !defaultTopic  |
    |      |                                      |                                        | !defaultTopicQueueNums !queueId      |
    |      |                                      |                                        | !sysFlag !bornTimestamp !flag        |
    |      |                                      |                                        | properties reconsumeTimes unitMode   |
    |      |                                      |                                        | batch maxReconsumeTimes brokerName   |
    | 310  | SEND_MESSAGE_V2 (+320 SEND_BATCH)    | SendMessageRequestHeaderV2             | !a..!h, i..n (table below)           |
    | 11   | PULL_MESSAGE                         | PullMessageRequestHeader               | !consumerGroup !topic !queueId       |
    |      |                                      |                                        | !queueOffset !maxMsgNums !sysFlag    |
    |      |                                      |                                        | !commitOffset !suspendTimeoutMillis  |
    |      |                                      |                                        | subscription !subVersion             |
    |      |                                      |                                        | expressionType                       |
    | 12   | QUERY_MESSAGE                        | QueryMessageRequestHeader              | !topic !key !maxNum !beginTimestamp  |
    |      |                                      |                                        | !endTimestamp _UNIQUE_KEY_QUERY      |
    | 14   | QUERY_CONSUMER_OFFSET                | QueryConsumerOffsetRequestHeader       | !consumerGroup !topic !queueId       |
    | 15   | UPDATE_CONSUMER_OFFSET               | UpdateConsumerOffsetRequestHeader      | !consumerGroup !topic !queueId       |
    |      |                                      |                                        | !commitOffset                        |
    | 17   | UPDATE_AND_CREATE_TOPIC              | CreateTopicRequestHeader               | !topic !defaultTopic !readQueueNums  |
    |      |                                      |                                        | !writeQueueNums !perm                |
    |      |                                      |                                        | !topicFilterType topicSysFlag order  |
    | 29   | SEARCH_OFFSET_BY_TIMESTAMP           | SearchOffsetRequestHeader              | !topic !queueId !timestamp           |
    | 30   | GET_MAX_OFFSET                       | QueueRequestHeader                     | !topic !queueId                      |
    | 31   | GET_MIN_OFFSET                       | QueueRequestHeader                     | !topic !queueId                      |
    | 32   | GET_EARLIEST_MSG_STORETIME           | QueueRequestHeader                     | !topic !queueId                      |
    | 33   | VIEW_MESSAGE_BY_ID                   | ViewMessageRequestHeader               | !offset                              |
    | 35   | UNREGISTER_CLIENT                    | UnregisterClientRequestHeader          | !clientID producerGroup consumerGroup|
    | 36   | CONSUMER_SEND_MSG_BACK               | ConsumerSendMsgBackRequestHeader       | !offset !group !delayLevel           |
    |      |                                      |                                        | originMsgId originTopic unitMode     |
    |      |                                      |                                        | maxReconsumeTimes                    |
    | 37   | END_TRANSACTION                      | EndTransactionRequestHeader            | !producerGroup !tranStateTableOffset |
    |      |                                      |                                        | !commitLogOffset !commitOrRollback   |
    |      |                                      |                                        | fromTransactionCheck !msgId          |
    |      |                                      |                                        | transactionId                        |
    | 38   | GET_CONSUMER_LIST_BY_GROUP           | GetConsumerListByGroupRequestHeader    | !consumerGroup                       |
    | 39   | CHECK_TRANSACTION_STATE (b→c)        | CheckTransactionStateRequestHeader     | !tranStateTableOffset                |
    |      |                                      |                                        | !commitLogOffset msgId transactionId |
    |      |                                      |                                        | offsetMsgId                          |
    | 40   | NOTIFY_CONSUMER_IDS_CHANGED (b→c)    | NotifyConsumerIdsChangedRequestHeader  | !consumerGroup                       |
    | 100  | PUT_KV_CONFIG                        | PutKVConfigRequestHeader               | !namespace !key !value               |
    | 101  | GET_KV_CONFIG                        | GetKVConfigRequestHeader               | !namespace !key                      |
    | 102  | DELETE_KV_CONFIG                     | DeleteKVConfigRequestHeader            | !namespace !key                      |
    | 103  | REGISTER_BROKER                      | RegisterBrokerRequestHeader            | !brokerName !brokerAddr !clusterName |
    |      |                                      |                                        | !haServerAddr !brokerId compressed   |
    |      |                                      |                                        | bodyCrc32                            |
    | 104  | UNREGISTER_BROKER                    | UnregisterBrokerRequestHeader          | !brokerName !brokerAddr !clusterName |
    |      |                                      |                                        | !brokerId                            |
    | 105  | GET_ROUTEINFO_BY_TOPIC               | GetRouteInfoRequestHeader              | !topic acceptStandardJsonOnly        |
    | 202  | GET_TOPIC_STATS_INFO                 | TopicRequestHeader                     | !topic                               |
    | 203  | GET_CONSUMER_CONNECTION_LIST         | ConsumerGroupRequestHeader             | !consumerGroup                       |
    | 204  | GET_PRODUCER_CONNECTION_LIST         | ProducerGroupRequestHeader             | !producerGroup                       |
    | 205  | WIPE_WRITE_PERM_OF_BROKER            | BrokerNameRequestHeader                | !brokerName                          |
    | 207  | DELETE_SUBSCRIPTIONGROUP             | DeleteSubscriptionGroupRequestHeader   | !groupName removeOffset              |
    | 208  | GET_CONSUME_STATS                    | GetConsumeStatsRequestHeader           | !consumerGroup topic                 |
    | 215  | DELETE_TOPIC_IN_BROKER               | TopicRequestHeader                     | !topic                               |
    | 216  | DELETE_TOPIC_IN_NAMESRV              | TopicRequestHeader                     | !topic                               |
    | 219  | GET_KVLIST_BY_NAMESPACE              | GetKVListByNamespaceRequestHeader      | !namespace                           |
    | 220  | RESET_CONSUMER_CLIENT_OFFSET (b→c)   | ResetOffsetRequestHeader               | !topic !group !timestamp !isForce    |
    | 221  | GET_CONSUMER_STATUS_FROM_CLIENT (b→c)| GetConsumerStatusRequestHeader         | !topic !group clientAddr             |
    | 222  | INVOKE_BROKER_TO_RESET_OFFSET        | ResetOffsetRequestHeader               | !topic !group !timestamp !isForce    |
    | 223  | INVOKE_BROKER_TO_GET_CONSUMER_STATUS | GetConsumerStatusRequestHeader         | !topic !group clientAddr             |
    | 224  | GET_TOPICS_BY_CLUSTER                | GetTopicsByClusterRequestHeader        | !cluster                             |
    | 300  | QUERY_TOPIC_CONSUME_BY_WHO           | TopicRequestHeader                     | !topic                               |
    | 303  | QUERY_CONSUME_TIME_SPAN              | QueryConsumeTimeSpanRequestHeader      | !topic !group                        |
    | 307  | GET_CONSUMER_RUNNING_INFO (b→c)      | GetConsumerRunningInfoRequestHeader    | !consumerGroup !clientId jstackEnable|
    | 309  | CONSUME_MESSAGE_DIRECTLY (+b→c)      | ConsumeMessageDirectlyResultRequest-   | !consumerGroup clientId msgId        |
    |      |                                      | Header                                 | brokerName                           |
    | 314  | CLONE_GROUP_OFFSET                   | CloneGroupOffsetRequestHeader          | !srcGroup !destGroup topic offline   |
    | 317  | GET_BROKER_CONSUME_STATS             | GetConsumeStatsInBrokerHeader          | !isOrder                             |
    | 321  | QUERY_CONSUME_QUEUE                  | QueryConsumeQueueRequestHeader         | !topic !queueId !index !count        |
    |      |                                      |                                        | consumerGroup                        |
    | 322  | QUERY_DATA_VERSION                   | QueryDataVersionRequestHeader          | !brokerName !brokerAddr !clusterName |
    |      |                                      |                                        | !brokerId                            |
    | 327  | ADD_WRITE_PERM_OF_BROKER             | BrokerNameRequestHeader                | !brokerName                          |

No header (body only, see ``protocol.bodies``): HEART_BEAT, LOCK/UNLOCK_BATCH_MQ, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
UPDATE_BROKER_CONFIG / GET_BROKER_CONFIG (properties text), GET_BROKER_CLUSTER_INFO, GET_ALL_TOPIC_CONFIG,
GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET, GET_SYSTEM_TOPIC_LIST_FROM_BROKER, ….

Responses:

    | command                                   | header class                         | fields                          |
    |-------------------------------------------|--------------------------------------|---------------------------------|
    | SEND_MESSAGE(_V2), SEND_BATCH_MESSAGE     | SendMessageResponseHeader            | !msgId !queueId !queueOffset    |
    |                                           |                                      | transactionId MSG_REGION        |
    |                                           |                                      | TRACE_ON                        |
    | PULL_MESSAGE                              | PullMessageResponseHeader            | !suggestWhichBrokerId           |
    |                                           |                                      | !nextBeginOffset !minOffset     |
    |                                           |                                      | !maxOffset                      |
    | QUERY_CONSUMER_OFFSET, GET_MAX/MIN_OFFSET,| OffsetResponseHeader                 | !offset                         |
    | SEARCH_OFFSET_BY_TIMESTAMP                |                                      |                                 |
    | GET_EARLIEST_MSG_STORETIME                | GetEarliestMsgStoretimeResponseHeader| !timestamp                      |
    | QUERY_MESSAGE                             | QueryMessageResponseHeader           | !indexLastUpdateTimestamp       |
    |                                           |                                      | !indexLastUpdatePhyoffset       |
    | REGISTER_BROKER                           | RegisterBrokerResponseHeader         | haServerAddr masterAddr         |
    | GET_KV_CONFIG                             | GetKVConfigResponseHeader            | value                           |
    | QUERY_DATA_VERSION                        | QueryDataVersionResponseHeader       | !changed                        |
    | GET_BROKER_CONFIG                         | GetBrokerConfigResponseHeader        | !version                        |
    | WIPE_WRITE_PERM_OF_BROKER                 | WipeWritePermOfBrokerResponseHeader  | !wipeTopicCount                 |
    | ADD_WRITE_PERM_OF_BROKER                  | AddWritePermOfBrokerResponseHeader   | !addTopicCount                  |

SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE use one-letter names (``SendMessageRequestHeaderV2``); ``to_v1``/``to_v2``
convert, and ``SendMessageRequestHeader.from_v2_ext_fields`` / ``to_v2_ext_fields`` go straight between the V1 object
and the V2 wire names (what the broker and the client do per message):

    | V2 | V1 name               | V2 | V1 name              | V2 | V1 name           |
    |----|-----------------------|----|----------------------|----|-------------------|
    | a  | producerGroup         | f  | sysFlag              | k  | unitMode          |
    | b  | topic                 | g  | bornTimestamp        | l  | maxReconsumeTimes |
    | c  | defaultTopic          | h  | flag                 | m  | batch             |
    | d  | defaultTopicQueueNums | i  | properties           | n  | brokerName        |
    | e  | queueId               | j  | reconsumeTimes       |    |                   |

Hot headers (send V1/V2, send response, pull request/response) parse in one ``try`` block with direct indexing and
fall back to the field-by-field ``_from_ext_fields_checked`` only to produce the precise error (or for rare spellings
such as ``"TRUE"``); they are built through their slots' descriptors, which skips the frozen dataclass's guarded
``__setattr__`` (about half the construction cost). Tests check that both paths agree on any input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Final, Protocol, Self, TypeVar

from protocol.codes import RequestCode
from protocol.errors import MalformedFrameError


class MalformedHeaderError(MalformedFrameError, ValueError):
    """A custom header that cannot be read (missing or malformed field)."""


class MissingHeaderFieldError(MalformedHeaderError):
    """A required field is absent; the text is J's, ``the custom field <x> is null``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the custom field <{name}> is null")
        self.field = name


class BadHeaderFieldError(MalformedHeaderError):
    """A field whose text does not parse as its type (``"abc"`` for a Long); names the field and the value."""

    def __init__(self, name: str, value: str, kind: str) -> None:
        super().__init__(f"the custom field <{name}> is not a valid {kind}: {value!r}")
        self.field = name
        self.value = value


Fields = dict[str, str]


class CustomHeader(Protocol):
    """What every header object offers."""

    def to_ext_fields(self) -> Fields: ...


class HeaderClass(Protocol):
    """What every header class offers (``type[SendMessageRequestHeader]`` matches)."""

    def from_ext_fields(self, d: Fields, /) -> CustomHeader: ...


# -- field readers (the checked path) --------------------------------------------------------------------------------


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


def _rb(d: Fields, name: str) -> bool:
    """A required boolean."""
    if name not in d:
        raise MissingHeaderFieldError(name)
    return _b(d, name)


def _bs(value: bool) -> str:
    return "true" if value else "false"


def _put(out: Fields, name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        out[name] = _bs(value)
    else:
        out[name] = str(value)


# The fast paths' boolean table: exact spellings only; anything else (``"TRUE"``) takes the checked path.
_BOOL_F: Final[dict[str, bool]] = {"": False, "false": False, "true": True, "0": False, "1": True}
_BOOL_T: Final[dict[str, bool]] = {"": True, "false": False, "true": True, "0": False, "1": True}

_new = object.__new__
_Setter = Callable[[object, object], None]


def _slot_setters(cls: type, names: str) -> tuple[_Setter, ...]:
    """The ``__set__`` of each slot descriptor of a frozen slotted dataclass, in field order (import time only).
    ``names`` must list every field, so a field added later cannot be left unset by a fast constructor."""
    if tuple(names.split()) != tuple(f.name for f in fields(cls)):
        raise AssertionError(f"{cls.__name__}: fast-path fields {names!r} do not match the dataclass fields")
    setters: tuple[_Setter, ...] = tuple(getattr(cls, n).__set__ for n in names.split())
    return setters


# -- send ------------------------------------------------------------------------------------------------------------


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


# -- pull ------------------------------------------------------------------------------------------------------------

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


QueryConsumerOffsetResponseHeader = OffsetResponseHeader
GetMaxOffsetResponseHeader = OffsetResponseHeader
GetMinOffsetResponseHeader = OffsetResponseHeader
SearchOffsetResponseHeader = OffsetResponseHeader


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
    """UNREGISTER_CLIENT (35). C++ sends the group it does not have as ``""``: read as None."""

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
    """NOTIFY_CONSUMER_IDS_CHANGED (40), broker → client, oneway."""

    consumer_group: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"))

    def to_ext_fields(self) -> Fields:
        return {"consumerGroup": self.consumer_group}


@dataclass(frozen=True, slots=True)
class ConsumerSendMsgBackRequestHeader:
    """CONSUMER_SEND_MSG_BACK (36): ``offset`` is the commit-log offset of the message to retry."""

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
    """VIEW_MESSAGE_BY_ID (33): ``offset`` is the commit-log offset decoded from an offset msgId."""

    offset: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_i(d, "offset"))

    def to_ext_fields(self) -> Fields:
        return {"offset": str(self.offset)}


@dataclass(frozen=True, slots=True)
class QueryMessageRequestHeader:
    """QUERY_MESSAGE (12). ``_UNIQUE_KEY_QUERY=true`` (an extra extField J adds) makes ``key`` a UNIQ_KEY lookup."""

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
    """END_TRANSACTION (37); oneway from C++. ``commit_or_rollback`` is the TRANSACTION_*_TYPE sysFlag value
    (0x8 commit, 0xC rollback, 0x0 unknown)."""

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
    """CHECK_TRANSACTION_STATE (39), broker → producer; the half message travels in the body."""

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
    ``isForce`` (headers are read by field name); C++ reads it with ``atoi``, so ``to_ext_fields(numeric_bool=True)``
    writes ``1``/``0`` — use it when the target client's language is CPP."""

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
    """GET_CONSUMER_STATUS_FROM_CLIENT (221, broker → client) and INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223)."""

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
    """GET_CONSUMER_RUNNING_INFO (307): admin → broker, relayed broker → client. The client's reply body is
    ConsumerRunningInfo, which C++ writes with object keys: relay it as bytes."""

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
    """UPDATE_AND_CREATE_TOPIC (17). J also requires ``order``; a missing one reads as false here."""

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
    """A header with only ``topic``: DELETE_TOPIC_IN_BROKER, DELETE_TOPIC_IN_NAMESRV, GET_TOPIC_STATS_INFO."""

    topic: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"))

    def to_ext_fields(self) -> Fields:
        return {"topic": self.topic}


DeleteTopicRequestHeader = TopicRequestHeader
DeleteTopicFromNamesrvRequestHeader = TopicRequestHeader
GetTopicStatsInfoRequestHeader = TopicRequestHeader


@dataclass(frozen=True, slots=True)
class GetRouteInfoRequestHeader:
    """GET_ROUTEINFO_BY_TOPIC (105). ``accept_standard_json_only`` is None when the client did not say."""

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
    """GET_CONSUME_STATS (208): every topic of the group when ``topic`` is absent or empty."""

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


GetConsumerConnectionListRequestHeader = ConsumerGroupRequestHeader


@dataclass(frozen=True, slots=True)
class ProducerGroupRequestHeader:
    """``producerGroup`` only: GET_PRODUCER_CONNECTION_LIST."""

    producer_group: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "producerGroup"))

    def to_ext_fields(self) -> Fields:
        return {"producerGroup": self.producer_group}


GetProducerConnectionListRequestHeader = ProducerGroupRequestHeader
QueryTopicConsumeByWhoRequestHeader = TopicRequestHeader


@dataclass(frozen=True, slots=True)
class QueryConsumeTimeSpanRequestHeader:
    """QUERY_CONSUME_TIME_SPAN (303): store-time span of every queue of ``topic`` and where ``group`` is in it."""

    topic: str
    group: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"), _s(d, "group"))

    def to_ext_fields(self) -> Fields:
        return {"topic": self.topic, "group": self.group}


@dataclass(frozen=True, slots=True)
class QueryConsumeQueueRequestHeader:
    """QUERY_CONSUME_QUEUE (321): ``count`` raw consume-queue units of ``topic``/``queueId`` from queue offset
    ``index``; ``consumerGroup`` adds that group's subscription. J declares every field nullable (a missing number
    reads as 0, a missing topic fails later with a NullPointerException); here topic, queueId, index and count are
    required so a bad request gets J's "the custom field <x> is null" instead."""

    topic: str
    queue_id: int
    index: int
    count: int
    consumer_group: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "topic"), _i(d, "queueId"), _i(d, "index"), _i(d, "count"), _os(d, "consumerGroup") or None)

    def to_ext_fields(self) -> Fields:
        out: Fields = {
            "topic": self.topic,
            "queueId": str(self.queue_id),
            "index": str(self.index),
            "count": str(self.count),
        }
        _put(out, "consumerGroup", self.consumer_group)
        return out


@dataclass(frozen=True, slots=True)
class CloneGroupOffsetRequestHeader:
    """CLONE_GROUP_OFFSET (314): copy ``srcGroup``'s committed offsets on ``topic`` (every topic it has offsets on
    when absent or empty) to ``destGroup``. ``offline`` = skip the check that ``srcGroup``'s online consumers
    subscribe the topic."""

    src_group: str
    dest_group: str
    topic: str | None = None
    offline: bool = False

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "srcGroup"), _s(d, "destGroup"), _os(d, "topic") or None, _b(d, "offline"))

    def to_ext_fields(self) -> Fields:
        out: Fields = {"srcGroup": self.src_group, "destGroup": self.dest_group}
        _put(out, "topic", self.topic)
        out["offline"] = _bs(self.offline)
        return out


@dataclass(frozen=True, slots=True)
class GetConsumeStatsInBrokerHeader:
    """GET_BROKER_CONSUME_STATS (317). The key is literally ``isOrder`` (J reads headers by field name);
    ``true`` = only ordered topics. Required, as J's ``@CFNotNull boolean isOrder``."""

    is_order: bool

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_rb(d, "isOrder"))

    def to_ext_fields(self) -> Fields:
        return {"isOrder": _bs(self.is_order)}


@dataclass(frozen=True, slots=True)
class ConsumeMessageDirectlyResultRequestHeader:
    """CONSUME_MESSAGE_DIRECTLY (309): admin → broker, relayed broker → client with the stored message as the body.
    ``msgId`` is an offset msgId (``protocol.message.decode_offset_msg_id``); the broker sets ``brokerName`` to its
    own name before relaying. Only ``consumerGroup`` is required (J 4.9.7)."""

    consumer_group: str
    client_id: str | None = None
    msg_id: str | None = None
    broker_name: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "consumerGroup"), _os(d, "clientId"), _os(d, "msgId"), _os(d, "brokerName"))

    def to_ext_fields(self) -> Fields:
        out: Fields = {"consumerGroup": self.consumer_group}
        _put(out, "clientId", self.client_id)
        _put(out, "msgId", self.msg_id)
        _put(out, "brokerName", self.broker_name)
        return out


@dataclass(frozen=True, slots=True)
class GetBrokerConfigResponseHeader:
    """Reply of GET_BROKER_CONFIG (26): the body is the properties text, ``version`` its DataVersion JSON."""

    version: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "version"))

    def to_ext_fields(self) -> Fields:
        return {"version": self.version}


# -- name server -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegisterBrokerRequestHeader:
    """REGISTER_BROKER (103). ``body_crc32`` = crc32(body) & 0x7FFFFFFF, 0 = do not check; ``compressed`` selects
    the zlib form of RegisterBrokerBody."""

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
class RegisterBrokerResponseHeader:
    """Reply of REGISTER_BROKER: the master's HA and broker address, for slaves (None for a master)."""

    ha_server_addr: str | None = None
    master_addr: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_os(d, "haServerAddr"), _os(d, "masterAddr"))

    def to_ext_fields(self) -> Fields:
        out: Fields = {}
        _put(out, "haServerAddr", self.ha_server_addr)
        _put(out, "masterAddr", self.master_addr)
        return out


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRequestHeader:
    """UNREGISTER_BROKER (104); the same four fields identify the broker in QUERY_DATA_VERSION (322)."""

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


QueryDataVersionRequestHeader = UnregisterBrokerRequestHeader


@dataclass(frozen=True, slots=True)
class QueryDataVersionResponseHeader:
    """Reply of QUERY_DATA_VERSION: whether the name server's DataVersion for the broker differs from the body's."""

    changed: bool

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_rb(d, "changed"))

    def to_ext_fields(self) -> Fields:
        return {"changed": _bs(self.changed)}


@dataclass(frozen=True, slots=True)
class KVConfigRequestHeader:
    """PUT_KV_CONFIG (with value), GET_KV_CONFIG / DELETE_KV_CONFIG (without); the lenient form of the three
    specific classes below."""

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


@dataclass(frozen=True, slots=True)
class PutKVConfigRequestHeader:
    namespace: str
    key: str
    value: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "namespace"), _s(d, "key"), _s(d, "value"))

    def to_ext_fields(self) -> Fields:
        return {"namespace": self.namespace, "key": self.key, "value": self.value}


@dataclass(frozen=True, slots=True)
class NamespaceKeyRequestHeader:
    """GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102)."""

    namespace: str
    key: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "namespace"), _s(d, "key"))

    def to_ext_fields(self) -> Fields:
        return {"namespace": self.namespace, "key": self.key}


GetKVConfigRequestHeader = NamespaceKeyRequestHeader
DeleteKVConfigRequestHeader = NamespaceKeyRequestHeader


@dataclass(frozen=True, slots=True)
class GetKVConfigResponseHeader:
    value: str | None = None

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_os(d, "value"))

    def to_ext_fields(self) -> Fields:
        out: Fields = {}
        _put(out, "value", self.value)
        return out


@dataclass(frozen=True, slots=True)
class GetKVListByNamespaceRequestHeader:
    namespace: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "namespace"))

    def to_ext_fields(self) -> Fields:
        return {"namespace": self.namespace}


@dataclass(frozen=True, slots=True)
class GetTopicsByClusterRequestHeader:
    cluster: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "cluster"))

    def to_ext_fields(self) -> Fields:
        return {"cluster": self.cluster}


@dataclass(frozen=True, slots=True)
class BrokerNameRequestHeader:
    """``brokerName`` only: WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327)."""

    broker_name: str

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_s(d, "brokerName"))

    def to_ext_fields(self) -> Fields:
        return {"brokerName": self.broker_name}


WipeWritePermOfBrokerRequestHeader = BrokerNameRequestHeader
AddWritePermOfBrokerRequestHeader = BrokerNameRequestHeader


@dataclass(frozen=True, slots=True)
class WipeWritePermOfBrokerResponseHeader:
    wipe_topic_count: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_i(d, "wipeTopicCount"))

    def to_ext_fields(self) -> Fields:
        return {"wipeTopicCount": str(self.wipe_topic_count)}


@dataclass(frozen=True, slots=True)
class AddWritePermOfBrokerResponseHeader:
    add_topic_count: int

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        return cls(_i(d, "addTopicCount"))

    def to_ext_fields(self) -> Fields:
        return {"addTopicCount": str(self.add_topic_count)}


# -- registries ------------------------------------------------------------------------------------------------------

REQUEST_HEADERS: Final[Mapping[int, HeaderClass]] = {
    RequestCode.SEND_MESSAGE: SendMessageRequestHeader,
    RequestCode.PULL_MESSAGE: PullMessageRequestHeader,
    RequestCode.QUERY_MESSAGE: QueryMessageRequestHeader,
    RequestCode.QUERY_CONSUMER_OFFSET: QueryConsumerOffsetRequestHeader,
    RequestCode.UPDATE_CONSUMER_OFFSET: UpdateConsumerOffsetRequestHeader,
    RequestCode.UPDATE_AND_CREATE_TOPIC: CreateTopicRequestHeader,
    RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: SearchOffsetRequestHeader,
    RequestCode.GET_MAX_OFFSET: QueueRequestHeader,
    RequestCode.GET_MIN_OFFSET: QueueRequestHeader,
    RequestCode.GET_EARLIEST_MSG_STORETIME: QueueRequestHeader,
    RequestCode.VIEW_MESSAGE_BY_ID: ViewMessageRequestHeader,
    RequestCode.UNREGISTER_CLIENT: UnregisterClientRequestHeader,
    RequestCode.CONSUMER_SEND_MSG_BACK: ConsumerSendMsgBackRequestHeader,
    RequestCode.END_TRANSACTION: EndTransactionRequestHeader,
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: GetConsumerListByGroupRequestHeader,
    RequestCode.CHECK_TRANSACTION_STATE: CheckTransactionStateRequestHeader,
    RequestCode.NOTIFY_CONSUMER_IDS_CHANGED: NotifyConsumerIdsChangedRequestHeader,
    RequestCode.PUT_KV_CONFIG: PutKVConfigRequestHeader,
    RequestCode.GET_KV_CONFIG: NamespaceKeyRequestHeader,
    RequestCode.DELETE_KV_CONFIG: NamespaceKeyRequestHeader,
    RequestCode.REGISTER_BROKER: RegisterBrokerRequestHeader,
    RequestCode.UNREGISTER_BROKER: UnregisterBrokerRequestHeader,
    RequestCode.GET_ROUTEINFO_BY_TOPIC: GetRouteInfoRequestHeader,
    RequestCode.GET_TOPIC_STATS_INFO: TopicRequestHeader,
    RequestCode.GET_CONSUMER_CONNECTION_LIST: ConsumerGroupRequestHeader,
    RequestCode.GET_PRODUCER_CONNECTION_LIST: ProducerGroupRequestHeader,
    RequestCode.WIPE_WRITE_PERM_OF_BROKER: BrokerNameRequestHeader,
    RequestCode.DELETE_SUBSCRIPTIONGROUP: DeleteSubscriptionGroupRequestHeader,
    RequestCode.GET_CONSUME_STATS: GetConsumeStatsRequestHeader,
    RequestCode.DELETE_TOPIC_IN_BROKER: TopicRequestHeader,
    RequestCode.DELETE_TOPIC_IN_NAMESRV: TopicRequestHeader,
    RequestCode.GET_KVLIST_BY_NAMESPACE: GetKVListByNamespaceRequestHeader,
    RequestCode.RESET_CONSUMER_CLIENT_OFFSET: ResetOffsetRequestHeader,
    RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT: GetConsumerStatusRequestHeader,
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: ResetOffsetRequestHeader,
    RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: GetConsumerStatusRequestHeader,
    RequestCode.GET_TOPICS_BY_CLUSTER: GetTopicsByClusterRequestHeader,
    RequestCode.GET_CONSUMER_RUNNING_INFO: GetConsumerRunningInfoRequestHeader,
    RequestCode.SEND_MESSAGE_V2: SendMessageRequestHeaderV2,
    RequestCode.SEND_BATCH_MESSAGE: SendMessageRequestHeaderV2,
    RequestCode.QUERY_DATA_VERSION: UnregisterBrokerRequestHeader,
    RequestCode.ADD_WRITE_PERM_OF_BROKER: BrokerNameRequestHeader,
}
"""Request code → the class of its custom header (commands with a body only are absent)."""

RESPONSE_HEADERS: Final[Mapping[int, HeaderClass]] = {
    RequestCode.SEND_MESSAGE: SendMessageResponseHeader,
    RequestCode.SEND_MESSAGE_V2: SendMessageResponseHeader,
    RequestCode.SEND_BATCH_MESSAGE: SendMessageResponseHeader,
    RequestCode.PULL_MESSAGE: PullMessageResponseHeader,
    RequestCode.QUERY_MESSAGE: QueryMessageResponseHeader,
    RequestCode.QUERY_CONSUMER_OFFSET: OffsetResponseHeader,
    RequestCode.GET_MAX_OFFSET: OffsetResponseHeader,
    RequestCode.GET_MIN_OFFSET: OffsetResponseHeader,
    RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: OffsetResponseHeader,
    RequestCode.GET_EARLIEST_MSG_STORETIME: GetEarliestMsgStoretimeResponseHeader,
    RequestCode.REGISTER_BROKER: RegisterBrokerResponseHeader,
    RequestCode.GET_KV_CONFIG: GetKVConfigResponseHeader,
    RequestCode.QUERY_DATA_VERSION: QueryDataVersionResponseHeader,
    RequestCode.GET_BROKER_CONFIG: GetBrokerConfigResponseHeader,
    RequestCode.WIPE_WRITE_PERM_OF_BROKER: WipeWritePermOfBrokerResponseHeader,
    RequestCode.ADD_WRITE_PERM_OF_BROKER: AddWritePermOfBrokerResponseHeader,
}
"""Request code → the class of the custom header of its (successful) reply."""


def parse_request_header(code: int, d: Fields) -> CustomHeader | None:
    """The typed header of a request by its code, or None for a code without one (a tooling helper; handlers call
    the class they expect directly so mypy sees the type)."""
    cls = REQUEST_HEADERS.get(code)
    return None if cls is None else cls.from_ext_fields(d)
