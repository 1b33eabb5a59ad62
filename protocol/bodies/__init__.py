"""JSON bodies of the remoting protocol (cold paths: routes, heartbeats, registration, admin) and the tolerant JSON
reader they share.

Every body class offers ``encode() -> bytes`` (compact UTF-8 JSON) and ``decode(bytes) -> Self``; ``decode`` raises
``BodyDecodeError`` (a ``ValueError``) with the reason. Most are pydantic models (``JsonBody``: attribute names are
snake_case, the wire names are the aliases); the bodies keyed by MessageQueue are hand-written dataclasses, because
J's fastjson writes such maps with JSON objects as keys.

Readers are lenient where the official clients differ (``docs/reference/protocol.md`` §d, "fastjson quirks"):

* enums arrive as J/ali-ons names (``"CLUSTERING"``) or C++ ordinals (``1``); both read as the name;
* longs arrive as numbers or as strings (C++ ``subVersion``), booleans also as ``0``/``1``;
* ``loads_lenient`` takes fastjson's unquoted numeric keys (``{0:"addr"}``) and object keys
  (``{{"brokerName":"b","queueId":0,"topic":"T"}:100}``), and the C++ heartbeat's trailing ``"\\n"``;
* unknown keys are ignored; null lists read as empty.

Writers produce standard JSON with quoted keys (``{"0":"addr"}``), which all three official clients parse (trap 8),
except for MessageQueue-keyed maps, which have no standard form: they are written as fastjson object keys, the only

The bodies live in one module per subject; this package re-exports every public name, so
``from protocol.bodies import X`` is the import to use:

| module           | owns                                                                           |
|------------------|--------------------------------------------------------------------------------|
| lenient          | BodyDecodeError, the fastjson-lenient reader ``loads_lenient``, ``dumps``       |
| base             | ``JsonBody`` (the pydantic base), permission bits, consumer enums              |
| mq               | MessageQueue and the MessageQueue-keyed map helpers                            |
| routes           | TopicRouteData, QueueData, BrokerData                                          |
| heartbeat        | HeartbeatData, ConsumerData, ProducerData, SubscriptionData, CheckClientRequestBody |
| registration     | RegisterBrokerBody (JSON and zlib forms), TopicConfig, DataVersion, wrappers   |
| admin            | name-server lists, lock bodies, connections, inspection   |
| mq_maps          | ResetOffsetBody, GetConsumerStatusBody, TopicStatsTable, ConsumeStats(List)    |
| properties_text  | java.util.Properties text (GET/UPDATE_BROKER_CONFIG)                           |
| shortcuts        | one-line encoders kept for existing callers                                    |
| ha               | HARuntimeInfo and its parts                                                    |

ConsumerRunningInfo (reply to GET_CONSUMER_RUNNING_INFO) is not modelled: C++ writes it pretty-printed with object
keys; relay it as bytes (``loads_lenient`` can still read it for display).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import lazy_names

if TYPE_CHECKING:  # what mypy and readers see; at run time each name is imported from its module on first use
    from protocol.bodies.admin import (
        ClusterInfo,
        CMResult,
        Connection,
        ConsumeMessageDirectlyResult,
        ConsumeQueueData,
        ConsumerConnection,
        ConsumerListBody,
        GroupList,
        KVTable,
        LockBatchRequestBody,
        LockBatchResponseBody,
        ProducerConnection,
        QueryConsumeQueueResponseBody,
        QueryConsumeTimeSpanBody,
        QueueTimeSpan,
        TopicList,
    )
    from protocol.bodies.base import (
        CONSUME_FROM_WHERE,
        CONSUME_TYPES,
        MESSAGE_MODELS,
        ConsumeFromWhere,
        ConsumeType,
        JsonBody,
        MessageModel,
    )
    from protocol.bodies.ha import (
        HAClientRuntimeInfo,
        HAConnectionInfo,
        HARuntimeInfo,
    )
    from protocol.bodies.heartbeat import (
        CheckClientRequestBody,
        ConsumerData,
        HeartbeatData,
        ProducerData,
        SubscriptionData,
    )
    from protocol.bodies.lenient import (
        BodyBytes,
        BodyDecodeError,
        _freeze,  # noqa: F401 - for the parser unit tests
        _LenientParser,  # noqa: F401 - for the parser unit tests
        dumps,
        loads_lenient,
    )
    from protocol.bodies.mq import (
        MQ,
        MessageQueue,
    )
    from protocol.bodies.mq_maps import (
        ConsumeStats,
        ConsumeStatsList,
        GetConsumerStatusBody,
        OffsetWrapper,
        ResetOffsetBody,
        TopicOffset,
        TopicStatsTable,
        encode_consumer_running_info,
    )
    from protocol.bodies.properties_text import (
        decode_properties_text,
        encode_properties_text,
    )
    from protocol.bodies.registration import (
        MAX_INFLATED,
        CreateTopicListRequestBody,
        DataVersion,
        RegisterBrokerBody,
        TopicConfig,
        TopicConfigSerializeWrapper,
    )
    from protocol.bodies.routes import (
        BrokerData,
        QueueData,
        TopicRouteData,
    )
    from protocol.bodies.shortcuts import (
        decode_reset_offset_body,
        encode_consumer_list,
        encode_lock_response,
        encode_reset_offset_body,
        encode_topic_list,
    )
    from protocol.rules import (
        PERM_INHERIT,
        PERM_READ,
        PERM_RW,
        PERM_WRITE,
        is_inherited,
        is_readable,
        is_writeable,
        perm_to_string,
    )

# the module of each public name (loaded on first use: a process that reads routes does not build the admin models)
__getattr__, __dir__ = lazy_names.exports(
    __name__,
    {
        "protocol.bodies.admin": (
            "ClusterInfo CMResult Connection ConsumeMessageDirectlyResult ConsumeQueueData ConsumerConnection "
            "ConsumerListBody GroupList KVTable LockBatchRequestBody LockBatchResponseBody ProducerConnection "
            "QueryConsumeQueueResponseBody QueryConsumeTimeSpanBody QueueTimeSpan TopicList"
        ),
        "protocol.bodies.base": (
            "CONSUME_FROM_WHERE CONSUME_TYPES MESSAGE_MODELS ConsumeFromWhere ConsumeType JsonBody MessageModel"
        ),
        "protocol.bodies.ha": "HAClientRuntimeInfo HAConnectionInfo HARuntimeInfo",
        "protocol.bodies.heartbeat": "CheckClientRequestBody ConsumerData HeartbeatData ProducerData SubscriptionData",
        "protocol.bodies.lenient": "BodyBytes BodyDecodeError _freeze _LenientParser dumps loads_lenient",
        "protocol.bodies.mq": "MQ MessageQueue",
        "protocol.bodies.mq_maps": (
            "ConsumeStats ConsumeStatsList GetConsumerStatusBody OffsetWrapper ResetOffsetBody TopicOffset "
            "TopicStatsTable encode_consumer_running_info"
        ),
        "protocol.bodies.properties_text": "decode_properties_text encode_properties_text",
        "protocol.bodies.registration": (
            "MAX_INFLATED CreateTopicListRequestBody DataVersion RegisterBrokerBody TopicConfig "
            "TopicConfigSerializeWrapper"
        ),
        "protocol.bodies.routes": "BrokerData QueueData TopicRouteData",
        "protocol.bodies.shortcuts": (
            "decode_reset_offset_body encode_consumer_list encode_lock_response encode_reset_offset_body "
            "encode_topic_list"
        ),
        "protocol.rules": "PERM_INHERIT PERM_READ PERM_RW PERM_WRITE is_inherited is_readable is_writeable perm_to_string",
    },
)

__all__ = [
    "CONSUME_FROM_WHERE",
    "CONSUME_TYPES",
    "MAX_INFLATED",
    "MESSAGE_MODELS",
    "MQ",
    "PERM_INHERIT",
    "PERM_READ",
    "PERM_RW",
    "PERM_WRITE",
    "BodyBytes",
    "BodyDecodeError",
    "BrokerData",
    "CMResult",
    "CheckClientRequestBody",
    "ClusterInfo",
    "Connection",
    "ConsumeFromWhere",
    "ConsumeMessageDirectlyResult",
    "ConsumeQueueData",
    "ConsumeStats",
    "ConsumeStatsList",
    "ConsumeType",
    "ConsumerConnection",
    "ConsumerData",
    "ConsumerListBody",
    "CreateTopicListRequestBody",
    "DataVersion",
    "GetConsumerStatusBody",
    "GroupList",
    "HAClientRuntimeInfo",
    "HAConnectionInfo",
    "HARuntimeInfo",
    "HeartbeatData",
    "JsonBody",
    "KVTable",
    "LockBatchRequestBody",
    "LockBatchResponseBody",
    "MessageModel",
    "MessageQueue",
    "OffsetWrapper",
    "ProducerConnection",
    "ProducerData",
    "QueryConsumeQueueResponseBody",
    "QueryConsumeTimeSpanBody",
    "QueueData",
    "QueueTimeSpan",
    "RegisterBrokerBody",
    "ResetOffsetBody",
    "SubscriptionData",
    "TopicConfig",
    "TopicConfigSerializeWrapper",
    "TopicList",
    "TopicOffset",
    "TopicRouteData",
    "TopicStatsTable",
    "decode_properties_text",
    "decode_reset_offset_body",
    "dumps",
    "encode_consumer_list",
    "encode_consumer_running_info",
    "encode_lock_response",
    "encode_properties_text",
    "encode_reset_offset_body",
    "encode_topic_list",
    "is_inherited",
    "is_readable",
    "is_writeable",
    "loads_lenient",
    "perm_to_string",
]
