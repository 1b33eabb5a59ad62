"""JSON bodies of the remoting protocol (cold paths: routes, heartbeats, registration, admin) and the tolerant JSON
reader they share.

Every body class offers ``encode() -> bytes`` (compact UTF-8 JSON) and ``decode(bytes) -> Self``; ``decode`` raises
``BodyDecodeError`` (a ``ValueError``) with the reason. Most are pydantic models (``JsonBody``: attribute names are
snake_case, the wire names are the aliases); the bodies keyed by MessageQueue are hand-written dataclasses, because
J's fastjson writes such maps with JSON objects as keys.

Readers are lenient where the official clients differ (``protocol.md`` §d, "fastjson quirks"):

* enums arrive as J/ali-ons names (``"CLUSTERING"``) or C++ ordinals (``1``); both read as the name;
* longs arrive as numbers or as strings (C++ ``subVersion``), booleans also as ``0``/``1``;
* ``loads_lenient`` takes fastjson's unquoted numeric keys (``{0:"addr"}``) and object keys
  (``{{"brokerName":"b","queueId":0,"topic":"T"}:100}``), and the C++ heartbeat's trailing ``"\\n"``;
* unknown keys are ignored; null lists read as empty.

Writers produce standard JSON with quoted keys (``{"0":"addr"}``), which all three official clients parse (trap 8),
except for MessageQueue-keyed maps, which have no standard form: they are written as fastjson object keys, the only
form J parses.

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| TopicRouteData                         | GET_ROUTEINFO_BY_TOPIC reply                 | {orderTopicConf, queueDatas:[{brokerName,         |
|                                        |                                              |  readQueueNums, writeQueueNums, perm,             |
|                                        |                                              |  topicSysFlag}], brokerDatas:[{cluster,           |
|                                        |                                              |  brokerName, brokerAddrs:{"0":addr}}],            |
|                                        |                                              |  filterServerTable:{addr:[addr]}}                 |
| HeartbeatData                          | HEART_BEAT                                   | {clientID, producerDataSet:[{groupName}],         |
|                                        |                                              |  consumerDataSet:[{groupName, consumeType,        |
|                                        |                                              |  messageModel, consumeFromWhere, unitMode,        |
|                                        |                                              |  subscriptionDataSet:[SubscriptionData]}]}        |
| SubscriptionData                       | (in heartbeats, connections)                 | {topic, subString, tagsSet, codeSet, subVersion,  |
|                                        |                                              |  expressionType, classFilterMode}                 |
| RegisterBrokerBody                     | REGISTER_BROKER                              | {topicConfigSerializeWrapper:{topicConfigTable:   |
|                                        |                                              |  {name:TopicConfig}, dataVersion}, filterServer-  |
|                                        |                                              |  List:[]}; or the zlib form (below)               |
| TopicConfigSerializeWrapper            | GET_ALL_TOPIC_CONFIG reply                   | {topicConfigTable:{name:TopicConfig}, dataVersion}|
| TopicConfig                            | (in the above)                               | {topicName, readQueueNums, writeQueueNums, perm,  |
|                                        |                                              |  topicFilterType, topicSysFlag, order}            |
| DataVersion                            | QUERY_DATA_VERSION body                      | {counter, timestamp}                              |
| ClusterInfo                            | GET_BROKER_CLUSTER_INFO reply                | {brokerAddrTable:{name:BrokerData},               |
|                                        |                                              |  clusterAddrTable:{cluster:[brokerName]}}         |
| TopicList                              | GET_ALL_TOPIC_LIST…, GET_TOPICS_BY_CLUSTER   | {topicList:[...], brokerAddr}                     |
| KVTable                                | GET_KVLIST_BY_NAMESPACE, GET_BROKER_RUNTIME_ | {table:{k:v}}                                     |
|                                        | INFO, REGISTER_BROKER reply                  |                                                   |
| ConsumerListBody                       | GET_CONSUMER_LIST_BY_GROUP reply             | {consumerIdList:[clientId]}                       |
| LockBatchRequestBody / Unlock…         | LOCK_BATCH_MQ / UNLOCK_BATCH_MQ              | {consumerGroup, clientId, mqSet:[MQ],             |
|                                        |                                              |  onlyThisBroker}                                  |
| LockBatchResponseBody                  | LOCK_BATCH_MQ reply                          | {lockOKMQSet:[MQ]}                                |
| SubscriptionGroupConfig                | UPDATE_AND_CREATE_SUBSCRIPTIONGROUP          | {groupName, consumeEnable, consumeFromMinEnable,  |
|                                        |                                              |  consumeBroadcastEnable, retryQueueNums=1,        |
|                                        |                                              |  retryMaxTimes=16, brokerId, whichBrokerWhen-     |
|                                        |                                              |  ConsumeSlowly, notifyConsumerIdsChangedEnable}   |
| SubscriptionGroupWrapper               | GET_ALL_SUBSCRIPTIONGROUP_CONFIG reply       | {subscriptionGroupTable:{g:cfg}, dataVersion}     |
| ConsumerConnection                     | GET_CONSUMER_CONNECTION_LIST reply           | {connectionSet:[{clientId, clientAddr, language,  |
|                                        |                                              |  version}], subscriptionTable:{topic:SubData},    |
|                                        |                                              |  consumeType, messageModel, consumeFromWhere}     |
| ProducerConnection                     | GET_PRODUCER_CONNECTION_LIST reply           | {connectionSet:[Connection]}                      |
| ResetOffsetBody (J form)               | RESET_CONSUMER_CLIENT_OFFSET, INVOKE_BROKER_ | {"offsetTable":{{MQ}:offset}}  (object keys)      |
|                                        | TO_RESET_OFFSET reply                        |                                                   |
| ResetOffsetBody (C form, cpp=True)     | RESET_CONSUMER_CLIENT_OFFSET to C++          | {"offsetTable":[{brokerName,offset,queueId,topic}]}|
| GetConsumerStatusBody                  | GET_CONSUMER_STATUS_FROM_CLIENT …            | {messageQueueTable:{{MQ}:offset},                 |
|                                        |                                              |  consumerTable:{clientId:{{MQ}:offset}}}          |
| TopicStatsTable                        | GET_TOPIC_STATS_INFO reply                   | {offsetTable:{{MQ}:{lastUpdateTimestamp,          |
|                                        |                                              |  maxOffset, minOffset}}}                          |
| ConsumeStats                           | GET_CONSUME_STATS reply                      | {consumeTps, offsetTable:{{MQ}:{brokerOffset,     |
|                                        |                                              |  consumerOffset, lastTimestamp, pullOffset}}}     |
| properties text                        | GET_BROKER_CONFIG reply, UPDATE_BROKER_CONFIG| ``key=value\\n`` lines (java.util.Properties)      |
| HARuntimeInfo                          | GET_BROKER_HA_STATUS (907) reply             | {master, brokerRole, masterCommitLogMaxOffset,    |
|                                        |                                              |  inSyncSlaveNums, haConnectionInfo:[{addr,        |
|                                        |                                              |  slaveAckOffset, diff, inSync, ...}],             |
|                                        |                                              |  haClientRuntimeInfo:{masterAddr, maxOffset, ...}}|
| ConsumeStatsList                       | GET_BROKER_CONSUME_STATS reply               | {brokerAddr, consumeStatsList:[{group:            |
|                                        |                                              |  [ConsumeStats]}], totalDiff}                     |
| GroupList                              | QUERY_TOPIC_CONSUME_BY_WHO reply             | {groupList:[group]}                               |
| QueryConsumeTimeSpanBody               | QUERY_CONSUME_TIME_SPAN reply                | {consumeTimeSpanSet:[{consumeTimeStamp,           |
|                                        |                                              |  delayTime, maxTimeStamp, messageQueue:MQ,        |
|                                        |                                              |  minTimeStamp}]}                                  |
| QueryConsumeQueueResponseBody          | QUERY_CONSUME_QUEUE reply                    | {filterData, maxQueueIndex, minQueueIndex,        |
|                                        |                                              |  queueData:[{bitMap, eval, extendDataJson, msg,   |
|                                        |                                              |  physicOffset, physicSize, tagsCode}],            |
|                                        |                                              |  subscriptionData:SubscriptionData|null}          |
| ConsumeMessageDirectlyResult           | CONSUME_MESSAGE_DIRECTLY reply (client)      | {autoCommit, consumeResult:CMResult, order,       |
|                                        |                                              |  remark, spentTimeMills}                          |

A MessageQueue (MQ) is ``{"brokerName":b,"queueId":q,"topic":t}`` (fastjson's alphabetical order).

Compressed RegisterBrokerBody (header ``compressed=true``; J ``RegisterBrokerBody.encode(true)``): one zlib stream
(Deflater BEST_COMPRESSION) of big-endian parts::

    | int32 len | DataVersion JSON | int32 topicCount | { int32 len | TopicConfig line }* | int32 len | filterServerList JSON |

A TopicConfig line is J 4.9.7 ``TopicConfig.encode()``: exactly five fields separated by one space,
``topicName readQueueNums writeQueueNums perm topicFilterType`` (``decode`` requires five; 5.x appends a sixth,
attributes JSON, which is ignored here). ``topicSysFlag`` and ``order`` do not travel in this form: they read as 0 and
false.

ConsumerRunningInfo (reply to GET_CONSUMER_RUNNING_INFO) is not modelled: C++ writes it pretty-printed with object
keys; relay it as bytes (``loads_lenient`` can still read it for display).
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Final, Self

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    field_validator,
    model_validator,
)

from protocol.codes import LanguageCode

# -- constants -------------------------------------------------------------------------------------------------------

PERM_READ: Final = 4
PERM_WRITE: Final = 2
PERM_INHERIT: Final = 1
PERM_RW: Final = PERM_READ | PERM_WRITE


def is_readable(perm: int) -> bool:
    return bool(perm & PERM_READ)


def is_writeable(perm: int) -> bool:
    return bool(perm & PERM_WRITE)


def is_inherited(perm: int) -> bool:
    return bool(perm & PERM_INHERIT)


def perm_to_string(perm: int) -> str:
    """J ``PermName.perm2String``: ``RW-`` for 6."""
    return (
        ("R" if perm & PERM_READ else "-") + ("W" if perm & PERM_WRITE else "-") + ("X" if perm & PERM_INHERIT else "-")
    )


class ConsumeType(StrEnum):
    """Wire names; the member order is J's ordinal order (C++ sends ordinals)."""

    CONSUME_ACTIVELY = "CONSUME_ACTIVELY"  # 0: pull
    CONSUME_PASSIVELY = "CONSUME_PASSIVELY"  # 1: push


class MessageModel(StrEnum):
    BROADCASTING = "BROADCASTING"  # 0
    CLUSTERING = "CLUSTERING"  # 1


class ConsumeFromWhere(StrEnum):
    CONSUME_FROM_LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"  # 0
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"
    CONSUME_FROM_MIN_OFFSET = "CONSUME_FROM_MIN_OFFSET"  # 2
    CONSUME_FROM_MAX_OFFSET = "CONSUME_FROM_MAX_OFFSET"  # 3
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"  # 4
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"  # 5


CONSUME_TYPES: Final = tuple(e.value for e in ConsumeType)
MESSAGE_MODELS: Final = tuple(e.value for e in MessageModel)
CONSUME_FROM_WHERE: Final = tuple(e.value for e in ConsumeFromWhere)

MAX_INFLATED: Final = 64 * 1024 * 1024
"""A compressed RegisterBrokerBody may not inflate beyond this (zip-bomb guard)."""

_I32: Final = struct.Struct(">i")
_LONG_RANGE: Final = 1 << 64
_LONG_MAX: Final = (1 << 63) - 1

BodyBytes = bytes | bytearray | memoryview | str


class BodyDecodeError(ValueError):
    """A body that cannot be decoded; the message says what was wrong."""


# -- JSON ------------------------------------------------------------------------------------------------------------

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps(obj: Any) -> bytes:
    """Compact standard JSON, UTF-8."""
    return _dumps(obj).encode("utf-8")


def _text(data: BodyBytes) -> str:
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyDecodeError(f"body is not UTF-8: {exc}") from None


def _freeze(value: Any) -> Hashable:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value  # type: ignore[no-any-return]


def loads_lenient(data: BodyBytes, *, object_key: Callable[[dict[Any, Any]], Hashable] | None = None) -> Any:
    """``json.loads`` that also reads fastjson's output: unquoted numeric or identifier keys (``{0:"a"}`` reads as
    ``{"0":"a"}``), object keys (each passed to ``object_key``; by default frozen into a sorted tuple of pairs) and
    trailing commas. Raises ``BodyDecodeError``."""
    text = _text(data)
    try:
        return json.loads(text)
    except RecursionError:
        raise BodyDecodeError("JSON nested too deeply") from None
    except ValueError:
        pass
    try:
        return _LenientParser(text, object_key or _freeze).parse()
    except RecursionError:
        raise BodyDecodeError("JSON nested too deeply") from None


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_WS = re.compile(r"[ \t\n\r]*")
_MAX_DEPTH: Final = 256


class _LenientParser:
    """A small recursive-descent JSON reader for the fastjson dialect (only used when ``json.loads`` fails)."""

    __slots__ = ("_s", "_n", "_object_key")

    def __init__(self, text: str, object_key: Callable[[dict[Any, Any]], Hashable]) -> None:
        self._s = text
        self._n = len(text)
        self._object_key = object_key

    def _fail(self, what: str, pos: int) -> BodyDecodeError:
        return BodyDecodeError(f"not JSON: {what} at char {pos}")

    def _ws(self, pos: int) -> int:
        return _WS.match(self._s, pos).end()  # type: ignore[union-attr]  # [ \t\n\r]* always matches

    def _peek(self, pos: int) -> str:
        if pos >= self._n:
            raise self._fail("unexpected end of data", pos)
        return self._s[pos]

    def parse(self) -> Any:
        value, pos = self._value(self._ws(0), 0)
        pos = self._ws(pos)
        if pos != self._n:
            raise self._fail("extra data", pos)
        return value

    def _string(self, pos: int) -> tuple[str, int]:
        m = _STRING.match(self._s, pos)
        if m is None:
            raise self._fail("unterminated string", pos)
        try:
            value: str = json.loads(m.group())  # escapes and control characters checked by the C decoder
        except ValueError as exc:
            raise self._fail(f"bad string ({exc})", pos) from None
        return value, m.end()

    def _value(self, pos: int, depth: int) -> tuple[Any, int]:
        c = self._peek(pos)
        if c == '"':
            return self._string(pos)
        if c == "{":
            return self._object(pos + 1, depth + 1)
        if c == "[":
            return self._array(pos + 1, depth + 1)
        m = _NUMBER.match(self._s, pos)
        if m is not None:
            text = m.group()
            return (float(text) if m.group(1) or m.group(2) else int(text)), m.end()
        for literal, value in (("true", True), ("false", False), ("null", None)):
            if self._s.startswith(literal, pos):
                return value, pos + len(literal)
        raise self._fail(f"unexpected {c!r}", pos)

    def _key(self, pos: int, depth: int) -> tuple[Hashable, int]:
        c = self._peek(pos)
        if c == '"':
            return self._string(pos)
        if c == "{":
            obj, end = self._object(pos + 1, depth + 1)
            try:
                return self._object_key(obj), end
            except (ValueError, KeyError, TypeError) as exc:
                raise self._fail(f"unusable object key ({exc})", pos) from None
        m = _NUMBER.match(self._s, pos) or _IDENT.match(self._s, pos)
        if m is None:
            raise self._fail(f"unexpected {c!r} where a key belongs", pos)
        return m.group(), m.end()

    def _object(self, pos: int, depth: int) -> tuple[dict[Hashable, Any], int]:
        if depth > _MAX_DEPTH:
            raise self._fail("nested too deeply", pos)
        out: dict[Hashable, Any] = {}
        pos = self._ws(pos)
        if self._peek(pos) == "}":
            return out, pos + 1
        while True:
            key, pos = self._key(pos, depth)
            pos = self._ws(pos)
            if self._peek(pos) != ":":
                raise self._fail("expected ':'", pos)
            value, pos = self._value(self._ws(pos + 1), depth)
            out[key] = value
            pos = self._ws(pos)
            c = self._peek(pos)
            if c == "}":
                return out, pos + 1
            if c != ",":
                raise self._fail("expected ',' or '}'", pos)
            pos = self._ws(pos + 1)
            if self._peek(pos) == "}":  # trailing comma
                return out, pos + 1

    def _array(self, pos: int, depth: int) -> tuple[list[Any], int]:
        if depth > _MAX_DEPTH:
            raise self._fail("nested too deeply", pos)
        out: list[Any] = []
        pos = self._ws(pos)
        if self._peek(pos) == "]":
            return out, pos + 1
        while True:
            value, pos = self._value(pos, depth)
            out.append(value)
            pos = self._ws(pos)
            c = self._peek(pos)
            if c == "]":
                return out, pos + 1
            if c != ",":
                raise self._fail("expected ',' or ']'", pos)
            pos = self._ws(pos + 1)
            if self._peek(pos) == "]":
                return out, pos + 1


def _long(value: Any, what: str) -> int:
    """A Java long from a JSON number or numeric string; C++'s unsigned 64-bit text (-1 printed as
    18446744073709551615) wraps to the signed value."""
    if isinstance(value, bool):
        raise BodyDecodeError(f"{what}: boolean where a number belongs")
    if isinstance(value, int):
        n = value
    elif isinstance(value, float) and value.is_integer():
        n = int(value)
    elif isinstance(value, str):
        try:
            n = int(value.strip())
        except ValueError:
            raise BodyDecodeError(f"{what}: {value!r} is not a number") from None
    else:
        raise BodyDecodeError(f"{what}: {value!r} is not a number")
    if _LONG_MAX < n < _LONG_RANGE:
        n -= _LONG_RANGE
    return n


def _enum_name(value: Any, names: tuple[str, ...], what: str) -> Any:
    """An enum ordinal (int or digit string, as C++ sends) → its name; anything else passes through to pydantic."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: boolean is not an enum value")
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        i = int(value)
        if 0 <= i < len(names):
            return names[i]
        raise ValueError(f"{what}: ordinal {i} out of range")
    return value


# -- MessageQueue ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class MessageQueue:
    """One queue, ordered like J's ``MessageQueue.compareTo`` (topic, then broker name, then queue id)."""

    topic: str
    broker_name: str
    queue_id: int

    def to_json(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    def json_key(self) -> str:
        """The object-key text fastjson writes for this queue in a map."""
        return _dumps(self.to_json())

    @classmethod
    def from_json(cls, d: Mapping[Any, Any]) -> MessageQueue:
        try:
            return cls(str(d["topic"]), str(d["brokerName"]), _long(d["queueId"], "queueId"))
        except KeyError as exc:
            raise BodyDecodeError(f"MessageQueue without {exc.args[0]}: {dict(d)!r}") from None
        except TypeError:
            raise BodyDecodeError(f"MessageQueue is not an object: {d!r}") from None

    def __str__(self) -> str:
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"


_MQ_TO_STRING = re.compile(r"MessageQueue \[topic=(.*), brokerName=(.*), queueId=(-?\d+)\]")


def _mq_key(d: dict[Any, Any]) -> Hashable:
    return MessageQueue.from_json(d)


def _as_mq(key: Any) -> MessageQueue:
    """A map key that names a MessageQueue: an object key, J's ``toString()`` or JSON text of the object."""
    if isinstance(key, MessageQueue):
        return key
    if isinstance(key, str):
        m = _MQ_TO_STRING.fullmatch(key)
        if m is not None:
            return MessageQueue(m.group(1), m.group(2), int(m.group(3)))
        try:
            obj = json.loads(key)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return MessageQueue.from_json(obj)
    raise BodyDecodeError(f"map key {key!r} is not a MessageQueue")


def _mq_validate(value: Any) -> MessageQueue:
    if isinstance(value, MessageQueue):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"MessageQueue is not an object: {value!r}")
    return MessageQueue.from_json(value)


MQ = Annotated[MessageQueue, PlainValidator(_mq_validate), PlainSerializer(MessageQueue.to_json)]
"""MessageQueue as a pydantic field type (reads and writes the wire object)."""


def _mq_table(raw: Any, what: str) -> list[tuple[MessageQueue, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise BodyDecodeError(f"{what} is not an object")
    return [(_as_mq(k), v) for k, v in raw.items()]


def _mq_table_json(table: Mapping[MessageQueue, Any], value: Callable[[Any], Any]) -> str:
    """A MessageQueue-keyed map as fastjson writes it (object keys), sorted for a stable output."""
    return "{" + ",".join(f"{mq.json_key()}:{_dumps(value(v))}" for mq, v in sorted(table.items())) + "}"


def _decode_object(body: BodyBytes, what: str) -> dict[Any, Any]:
    if not body:
        raise BodyDecodeError(f"{what}: empty body")
    raw = loads_lenient(body, object_key=_mq_key)
    if not isinstance(raw, dict):
        raise BodyDecodeError(f"{what}: not a JSON object")
    return raw


# -- pydantic base ---------------------------------------------------------------------------------------------------


def _summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


class JsonBody(BaseModel):
    """Base of the pydantic bodies: frozen, unknown keys ignored, constructed by attribute name, written by wire
    name."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    @classmethod
    def from_json(cls, obj: Any) -> Self:
        try:
            return cls.model_validate(obj)
        except ValidationError as exc:
            raise BodyDecodeError(f"{cls.__name__}: {_summary(exc)}") from None

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        if not body:
            raise BodyDecodeError(f"{cls.__name__}: empty body")
        return cls.from_json(loads_lenient(body))

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def encode(self) -> bytes:
        return dumps(self.to_json())


def _none_is_empty_list(v: Any) -> Any:
    return [] if v is None else v


def _none_is_empty_dict(v: Any) -> Any:
    return {} if v is None else v


# -- routes ----------------------------------------------------------------------------------------------------------


class QueueData(JsonBody):
    broker_name: str = Field(validation_alias="brokerName", serialization_alias="brokerName")
    read_queue_nums: int = Field(default=0, validation_alias="readQueueNums", serialization_alias="readQueueNums")
    write_queue_nums: int = Field(default=0, validation_alias="writeQueueNums", serialization_alias="writeQueueNums")
    perm: int = PERM_RW
    topic_sys_flag: int = Field(
        default=0, validation_alias=AliasChoices("topicSysFlag", "topicSynFlag"), serialization_alias="topicSysFlag"
    )


class BrokerData(JsonBody):
    """``broker_addrs`` is keyed by broker id (0 = master); on the wire the ids are quoted strings."""

    cluster: str = ""
    broker_name: str = Field(validation_alias="brokerName", serialization_alias="brokerName")
    broker_addrs: dict[int, str] = Field(
        default_factory=dict, validation_alias="brokerAddrs", serialization_alias="brokerAddrs"
    )

    _none = field_validator("broker_addrs", mode="before")(_none_is_empty_dict)

    @property
    def master_addr(self) -> str | None:
        return self.broker_addrs.get(0)


class TopicRouteData(JsonBody):
    order_topic_conf: str | None = Field(
        default=None, validation_alias="orderTopicConf", serialization_alias="orderTopicConf"
    )
    queue_datas: list[QueueData] = Field(
        default_factory=list, validation_alias="queueDatas", serialization_alias="queueDatas"
    )
    broker_datas: list[BrokerData] = Field(
        default_factory=list, validation_alias="brokerDatas", serialization_alias="brokerDatas"
    )
    filter_server_table: dict[str, list[str]] = Field(
        default_factory=dict, validation_alias="filterServerTable", serialization_alias="filterServerTable"
    )

    _none_lists = field_validator("queue_datas", "broker_datas", mode="before")(_none_is_empty_list)
    _none_dict = field_validator("filter_server_table", mode="before")(_none_is_empty_dict)

    def broker(self, broker_name: str) -> BrokerData | None:
        return next((b for b in self.broker_datas if b.broker_name == broker_name), None)


# -- heartbeats ------------------------------------------------------------------------------------------------------


class SubscriptionData(JsonBody):
    """One subscription. ``sub_string`` ``*`` or empty = every tag; ``code_set`` is Java ``String.hashCode`` of each
    tag (C++ sends zeros: filter by ``tags_set``)."""

    topic: str
    sub_string: str = Field(default="*", validation_alias="subString", serialization_alias="subString")
    tags_set: list[str] = Field(default_factory=list, validation_alias="tagsSet", serialization_alias="tagsSet")
    code_set: list[int] = Field(default_factory=list, validation_alias="codeSet", serialization_alias="codeSet")
    sub_version: int = Field(default=0, validation_alias="subVersion", serialization_alias="subVersion")
    expression_type: str = Field(default="TAG", validation_alias="expressionType", serialization_alias="expressionType")
    class_filter_mode: bool = Field(
        default=False, validation_alias="classFilterMode", serialization_alias="classFilterMode"
    )

    _none_lists = field_validator("tags_set", "code_set", mode="before")(_none_is_empty_list)

    @field_validator("sub_version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> Any:
        return 0 if v is None or v == "" else v

    @field_validator("expression_type", mode="before")
    @classmethod
    def _etype(cls, v: Any) -> Any:
        return v or "TAG"

    @field_validator("sub_string", mode="before")
    @classmethod
    def _sub(cls, v: Any) -> Any:
        return "*" if v is None else v


class ConsumerData(JsonBody):
    group_name: str = Field(validation_alias="groupName", serialization_alias="groupName")
    consume_type: ConsumeType = Field(
        default=ConsumeType.CONSUME_PASSIVELY, validation_alias="consumeType", serialization_alias="consumeType"
    )
    message_model: MessageModel = Field(
        default=MessageModel.CLUSTERING, validation_alias="messageModel", serialization_alias="messageModel"
    )
    consume_from_where: ConsumeFromWhere = Field(
        default=ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
        validation_alias="consumeFromWhere",
        serialization_alias="consumeFromWhere",
    )
    subscription_data_set: list[SubscriptionData] = Field(
        default_factory=list, validation_alias="subscriptionDataSet", serialization_alias="subscriptionDataSet"
    )
    unit_mode: bool = Field(default=False, validation_alias="unitMode", serialization_alias="unitMode")

    _none_lists = field_validator("subscription_data_set", mode="before")(_none_is_empty_list)

    @field_validator("consume_type", mode="before")
    @classmethod
    def _ct(cls, v: Any) -> Any:
        return _enum_name(v, CONSUME_TYPES, "consumeType")

    @field_validator("message_model", mode="before")
    @classmethod
    def _mm(cls, v: Any) -> Any:
        return _enum_name(v, MESSAGE_MODELS, "messageModel")

    @field_validator("consume_from_where", mode="before")
    @classmethod
    def _cfw(cls, v: Any) -> Any:
        return _enum_name(v, CONSUME_FROM_WHERE, "consumeFromWhere")


class ProducerData(JsonBody):
    group_name: str = Field(validation_alias="groupName", serialization_alias="groupName")


class HeartbeatData(JsonBody):
    """HEART_BEAT body. C++ sends ordinals, sorted keys, a trailing newline and no ``consumerDataSet`` for a pure
    producer; ali-ons sends names and ``subVersion`` as a number; all of it reads the same."""

    client_id: str = Field(validation_alias="clientID", serialization_alias="clientID")
    producer_data_set: list[ProducerData] = Field(
        default_factory=list, validation_alias="producerDataSet", serialization_alias="producerDataSet"
    )
    consumer_data_set: list[ConsumerData] = Field(
        default_factory=list, validation_alias="consumerDataSet", serialization_alias="consumerDataSet"
    )

    _none_lists = field_validator("producer_data_set", "consumer_data_set", mode="before")(_none_is_empty_list)


# -- topic configs and registration -----------------------------------------------------------------------------------


class DataVersion(JsonBody):
    """J ``DataVersion``: bumped on every config change; the name server compares it to skip unchanged
    registrations."""

    counter: int = 0
    timestamp: int = 0

    def bumped(self, now_ms: int) -> DataVersion:
        """J ``nextVersion()``: timestamp = now, counter + 1."""
        return DataVersion(counter=self.counter + 1, timestamp=now_ms)


class TopicConfig(JsonBody):
    topic_name: str = Field(validation_alias="topicName", serialization_alias="topicName")
    read_queue_nums: int = Field(default=16, validation_alias="readQueueNums", serialization_alias="readQueueNums")
    write_queue_nums: int = Field(default=16, validation_alias="writeQueueNums", serialization_alias="writeQueueNums")
    perm: int = PERM_RW
    topic_filter_type: str = Field(
        default="SINGLE_TAG", validation_alias="topicFilterType", serialization_alias="topicFilterType"
    )
    topic_sys_flag: int = Field(default=0, validation_alias="topicSysFlag", serialization_alias="topicSysFlag")
    order: bool = False

    def encode_line(self) -> str:
        """J 4.9.7 ``TopicConfig.encode()``: ``name read write perm filterType`` (the compressed registration)."""
        return f"{self.topic_name} {self.read_queue_nums} {self.write_queue_nums} {self.perm} {self.topic_filter_type}"

    @classmethod
    def decode_line(cls, line: str) -> TopicConfig:
        """J ``TopicConfig.decode``: five space-separated fields (5.x appends attributes JSON: ignored)."""
        parts = line.split(" ")
        if len(parts) < 5:
            raise BodyDecodeError(f"topic config line {line[:120]!r} does not have 5 fields")
        name, read, write, perm, ftype = parts[:5]
        try:
            return cls(
                topic_name=name,
                read_queue_nums=int(read),
                write_queue_nums=int(write),
                perm=int(perm),
                topic_filter_type=ftype,
            )
        except ValueError:
            raise BodyDecodeError(f"topic config line {line[:120]!r} has a bad number") from None


TopicConfigData = TopicConfig  # the earlier name


def _table_names(v: Any) -> Any:
    """``topicConfigTable`` values may leave out ``topicName``: take it from the key."""
    if isinstance(v, dict):
        return {
            k: ({**tc, "topicName": k} if isinstance(tc, dict) and "topicName" not in tc else tc) for k, tc in v.items()
        }
    return _none_is_empty_dict(v)


class TopicConfigSerializeWrapper(JsonBody):
    topic_config_table: dict[str, TopicConfig] = Field(
        default_factory=dict, validation_alias="topicConfigTable", serialization_alias="topicConfigTable"
    )
    data_version: DataVersion = Field(
        default_factory=DataVersion, validation_alias="dataVersion", serialization_alias="dataVersion"
    )

    _names = field_validator("topic_config_table", mode="before")(_table_names)

    @field_validator("data_version", mode="before")
    @classmethod
    def _dv(cls, v: Any) -> Any:
        return {} if v is None else v


class RegisterBrokerBody(JsonBody):
    """REGISTER_BROKER body, plain JSON or (``compressed=True``) J's zlib form described at the top."""

    topic_config_serialize_wrapper: TopicConfigSerializeWrapper = Field(
        default_factory=TopicConfigSerializeWrapper,
        validation_alias="topicConfigSerializeWrapper",
        serialization_alias="topicConfigSerializeWrapper",
    )
    filter_server_list: list[str] = Field(
        default_factory=list, validation_alias="filterServerList", serialization_alias="filterServerList"
    )

    _none_list = field_validator("filter_server_list", mode="before")(_none_is_empty_list)

    @model_validator(mode="before")
    @classmethod
    def _none_wrapper(cls, v: Any) -> Any:
        if isinstance(v, dict) and v.get("topicConfigSerializeWrapper", 0) is None:
            return {k: x for k, x in v.items() if k != "topicConfigSerializeWrapper"}
        return v

    @property
    def topic_config_table(self) -> dict[str, TopicConfig]:
        return self.topic_config_serialize_wrapper.topic_config_table

    @property
    def data_version(self) -> DataVersion:
        return self.topic_config_serialize_wrapper.data_version

    def encode(self, compressed: bool = False) -> bytes:
        if not compressed:
            return dumps(self.to_json())
        wrapper = self.topic_config_serialize_wrapper
        out = bytearray()
        dv = wrapper.data_version.encode()
        out += _I32.pack(len(dv)) + dv
        out += _I32.pack(len(wrapper.topic_config_table))
        for tc in wrapper.topic_config_table.values():
            line = tc.encode_line().encode("utf-8")
            out += _I32.pack(len(line)) + line
        fs = dumps(self.filter_server_list)
        out += _I32.pack(len(fs)) + fs
        return zlib.compress(bytes(out), 9)

    @classmethod
    def decode(cls, body: BodyBytes, compressed: bool = False, *, max_inflated: int = MAX_INFLATED) -> Self:
        """An empty body is an empty registration (J's name server does the same)."""
        if not body:
            return cls()
        if not compressed:
            return cls.from_json(loads_lenient(body))
        if isinstance(body, str):
            raise BodyDecodeError("compressed RegisterBrokerBody must be bytes")
        r = _ChunkReader(_inflate(bytes(body), max_inflated))
        dv = DataVersion.from_json(loads_lenient(r.chunk("dataVersion")))
        count = r.int32("topic count")
        if count < 0:
            raise BodyDecodeError(f"compressed RegisterBrokerBody: negative topic count {count}")
        table: dict[str, TopicConfig] = {}
        for i in range(count):
            tc = TopicConfig.decode_line(_text(r.chunk(f"topic config #{i}")))
            table[tc.topic_name] = tc
        servers = loads_lenient(r.chunk("filterServerList"))
        if servers is None:
            servers = []
        if not (isinstance(servers, list) and all(isinstance(s, str) for s in servers)):
            raise BodyDecodeError("compressed RegisterBrokerBody: filterServerList is not a list of strings")
        wrapper = TopicConfigSerializeWrapper(topic_config_table=table, data_version=dv)
        return cls(topic_config_serialize_wrapper=wrapper, filter_server_list=servers)


def _inflate(body: bytes, limit: int) -> bytes:
    d = zlib.decompressobj()
    try:
        out = d.decompress(body, limit)
    except zlib.error as exc:
        raise BodyDecodeError(f"compressed RegisterBrokerBody is not a zlib stream: {exc}") from None
    if d.unconsumed_tail:
        raise BodyDecodeError(f"compressed RegisterBrokerBody inflates to more than {limit} bytes")
    return out


class _ChunkReader:
    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def int32(self, what: str) -> int:
        if self._pos + 4 > len(self._data):
            raise BodyDecodeError(f"compressed RegisterBrokerBody truncated reading {what} at byte {self._pos}")
        (n,) = _I32.unpack_from(self._data, self._pos)
        self._pos += 4
        return int(n)

    def chunk(self, what: str) -> bytes:
        n = self.int32(f"{what} length")
        if n < 0 or self._pos + n > len(self._data):
            raise BodyDecodeError(f"compressed RegisterBrokerBody: {what} length {n} at byte {self._pos - 4} is bad")
        out = self._data[self._pos : self._pos + n]
        self._pos += n
        return out


# -- name-server lists -----------------------------------------------------------------------------------------------


class ClusterInfo(JsonBody):
    broker_addr_table: dict[str, BrokerData] = Field(
        default_factory=dict, validation_alias="brokerAddrTable", serialization_alias="brokerAddrTable"
    )
    cluster_addr_table: dict[str, list[str]] = Field(
        default_factory=dict, validation_alias="clusterAddrTable", serialization_alias="clusterAddrTable"
    )

    _none = field_validator("broker_addr_table", "cluster_addr_table", mode="before")(_none_is_empty_dict)


class TopicList(JsonBody):
    topic_list: list[str] = Field(default_factory=list, validation_alias="topicList", serialization_alias="topicList")
    broker_addr: str | None = Field(default=None, validation_alias="brokerAddr", serialization_alias="brokerAddr")

    _none = field_validator("topic_list", mode="before")(_none_is_empty_list)


class GroupList(JsonBody):
    """QUERY_TOPIC_CONSUME_BY_WHO reply (J ``GroupList``, a HashSet on the J side: order carries no meaning)."""

    group_list: list[str] = Field(default_factory=list, validation_alias="groupList", serialization_alias="groupList")

    _none = field_validator("group_list", mode="before")(_none_is_empty_list)


class KVTable(JsonBody):
    table: dict[str, str] = Field(default_factory=dict)

    @field_validator("table", mode="before")
    @classmethod
    def _text_values(cls, v: Any) -> Any:
        """J's runtime-info table holds strings; tolerate numbers and booleans by keeping their text."""
        if isinstance(v, dict):
            return {k: (_dumps(x) if isinstance(x, bool | int | float) else x) for k, x in v.items()}
        return _none_is_empty_dict(v)


class ConsumerListBody(JsonBody):
    consumer_id_list: list[str] = Field(
        default_factory=list, validation_alias="consumerIdList", serialization_alias="consumerIdList"
    )

    _none = field_validator("consumer_id_list", mode="before")(_none_is_empty_list)


# -- orderly consumption locks ---------------------------------------------------------------------------------------


class LockBatchRequestBody(JsonBody):
    consumer_group: str = Field(validation_alias="consumerGroup", serialization_alias="consumerGroup")
    client_id: str = Field(validation_alias="clientId", serialization_alias="clientId")
    mq_set: list[MQ] = Field(default_factory=list, validation_alias="mqSet", serialization_alias="mqSet")
    only_this_broker: bool = Field(
        default=False, validation_alias="onlyThisBroker", serialization_alias="onlyThisBroker"
    )

    _none = field_validator("mq_set", mode="before")(_none_is_empty_list)


UnlockBatchRequestBody = LockBatchRequestBody


class LockBatchResponseBody(JsonBody):
    lock_ok_mq_set: list[MQ] = Field(
        default_factory=list, validation_alias="lockOKMQSet", serialization_alias="lockOKMQSet"
    )

    _none = field_validator("lock_ok_mq_set", mode="before")(_none_is_empty_list)


# -- subscription groups ---------------------------------------------------------------------------------------------


class SubscriptionGroupConfig(JsonBody):
    group_name: str = Field(validation_alias="groupName", serialization_alias="groupName")
    consume_enable: bool = Field(default=True, validation_alias="consumeEnable", serialization_alias="consumeEnable")
    consume_from_min_enable: bool = Field(
        default=True, validation_alias="consumeFromMinEnable", serialization_alias="consumeFromMinEnable"
    )
    consume_broadcast_enable: bool = Field(
        default=True, validation_alias="consumeBroadcastEnable", serialization_alias="consumeBroadcastEnable"
    )
    retry_queue_nums: int = Field(default=1, validation_alias="retryQueueNums", serialization_alias="retryQueueNums")
    retry_max_times: int = Field(default=16, validation_alias="retryMaxTimes", serialization_alias="retryMaxTimes")
    broker_id: int = Field(default=0, validation_alias="brokerId", serialization_alias="brokerId")
    which_broker_when_consume_slowly: int = Field(
        default=1, validation_alias="whichBrokerWhenConsumeSlowly", serialization_alias="whichBrokerWhenConsumeSlowly"
    )
    notify_consumer_ids_changed_enable: bool = Field(
        default=True,
        validation_alias="notifyConsumerIdsChangedEnable",
        serialization_alias="notifyConsumerIdsChangedEnable",
    )


class SubscriptionGroupWrapper(JsonBody):
    subscription_group_table: dict[str, SubscriptionGroupConfig] = Field(
        default_factory=dict, validation_alias="subscriptionGroupTable", serialization_alias="subscriptionGroupTable"
    )
    data_version: DataVersion = Field(
        default_factory=DataVersion, validation_alias="dataVersion", serialization_alias="dataVersion"
    )

    _none = field_validator("subscription_group_table", mode="before")(_none_is_empty_dict)


# -- connections -----------------------------------------------------------------------------------------------------


class Connection(JsonBody):
    client_id: str = Field(validation_alias="clientId", serialization_alias="clientId")
    client_addr: str = Field(default="", validation_alias="clientAddr", serialization_alias="clientAddr")
    language: str = "JAVA"
    version: int = 0

    @field_validator("language", mode="before")
    @classmethod
    def _lang(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return LanguageCode(v).name if 0 <= v < len(LanguageCode) else LanguageCode.OTHER.name
        return v


class ConsumerConnection(JsonBody):
    connection_set: list[Connection] = Field(
        default_factory=list, validation_alias="connectionSet", serialization_alias="connectionSet"
    )
    subscription_table: dict[str, SubscriptionData] = Field(
        default_factory=dict, validation_alias="subscriptionTable", serialization_alias="subscriptionTable"
    )
    consume_type: ConsumeType | None = Field(
        default=None, validation_alias="consumeType", serialization_alias="consumeType"
    )
    message_model: MessageModel | None = Field(
        default=None, validation_alias="messageModel", serialization_alias="messageModel"
    )
    consume_from_where: ConsumeFromWhere | None = Field(
        default=None, validation_alias="consumeFromWhere", serialization_alias="consumeFromWhere"
    )

    _none_list = field_validator("connection_set", mode="before")(_none_is_empty_list)
    _none_dict = field_validator("subscription_table", mode="before")(_none_is_empty_dict)

    @field_validator("consume_type", mode="before")
    @classmethod
    def _ct(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, CONSUME_TYPES, "consumeType")

    @field_validator("message_model", mode="before")
    @classmethod
    def _mm(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, MESSAGE_MODELS, "messageModel")

    @field_validator("consume_from_where", mode="before")
    @classmethod
    def _cfw(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, CONSUME_FROM_WHERE, "consumeFromWhere")


class ProducerConnection(JsonBody):
    connection_set: list[Connection] = Field(
        default_factory=list, validation_alias="connectionSet", serialization_alias="connectionSet"
    )

    _none = field_validator("connection_set", mode="before")(_none_is_empty_list)


# -- admin inspection (consume queues, time spans, direct consumption) ---------------------------------------------


def _dumps_sorted(obj: Any) -> bytes:
    """Compact JSON with every object's keys in alphabetical order, as fastjson writes a bean."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


class QueueTimeSpan(JsonBody):
    """One queue in QueryConsumeTimeSpanBody: store times (ms) of its first and last message, of the group's last
    consumed message, and how far the group is behind (J leaves out nothing but the ``…Str`` display getters)."""

    consume_time_stamp: int = Field(
        default=0, validation_alias="consumeTimeStamp", serialization_alias="consumeTimeStamp"
    )
    delay_time: int = Field(default=0, validation_alias="delayTime", serialization_alias="delayTime")
    max_time_stamp: int = Field(default=0, validation_alias="maxTimeStamp", serialization_alias="maxTimeStamp")
    message_queue: MQ = Field(validation_alias="messageQueue", serialization_alias="messageQueue")
    min_time_stamp: int = Field(default=0, validation_alias="minTimeStamp", serialization_alias="minTimeStamp")


class QueryConsumeTimeSpanBody(JsonBody):
    """QUERY_CONSUME_TIME_SPAN reply: ``{"consumeTimeSpanSet":[QueueTimeSpan,…]}``."""

    consume_time_span_set: list[QueueTimeSpan] = Field(
        default_factory=list, validation_alias="consumeTimeSpanSet", serialization_alias="consumeTimeSpanSet"
    )

    _none = field_validator("consume_time_span_set", mode="before")(_none_is_empty_list)

    def encode(self) -> bytes:
        return _dumps_sorted(self.to_json())


class ConsumeQueueData(JsonBody):
    """One consume-queue unit in QueryConsumeQueueResponseBody. ``extendDataJson``/``bitMap``/``eval`` describe J's
    consume-queue extension (SQL92 bloom filters), which this store does not have: null/false."""

    bit_map: str | None = Field(default=None, validation_alias="bitMap", serialization_alias="bitMap")
    eval: bool = False
    extend_data_json: str | None = Field(
        default=None, validation_alias="extendDataJson", serialization_alias="extendDataJson"
    )
    msg: str | None = None
    physic_offset: int = Field(default=0, validation_alias="physicOffset", serialization_alias="physicOffset")
    physic_size: int = Field(default=0, validation_alias="physicSize", serialization_alias="physicSize")
    tags_code: int = Field(default=0, validation_alias="tagsCode", serialization_alias="tagsCode")


class QueryConsumeQueueResponseBody(JsonBody):
    """QUERY_CONSUME_QUEUE reply: the queue's live range, the units read, and the named group's subscription."""

    filter_data: str | None = Field(default=None, validation_alias="filterData", serialization_alias="filterData")
    max_queue_index: int = Field(default=0, validation_alias="maxQueueIndex", serialization_alias="maxQueueIndex")
    min_queue_index: int = Field(default=0, validation_alias="minQueueIndex", serialization_alias="minQueueIndex")
    queue_data: list[ConsumeQueueData] = Field(
        default_factory=list, validation_alias="queueData", serialization_alias="queueData"
    )
    subscription_data: SubscriptionData | None = Field(
        default=None, validation_alias="subscriptionData", serialization_alias="subscriptionData"
    )

    _none = field_validator("queue_data", mode="before")(_none_is_empty_list)

    def encode(self) -> bytes:
        return _dumps_sorted(self.to_json())


class CMResult(StrEnum):
    """J ``CMResult``: how a consumer's listener handled a CONSUME_MESSAGE_DIRECTLY message."""

    CR_SUCCESS = "CR_SUCCESS"
    CR_LATER = "CR_LATER"
    CR_ROLLBACK = "CR_ROLLBACK"
    CR_COMMIT = "CR_COMMIT"
    CR_THROW_EXCEPTION = "CR_THROW_EXCEPTION"
    CR_RETURN_NULL = "CR_RETURN_NULL"


class ConsumeMessageDirectlyResult(JsonBody):
    """A consumer's reply body to CONSUME_MESSAGE_DIRECTLY (relayed by the broker as bytes)."""

    auto_commit: bool = Field(default=True, validation_alias="autoCommit", serialization_alias="autoCommit")
    consume_result: CMResult | None = Field(
        default=None, validation_alias="consumeResult", serialization_alias="consumeResult"
    )
    order: bool = False
    remark: str | None = None
    spent_time_mills: int = Field(default=0, validation_alias="spentTimeMills", serialization_alias="spentTimeMills")

    @field_validator("consume_result", mode="before")
    @classmethod
    def _cr(cls, v: Any) -> Any:
        return None if v is None else _enum_name(v, tuple(e.value for e in CMResult), "consumeResult")

    def to_json(self) -> dict[str, Any]:
        """As fastjson writes it: null fields left out (``remark`` only after an exception)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


# -- MessageQueue-keyed bodies (hand-written: fastjson object keys) ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResetOffsetBody:
    """Offsets to reset a consumer group to. ``encode()`` writes J's object-key form; ``encode(cpp=True)`` the list
    form C++ reads (pick it when the target client's language is CPP, trap 13). ``decode`` reads both."""

    offset_table: dict[MessageQueue, int] = field(default_factory=dict)

    def encode(self, *, cpp: bool = False) -> bytes:
        if cpp:
            rows = [
                {"brokerName": mq.broker_name, "offset": off, "queueId": mq.queue_id, "topic": mq.topic}
                for mq, off in sorted(self.offset_table.items())
            ]
            return dumps({"offsetTable": rows})
        return ('{"offsetTable":' + _mq_table_json(self.offset_table, int) + "}").encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "ResetOffsetBody")
        table = raw.get("offsetTable")
        out: dict[MessageQueue, int] = {}
        if isinstance(table, list):
            for row in table:
                if not isinstance(row, dict):
                    raise BodyDecodeError("ResetOffsetBody: offsetTable entry is not an object")
                out[MessageQueue.from_json(row)] = _long(row.get("offset"), "offset")
            return cls(out)
        for mq, off in _mq_table(table, "ResetOffsetBody.offsetTable"):
            out[mq] = _long(off, "offset")
        return cls(out)


def encode_consumer_running_info(
    properties: Mapping[str, str],
    subscriptions: Sequence[Mapping[str, Any]],
    mq_table: Mapping[MessageQueue, Mapping[str, Any]],
    status_table: Mapping[str, Mapping[str, Any]],
    jstack: str | None = None,
) -> bytes:
    """A consumer's GET_CONSUMER_RUNNING_INFO reply as J's ``ConsumerRunningInfo`` reads it (fastjson, keys in
    alphabetical order, null ``jstack`` left out; the C++ client writes the same shape, golden frame
    ``cpp_consumer_171_br_c2s_RESP0``):

    =============== ================================================================================================
    key             value
    =============== ================================================================================================
    jstack          thread dump, only when the request asked for it (``jstackEnable``)
    mqTable         {<MessageQueue object>: ProcessQueueInfo} — commitOffset, cachedMsgMinOffset/MaxOffset/Count,
                    cachedMsgSizeInMiB, transactionMsg*, locked, tryUnlockTimes, lastLockTimestamp, droped,
                    lastPullTimestamp, lastConsumeTimestamp (ms)
    properties      PROP_CONSUME_TYPE, PROP_CONSUMEORDERLY, PROP_CLIENT_VERSION, PROP_NAMESERVER_ADDR, … (strings)
    statusTable     {topic: ConsumeStatus} — pullRT, pullTPS, consumeRT, consumeOKTPS, consumeFailedTPS (doubles),
                    consumeFailedMsgs (long)
    subscriptionSet [SubscriptionData] — topic, subString, tagsSet, codeSet, subVersion, classFilterMode
    =============== ================================================================================================
    """
    head = "{" + ('"jstack":' + _dumps(jstack) + "," if jstack is not None else "")
    return (
        head
        + '"mqTable":'
        + _mq_table_json(mq_table, lambda v: dict(sorted(v.items())))
        + ',"properties":'
        + _dumps(dict(sorted(properties.items())))
        + ',"statusTable":'
        + _dumps({t: dict(sorted(v.items())) for t, v in sorted(status_table.items())})
        + ',"subscriptionSet":'
        + _dumps(sorted((dict(sorted(x.items())) for x in subscriptions), key=lambda d: str(d.get("topic"))))
        + "}"
    ).encode("utf-8")


@dataclass(frozen=True, slots=True)
class GetConsumerStatusBody:
    """Offsets a consumer holds: ``message_queue_table`` for one client, ``consumer_table`` per client id."""

    message_queue_table: dict[MessageQueue, int] = field(default_factory=dict)
    consumer_table: dict[str, dict[MessageQueue, int]] = field(default_factory=dict)

    def encode(self) -> bytes:
        consumers = ",".join(
            f"{_dumps(cid)}:{_mq_table_json(t, int)}" for cid, t in sorted(self.consumer_table.items())
        )
        return (
            '{"consumerTable":{'
            + consumers
            + '},"messageQueueTable":'
            + _mq_table_json(self.message_queue_table, int)
            + "}"
        ).encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "GetConsumerStatusBody")
        mqt = {mq: _long(v, "offset") for mq, v in _mq_table(raw.get("messageQueueTable"), "messageQueueTable")}
        consumers = raw.get("consumerTable") or {}
        if not isinstance(consumers, dict):
            raise BodyDecodeError("GetConsumerStatusBody: consumerTable is not an object")
        ct = {
            str(cid): {mq: _long(v, "offset") for mq, v in _mq_table(t, "consumerTable entry")}
            for cid, t in consumers.items()
        }
        return cls(mqt, ct)


@dataclass(frozen=True, slots=True)
class TopicOffset:
    min_offset: int = 0
    max_offset: int = 0
    last_update_timestamp: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "lastUpdateTimestamp": self.last_update_timestamp,
            "maxOffset": self.max_offset,
            "minOffset": self.min_offset,
        }

    @classmethod
    def from_json(cls, d: Any) -> TopicOffset:
        if not isinstance(d, dict):
            raise BodyDecodeError(f"TopicOffset is not an object: {d!r}")
        return cls(
            _long(d.get("minOffset", 0), "minOffset"),
            _long(d.get("maxOffset", 0), "maxOffset"),
            _long(d.get("lastUpdateTimestamp", 0), "lastUpdateTimestamp"),
        )


@dataclass(frozen=True, slots=True)
class TopicStatsTable:
    """GET_TOPIC_STATS_INFO reply: min/max offset and last store time of every queue of a topic on one broker."""

    offset_table: dict[MessageQueue, TopicOffset] = field(default_factory=dict)

    def encode(self) -> bytes:
        return ('{"offsetTable":' + _mq_table_json(self.offset_table, TopicOffset.to_json) + "}").encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "TopicStatsTable")
        return cls({mq: TopicOffset.from_json(v) for mq, v in _mq_table(raw.get("offsetTable"), "offsetTable")})


@dataclass(frozen=True, slots=True)
class OffsetWrapper:
    broker_offset: int = 0
    consumer_offset: int = 0
    last_timestamp: int = 0
    pull_offset: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "brokerOffset": self.broker_offset,
            "consumerOffset": self.consumer_offset,
            "lastTimestamp": self.last_timestamp,
            "pullOffset": self.pull_offset,
        }

    @classmethod
    def from_json(cls, d: Any) -> OffsetWrapper:
        if not isinstance(d, dict):
            raise BodyDecodeError(f"OffsetWrapper is not an object: {d!r}")
        return cls(
            _long(d.get("brokerOffset", 0), "brokerOffset"),
            _long(d.get("consumerOffset", 0), "consumerOffset"),
            _long(d.get("lastTimestamp", 0), "lastTimestamp"),
            _long(d.get("pullOffset", 0), "pullOffset"),
        )


@dataclass(frozen=True, slots=True)
class ConsumeStats:
    """GET_CONSUME_STATS reply: per queue, the broker's max offset and the group's committed offset."""

    offset_table: dict[MessageQueue, OffsetWrapper] = field(default_factory=dict)
    consume_tps: float = 0.0

    def total_diff(self) -> int:
        """J ``computeTotalDiff``: the group's lag over every queue."""
        return sum(w.broker_offset - w.consumer_offset for w in self.offset_table.values())

    def encode(self) -> bytes:
        return (
            '{"consumeTps":'
            + _dumps(float(self.consume_tps))
            + ',"offsetTable":'
            + _mq_table_json(self.offset_table, OffsetWrapper.to_json)
            + "}"
        ).encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        return cls.from_json(_decode_object(body, "ConsumeStats"))

    @classmethod
    def from_json(cls, raw: Any) -> Self:
        """From the parsed object (MessageQueue keys already read by ``loads_lenient(..., object_key=...)``)."""
        if not isinstance(raw, dict):
            raise BodyDecodeError(f"ConsumeStats is not an object: {raw!r}")
        tps = raw.get("consumeTps", 0.0)
        if isinstance(tps, str):
            try:
                tps = float(tps)
            except ValueError:
                raise BodyDecodeError(f"ConsumeStats: consumeTps {tps!r} is not a number") from None
        if isinstance(tps, bool) or not isinstance(tps, int | float):
            raise BodyDecodeError(f"ConsumeStats: consumeTps {tps!r} is not a number")
        table = {mq: OffsetWrapper.from_json(v) for mq, v in _mq_table(raw.get("offsetTable"), "offsetTable")}
        return cls(table, float(tps))


@dataclass(frozen=True, slots=True)
class ConsumeStatsList:
    """GET_BROKER_CONSUME_STATS reply (J ``ConsumeStatsList``): per subscription group, one ConsumeStats per topic
    it has committed offsets on, and the lag summed over all of them::

        {"brokerAddr":"ip:port","consumeStatsList":[{"<group>":[<ConsumeStats>,…]},…],"totalDiff":N}
    """

    broker_addr: str | None = None
    consume_stats_list: list[dict[str, list[ConsumeStats]]] = field(default_factory=list)
    total_diff: int = 0

    def encode(self) -> bytes:
        groups = ",".join(
            "{"
            + ",".join(f"{_dumps(g)}:[" + ",".join(cs.encode().decode() for cs in lst) + "]" for g, lst in m.items())
            + "}"
            for m in self.consume_stats_list
        )
        return (
            '{"brokerAddr":'
            + _dumps(self.broker_addr)
            + ',"consumeStatsList":['
            + groups
            + '],"totalDiff":'
            + _dumps(int(self.total_diff))
            + "}"
        ).encode("utf-8")

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        raw = _decode_object(body, "ConsumeStatsList")
        entries = raw.get("consumeStatsList") or []
        if not isinstance(entries, list):
            raise BodyDecodeError("ConsumeStatsList: consumeStatsList is not a list")
        out: list[dict[str, list[ConsumeStats]]] = []
        for m in entries:
            if not isinstance(m, dict):
                raise BodyDecodeError("ConsumeStatsList: an entry is not an object")
            group_map: dict[str, list[ConsumeStats]] = {}
            for g, lst in m.items():
                if not isinstance(lst, list):
                    raise BodyDecodeError(f"ConsumeStatsList: the stats of group {g!r} are not a list")
                group_map[str(g)] = [ConsumeStats.from_json(cs) for cs in lst]
            out.append(group_map)
        addr = raw.get("brokerAddr")
        return cls(None if addr is None else str(addr), out, _long(raw.get("totalDiff", 0), "totalDiff"))


# -- properties text (GET_BROKER_CONFIG / UPDATE_BROKER_CONFIG) -------------------------------------------------------


def encode_properties_text(props: Mapping[str, object]) -> bytes:
    """J ``MixAll.properties2String``: ``key=value\\n`` per entry (None values left out, booleans as true/false)."""
    lines = []
    for k, v in props.items():
        if v is None:
            continue
        text = ("true" if v else "false") if isinstance(v, bool) else str(v)
        lines.append(f"{k}={text}\n")
    return "".join(lines).encode("utf-8")


_PROP_ESCAPES: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and i + 6 <= len(s):
                try:
                    out.append(chr(int(s[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append(_PROP_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _logical_lines(text: str) -> Iterable[str]:
    buf = ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if not buf and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes continues the line
            buf += line[:-1]
            continue
        yield buf + line
        buf = ""
    if buf:
        yield buf


def decode_properties_text(body: BodyBytes) -> dict[str, str]:
    """``java.util.Properties.load`` for the common subset: comments (``#``/``!``), ``=``/``:``/space separators,
    backslash continuations and escapes (``\\t``, ``\\n``, ``\\uXXXX``, ``\\=``…). Read as UTF-8."""
    out: dict[str, str] = {}
    for line in _logical_lines(_text(body)):
        i = 0
        n = len(line)
        while i < n:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=: \t\f":
                break
            i += 1
        key = line[:i]
        j = i
        while j < n and line[j] in " \t\f":
            j += 1
        if j < n and line[j] in "=:":
            j += 1
            while j < n and line[j] in " \t\f":
                j += 1
        out[_unescape(key)] = _unescape(line[j:])
    return out


# -- small encoders kept for existing callers -----------------------------------------------------------------------


def encode_consumer_list(ids: list[str]) -> bytes:
    return ConsumerListBody(consumer_id_list=ids).encode()


def encode_topic_list(topics: Iterable[str]) -> bytes:
    return dumps({"topicList": sorted(topics)})


def encode_kv_table(table: dict[str, str]) -> bytes:
    return dumps({"table": table})


def encode_lock_response(mqs: Iterable[tuple[str, str, int]]) -> bytes:
    return LockBatchResponseBody(lock_ok_mq_set=[MessageQueue(t, b, q) for t, b, q in mqs]).encode()


def encode_reset_offset_body(offsets: Mapping[tuple[str, str, int], int], *, cpp: bool) -> bytes:
    """ResetOffsetBody from ``{(topic, broker, queue): offset}``: the list form for C++, J's object keys otherwise."""
    return ResetOffsetBody({MessageQueue(t, b, q): o for (t, b, q), o in offsets.items()}).encode(cpp=cpp)


def decode_reset_offset_body(body: BodyBytes) -> dict[tuple[str, str, int], int]:
    """Both ResetOffsetBody forms → ``{(topic, broker, queue): offset}``."""
    return {(mq.topic, mq.broker_name, mq.queue_id): o for mq, o in ResetOffsetBody.decode(body).offset_table.items()}


# -- replication -----------------------------------------------------------------------------------------------------


def _f(alias: str, default: Any) -> Any:
    return Field(default=default, validation_alias=alias, serialization_alias=alias)


class HAConnectionInfo(JsonBody):
    """One slave as its master sees it (J 5.x ``HARuntimeInfo.HAConnectionRuntimeInfo``, the fields we keep)."""

    addr: str = ""
    slave_ack_offset: int = _f("slaveAckOffset", -1)
    diff: int = 0
    in_sync: bool = _f("inSync", False)
    transferred_bytes: int = _f("transferredBytes", 0)


class HAClientRuntimeInfo(JsonBody):
    """A slave's view of its master (J 5.x ``HAClientRuntimeInfo``, plus this project's state)."""

    master_addr: str = _f("masterAddr", "")
    master_remoting_addr: str = _f("masterRemotingAddr", "")
    max_offset: int = _f("maxOffset", 0)
    master_offset: int = _f("masterOffset", 0)
    behind_bytes: int = _f("behindBytes", 0)
    state: str = ""
    ahead_of_master_bytes: int = _f("aheadOfMasterBytes", 0)
    connects: int = 0


class HARuntimeInfo(JsonBody):
    """GET_BROKER_HA_STATUS reply: J 5.x's ``HARuntimeInfo`` shape (master side or ``haClientRuntimeInfo``) plus
    this project's start-up fence, catch-up and divergence fields."""

    master: bool = False
    broker_role: str = _f("brokerRole", "")
    master_commit_log_max_offset: int = _f("masterCommitLogMaxOffset", 0)
    push2slave_max_offset: int = _f("push2SlaveMaxOffset", 0)
    in_sync_slave_nums: int = _f("inSyncSlaveNums", 0)
    ha_connection_info: list[HAConnectionInfo] = _f("haConnectionInfo", [])
    fenced: str = ""
    caught_up_from_slave_bytes: int = _f("caughtUpFromSlaveBytes", 0)
    diverged_slaves: dict[str, int] = _f("divergedSlaves", {})
    ha_server_addr: str = _f("haServerAddr", "")
    ha_client_runtime_info: HAClientRuntimeInfo | None = _f("haClientRuntimeInfo", None)
    metadata_syncs: int = _f("metadataSyncs", 0)
