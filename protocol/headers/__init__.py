"""Typed custom headers (the ``extFields`` of a RemotingCommand) for every command the name server, broker and clients
speak.

Each header is a frozen slotted dataclass whose fields are declared once, with their wire names
(``protocol.headers.codec``: ``@header`` generates ``from_ext_fields`` / ``to_ext_fields``); send and pull keep a
hand-tuned ``from_ext_fields`` (modules ``send`` and ``pull``) because they run once per message. Field names on the
wire are exactly RocketMQ's (``docs/reference/protocol.md`` §b; J 4.9.7 ``*RequestHeader`` / ``*ResponseHeader`` classes).

Rules shared by every header:

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
    |      |                                      |                                        | attributes                           |
    | 29   | SEARCH_OFFSET_BY_TIMESTAMP           | SearchOffsetRequestHeader              | !topic !queueId !timestamp           |
    |      |                                      |                                        | boundaryType                         |
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
    | 324  | SEND_REPLY_MESSAGE                   | SendMessageRequestHeader               | as SEND_MESSAGE                      |
    | 325  | SEND_REPLY_MESSAGE_V2                | SendMessageRequestHeaderV2             | as SEND_MESSAGE_V2                   |
    | 326  | PUSH_REPLY_MESSAGE_TO_CLIENT (b→c)   | ReplyMessageRequestHeader              | (module ``reply``)                   |
    | 327  | ADD_WRITE_PERM_OF_BROKER             | BrokerNameRequestHeader                | !brokerName                          |
    | 323  | RESUME_CHECK_HALF_MESSAGE            | ResumeCheckHalfMessageRequestHeader    | !msgId topic                         |
    | 351  | GET_TOPIC_CONFIG                     | GetTopicConfigRequestHeader            | !topic lo                            |

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

The V2 one-letter names and the hot-path technique are described in ``protocol.headers.send``.

| module | owns                                                                                     |
|--------|------------------------------------------------------------------------------------------|
| codec  | errors, field readers, ``wire()``/``@header``: the declarative codec                     |
| send   | SendMessageRequestHeader(V2), SendMessageResponseHeader, SEND_V2_AS_V1 (hand-tuned)      |
| pull   | PullMessageRequestHeader, PullMessageResponseHeader, PULL_FLAG_* (hand-tuned)            |
| reply  | ReplyMessageRequestHeader (PUSH_REPLY_MESSAGE_TO_CLIENT, request-reply)                  |
| cold   | every other header, declared                                                             |
| (here) | REQUEST_HEADERS / RESPONSE_HEADERS registries, ``parse_request_header``                   |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from protocol.codes import RequestCode
from protocol.headers.codec import (
    BadHeaderFieldError,
    CustomHeader,
    Fields,
    HeaderClass,
    MalformedHeaderError,
    MissingHeaderFieldError,
    WireHeader,
    header,
    wire,
)
from protocol.headers.cold import (
    AddWritePermOfBrokerRequestHeader,
    AddWritePermOfBrokerResponseHeader,
    BrokerNameRequestHeader,
    CheckTransactionStateRequestHeader,
    CloneGroupOffsetRequestHeader,
    ConsumeMessageDirectlyResultRequestHeader,
    ConsumerGroupRequestHeader,
    ConsumerSendMsgBackRequestHeader,
    CreateTopicRequestHeader,
    DeleteKVConfigRequestHeader,
    DeleteSubscriptionGroupRequestHeader,
    DeleteTopicFromNamesrvRequestHeader,
    DeleteTopicRequestHeader,
    EndTransactionRequestHeader,
    GetBrokerConfigResponseHeader,
    GetConsumerConnectionListRequestHeader,
    GetConsumerListByGroupRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    GetConsumerStatusRequestHeader,
    GetConsumeStatsInBrokerHeader,
    GetConsumeStatsRequestHeader,
    GetEarliestMsgStoretimeRequestHeader,
    GetEarliestMsgStoretimeResponseHeader,
    GetKVConfigRequestHeader,
    GetKVConfigResponseHeader,
    GetKVListByNamespaceRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMaxOffsetResponseHeader,
    GetMinOffsetRequestHeader,
    GetMinOffsetResponseHeader,
    GetProducerConnectionListRequestHeader,
    GetRouteInfoRequestHeader,
    GetTopicConfigRequestHeader,
    GetTopicsByClusterRequestHeader,
    GetTopicStatsInfoRequestHeader,
    KVConfigRequestHeader,
    NamespaceKeyRequestHeader,
    NotifyConsumerIdsChangedRequestHeader,
    OffsetResponseHeader,
    ProducerGroupRequestHeader,
    PutKVConfigRequestHeader,
    QueryConsumeQueueRequestHeader,
    QueryConsumerOffsetRequestHeader,
    QueryConsumerOffsetResponseHeader,
    QueryConsumeTimeSpanRequestHeader,
    QueryDataVersionRequestHeader,
    QueryDataVersionResponseHeader,
    QueryMessageRequestHeader,
    QueryMessageResponseHeader,
    QueryTopicConsumeByWhoRequestHeader,
    QueueRequestHeader,
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    ResetOffsetRequestHeader,
    ResumeCheckHalfMessageRequestHeader,
    SearchOffsetRequestHeader,
    SearchOffsetResponseHeader,
    TopicRequestHeader,
    UnregisterBrokerRequestHeader,
    UnregisterClientRequestHeader,
    UpdateConsumerOffsetRequestHeader,
    ViewMessageRequestHeader,
    WipeWritePermOfBrokerRequestHeader,
    WipeWritePermOfBrokerResponseHeader,
)
from protocol.headers.pull import (
    PULL_FLAG_CLASS_FILTER,
    PULL_FLAG_COMMIT_OFFSET,
    PULL_FLAG_LITE_PULL,
    PULL_FLAG_SUBSCRIPTION,
    PULL_FLAG_SUSPEND,
    PullMessageRequestHeader,
    PullMessageResponseHeader,
)
from protocol.headers.reply import ReplyMessageRequestHeader
from protocol.headers.send import (
    SEND_V1_NAMES,
    SEND_V2_AS_V1,
    SEND_V2_NAMES,
    WIRE_BOOL,
    SendMessageRequestHeader,
    SendMessageRequestHeaderV2,
    SendMessageResponseHeader,
)

# -- registries ------------------------------------------------------------------------------------------------------

REQUEST_HEADERS: Final[Mapping[int, HeaderClass]] = {
    RequestCode.SEND_MESSAGE: SendMessageRequestHeader,
    RequestCode.PULL_MESSAGE: PullMessageRequestHeader,
    RequestCode.QUERY_MESSAGE: QueryMessageRequestHeader,
    RequestCode.QUERY_CONSUMER_OFFSET: QueryConsumerOffsetRequestHeader,
    RequestCode.UPDATE_CONSUMER_OFFSET: UpdateConsumerOffsetRequestHeader,
    RequestCode.UPDATE_AND_CREATE_TOPIC: CreateTopicRequestHeader,
    RequestCode.GET_TOPIC_CONFIG: GetTopicConfigRequestHeader,
    RequestCode.RESUME_CHECK_HALF_MESSAGE: ResumeCheckHalfMessageRequestHeader,
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
    RequestCode.SEND_REPLY_MESSAGE: SendMessageRequestHeader,
    RequestCode.SEND_REPLY_MESSAGE_V2: SendMessageRequestHeaderV2,
    RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT: ReplyMessageRequestHeader,
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


__all__ = [
    "PULL_FLAG_CLASS_FILTER",
    "PULL_FLAG_COMMIT_OFFSET",
    "PULL_FLAG_LITE_PULL",
    "PULL_FLAG_SUBSCRIPTION",
    "PULL_FLAG_SUSPEND",
    "REQUEST_HEADERS",
    "RESPONSE_HEADERS",
    "SEND_V1_NAMES",
    "SEND_V2_AS_V1",
    "SEND_V2_NAMES",
    "WIRE_BOOL",
    "AddWritePermOfBrokerRequestHeader",
    "AddWritePermOfBrokerResponseHeader",
    "BadHeaderFieldError",
    "BrokerNameRequestHeader",
    "CheckTransactionStateRequestHeader",
    "CloneGroupOffsetRequestHeader",
    "ConsumeMessageDirectlyResultRequestHeader",
    "ConsumerGroupRequestHeader",
    "ConsumerSendMsgBackRequestHeader",
    "CreateTopicRequestHeader",
    "CustomHeader",
    "DeleteKVConfigRequestHeader",
    "DeleteSubscriptionGroupRequestHeader",
    "DeleteTopicFromNamesrvRequestHeader",
    "DeleteTopicRequestHeader",
    "EndTransactionRequestHeader",
    "Fields",
    "GetBrokerConfigResponseHeader",
    "GetConsumeStatsInBrokerHeader",
    "GetConsumeStatsRequestHeader",
    "GetConsumerConnectionListRequestHeader",
    "GetConsumerListByGroupRequestHeader",
    "GetConsumerRunningInfoRequestHeader",
    "GetConsumerStatusRequestHeader",
    "GetEarliestMsgStoretimeRequestHeader",
    "GetEarliestMsgStoretimeResponseHeader",
    "GetKVConfigRequestHeader",
    "GetKVConfigResponseHeader",
    "GetKVListByNamespaceRequestHeader",
    "GetMaxOffsetRequestHeader",
    "GetMaxOffsetResponseHeader",
    "GetMinOffsetRequestHeader",
    "GetMinOffsetResponseHeader",
    "GetProducerConnectionListRequestHeader",
    "GetRouteInfoRequestHeader",
    "GetTopicConfigRequestHeader",
    "GetTopicStatsInfoRequestHeader",
    "GetTopicsByClusterRequestHeader",
    "HeaderClass",
    "KVConfigRequestHeader",
    "MalformedHeaderError",
    "MissingHeaderFieldError",
    "NamespaceKeyRequestHeader",
    "NotifyConsumerIdsChangedRequestHeader",
    "OffsetResponseHeader",
    "ProducerGroupRequestHeader",
    "PullMessageRequestHeader",
    "PullMessageResponseHeader",
    "PutKVConfigRequestHeader",
    "QueryConsumeQueueRequestHeader",
    "QueryConsumeTimeSpanRequestHeader",
    "QueryConsumerOffsetRequestHeader",
    "QueryConsumerOffsetResponseHeader",
    "QueryDataVersionRequestHeader",
    "QueryDataVersionResponseHeader",
    "QueryMessageRequestHeader",
    "QueryMessageResponseHeader",
    "QueryTopicConsumeByWhoRequestHeader",
    "QueueRequestHeader",
    "RegisterBrokerRequestHeader",
    "RegisterBrokerResponseHeader",
    "ReplyMessageRequestHeader",
    "ResetOffsetRequestHeader",
    "ResumeCheckHalfMessageRequestHeader",
    "SearchOffsetRequestHeader",
    "SearchOffsetResponseHeader",
    "SendMessageRequestHeader",
    "SendMessageRequestHeaderV2",
    "SendMessageResponseHeader",
    "TopicRequestHeader",
    "UnregisterBrokerRequestHeader",
    "UnregisterClientRequestHeader",
    "UpdateConsumerOffsetRequestHeader",
    "ViewMessageRequestHeader",
    "WipeWritePermOfBrokerRequestHeader",
    "WipeWritePermOfBrokerResponseHeader",
    "WireHeader",
    "header",
    "parse_request_header",
    "wire",
]
