"""The cold custom headers — every header but send and pull — declared with the generic codec
(``protocol.headers.codec``): each field once, with its wire name; ``!`` = required.

| class                                    | code(s)                    | fields                                          |
|------------------------------------------|----------------------------|-------------------------------------------------|
| QueryConsumerOffsetRequestHeader         | 14                         | !consumerGroup !topic !queueId                  |
| UpdateConsumerOffsetRequestHeader        | 15                         | !consumerGroup !topic !queueId !commitOffset    |
| OffsetResponseHeader                     | 14, 29, 30, 31 replies     | !offset                                         |
| QueueRequestHeader                       | 30, 31, 32                 | !topic !queueId                                 |
| SearchOffsetRequestHeader                | 29                         | !topic !queueId !timestamp boundaryType         |
| GetEarliestMsgStoretimeResponseHeader    | 32 reply                   | !timestamp                                      |
| UnregisterClientRequestHeader            | 35                         | !clientID producerGroup consumerGroup           |
| ConsumerGroupRequestHeader               | 38, 40, 203                | !consumerGroup                                  |
| ConsumerSendMsgBackRequestHeader         | 36                         | !offset !group !delayLevel originMsgId          |
|                                          |                            | originTopic unitMode maxReconsumeTimes          |
| ViewMessageRequestHeader                 | 33                         | !offset                                         |
| QueryMessageRequestHeader                | 12                         | !topic !key !maxNum !beginTimestamp             |
|                                          |                            | !endTimestamp _UNIQUE_KEY_QUERY                 |
| QueryMessageResponseHeader               | 12 reply                   | !indexLastUpdateTimestamp                       |
|                                          |                            | !indexLastUpdatePhyoffset                       |
| EndTransactionRequestHeader              | 37                         | !producerGroup !tranStateTableOffset            |
|                                          |                            | !commitLogOffset !commitOrRollback !msgId       |
|                                          |                            | fromTransactionCheck transactionId              |
| CheckTransactionStateRequestHeader       | 39                         | !tranStateTableOffset !commitLogOffset msgId    |
|                                          |                            | transactionId offsetMsgId                       |
| ResetOffsetRequestHeader                 | 220, 222                   | !topic !group !timestamp isForce                |
| GetConsumerStatusRequestHeader           | 221, 223                   | !topic !group clientAddr                        |
| GetConsumerRunningInfoRequestHeader      | 307                        | !consumerGroup !clientId jstackEnable           |
| CreateTopicRequestHeader                 | 17                         | !topic !defaultTopic !readQueueNums             |
|                                          |                            | !writeQueueNums !perm !topicFilterType          |
|                                          |                            | topicSysFlag order attributes                   |
| GetTopicConfigRequestHeader              | 351                        | !topic lo                                       |
| ResumeCheckHalfMessageRequestHeader      | 323                        | !msgId topic                                    |
| TopicRequestHeader                       | 202, 215, 216, 300         | !topic                                          |
| GetRouteInfoRequestHeader                | 105                        | !topic acceptStandardJsonOnly                   |
| DeleteSubscriptionGroupRequestHeader     | 207                        | !groupName removeOffset                         |
| GetConsumeStatsRequestHeader             | 208                        | !consumerGroup topic                            |
| ProducerGroupRequestHeader               | 204                        | !producerGroup                                  |
| QueryConsumeTimeSpanRequestHeader        | 303                        | !topic !group                                   |
| QueryConsumeQueueRequestHeader           | 321                        | !topic !queueId !index !count consumerGroup     |
| CloneGroupOffsetRequestHeader            | 314                        | !srcGroup !destGroup topic offline              |
| GetConsumeStatsInBrokerHeader            | 317                        | !isOrder                                        |
| ConsumeMessageDirectlyResultRequestHeader| 309                        | !consumerGroup clientId msgId brokerName        |
| GetBrokerConfigResponseHeader            | 26 reply                   | !version                                        |
| RegisterBrokerRequestHeader              | 103                        | !brokerName !brokerAddr !clusterName            |
|                                          |                            | !haServerAddr !brokerId compressed bodyCrc32    |
| RegisterBrokerResponseHeader             | 103 reply                  | haServerAddr masterAddr                         |
| UnregisterBrokerRequestHeader            | 104, 322                   | !brokerName !brokerAddr !clusterName !brokerId  |
| QueryDataVersionResponseHeader           | 322 reply                  | !changed                                        |
| KVConfigRequestHeader                    | 100, 101, 102 (lenient)    | !namespace !key value                           |
| PutKVConfigRequestHeader                 | 100                        | !namespace !key !value                          |
| NamespaceKeyRequestHeader                | 101, 102                   | !namespace !key                                 |
| GetKVConfigResponseHeader                | 101 reply                  | value                                           |
| GetKVListByNamespaceRequestHeader        | 219                        | !namespace                                      |
| GetTopicsByClusterRequestHeader          | 224                        | !cluster                                        |
| BrokerNameRequestHeader                  | 205, 327                   | !brokerName                                     |
| WipeWritePermOfBrokerResponseHeader      | 205 reply                  | !wipeTopicCount                                 |
| AddWritePermOfBrokerResponseHeader       | 327 reply                  | !addTopicCount                                  |
"""

from __future__ import annotations

from protocol.headers.codec import Fields, WireHeader, header, wire

# -- consumer offsets and queue queries ------------------------------------------------------------------------------


@header
class QueryConsumerOffsetRequestHeader(WireHeader):
    consumer_group: str = wire("consumerGroup")
    topic: str = wire("topic")
    queue_id: int = wire("queueId")


@header
class UpdateConsumerOffsetRequestHeader(WireHeader):
    consumer_group: str = wire("consumerGroup")
    topic: str = wire("topic")
    queue_id: int = wire("queueId")
    commit_offset: int = wire("commitOffset")


@header
class OffsetResponseHeader(WireHeader):
    """Reply of QUERY_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET and SEARCH_OFFSET_BY_TIMESTAMP."""

    offset: int = wire("offset")


QueryConsumerOffsetResponseHeader = OffsetResponseHeader
GetMaxOffsetResponseHeader = OffsetResponseHeader
GetMinOffsetResponseHeader = OffsetResponseHeader
SearchOffsetResponseHeader = OffsetResponseHeader


@header
class QueueRequestHeader(WireHeader):
    """``topic`` + ``queueId``: GET_MAX_OFFSET, GET_MIN_OFFSET, GET_EARLIEST_MSG_STORETIME."""

    topic: str = wire("topic")
    queue_id: int = wire("queueId")


GetMaxOffsetRequestHeader = QueueRequestHeader
GetMinOffsetRequestHeader = QueueRequestHeader
GetEarliestMsgStoretimeRequestHeader = QueueRequestHeader


@header
class SearchOffsetRequestHeader(WireHeader):
    """SEARCH_OFFSET_BY_TIMESTAMP (29). ``boundaryType`` (5.x clients send it): ``UPPER`` (any case) asks for the
    last message stored at or before the time; anything else, or none, for the first at or after it (LOWER)."""

    topic: str = wire("topic")
    queue_id: int = wire("queueId")
    timestamp: int = wire("timestamp")
    boundary_type: str | None = wire("boundaryType", default=None)

    @property
    def upper(self) -> bool:
        return self.boundary_type is not None and self.boundary_type.upper() == "UPPER"


@header
class GetEarliestMsgStoretimeResponseHeader(WireHeader):
    timestamp: int = wire("timestamp")


# -- clients ---------------------------------------------------------------------------------------------------------


@header
class UnregisterClientRequestHeader(WireHeader):
    """UNREGISTER_CLIENT (35). C++ sends the group it does not have as ``""``: read as None."""

    client_id: str = wire("clientID")
    producer_group: str | None = wire("producerGroup", default=None, empty=None)
    consumer_group: str | None = wire("consumerGroup", default=None, empty=None)


@header
class ConsumerGroupRequestHeader(WireHeader):
    """``consumerGroup`` only: GET_CONSUMER_LIST_BY_GROUP (38), NOTIFY_CONSUMER_IDS_CHANGED (40, broker → client,
    oneway), GET_CONSUMER_CONNECTION_LIST (203)."""

    consumer_group: str = wire("consumerGroup")


GetConsumerListByGroupRequestHeader = ConsumerGroupRequestHeader
NotifyConsumerIdsChangedRequestHeader = ConsumerGroupRequestHeader
GetConsumerConnectionListRequestHeader = ConsumerGroupRequestHeader


@header
class ConsumerSendMsgBackRequestHeader(WireHeader):
    """CONSUMER_SEND_MSG_BACK (36): ``offset`` is the commit-log offset of the message to retry."""

    offset: int = wire("offset")
    group: str = wire("group")
    delay_level: int = wire("delayLevel")
    origin_msg_id: str | None = wire("originMsgId", default=None)
    origin_topic: str | None = wire("originTopic", default=None)
    unit_mode: bool = wire("unitMode", default=False)
    max_reconsume_times: int | None = wire("maxReconsumeTimes", default=None)


# -- queries and transactions ---------------------------------------------------------------------------------------


@header
class ViewMessageRequestHeader(WireHeader):
    """VIEW_MESSAGE_BY_ID (33): ``offset`` is the commit-log offset decoded from an offset msgId."""

    offset: int = wire("offset")


@header
class QueryMessageRequestHeader(WireHeader):
    """QUERY_MESSAGE (12). ``_UNIQUE_KEY_QUERY=true`` (an extra extField J adds) makes ``key`` a UNIQ_KEY lookup."""

    topic: str = wire("topic")
    key: str = wire("key")
    max_num: int = wire("maxNum")
    begin_timestamp: int = wire("beginTimestamp")
    end_timestamp: int = wire("endTimestamp")
    unique_key_query: bool = wire("_UNIQUE_KEY_QUERY", default=False, omit_false=True)


@header
class QueryMessageResponseHeader(WireHeader):
    index_last_update_timestamp: int = wire("indexLastUpdateTimestamp")
    index_last_update_phyoffset: int = wire("indexLastUpdatePhyoffset")


@header
class ResumeCheckHalfMessageRequestHeader(WireHeader):
    """RESUME_CHECK_HALF_MESSAGE (323): ``msgId`` = the offset id of a stored (half) message."""

    msg_id: str = wire("msgId")
    topic: str | None = wire("topic", default=None, empty=None)


@header
class EndTransactionRequestHeader(WireHeader):
    """END_TRANSACTION (37); oneway from C++. ``commit_or_rollback`` is the TRANSACTION_*_TYPE sysFlag value
    (0x8 commit, 0xC rollback, 0x0 unknown)."""

    producer_group: str = wire("producerGroup")
    tran_state_table_offset: int = wire("tranStateTableOffset")
    commit_log_offset: int = wire("commitLogOffset")
    commit_or_rollback: int = wire("commitOrRollback")
    msg_id: str = wire("msgId")
    from_transaction_check: bool = wire("fromTransactionCheck", default=False)
    transaction_id: str | None = wire("transactionId", default=None)


@header
class CheckTransactionStateRequestHeader(WireHeader):
    """CHECK_TRANSACTION_STATE (39), broker → producer; the half message travels in the body."""

    tran_state_table_offset: int = wire("tranStateTableOffset")
    commit_log_offset: int = wire("commitLogOffset")
    msg_id: str | None = wire("msgId", default=None)
    transaction_id: str | None = wire("transactionId", default=None)
    offset_msg_id: str | None = wire("offsetMsgId", default=None)


# -- offsets reset and consumer status -------------------------------------------------------------------------------


@header
class ResetOffsetRequestHeader(WireHeader):
    """INVOKE_BROKER_TO_RESET_OFFSET (222) and RESET_CONSUMER_CLIENT_OFFSET (220). The key is literally
    ``isForce`` (headers are read by field name); C++ reads it with ``atoi``, so ``to_ext_fields(numeric_bool=True)``
    writes ``1``/``0`` — use it when the target client's language is CPP. An absent ``isForce`` reads as false."""

    topic: str = wire("topic")
    group: str = wire("group")
    timestamp: int = wire("timestamp")
    is_force: bool = wire("isForce", required=False)

    def to_ext_fields(self, *, numeric_bool: bool = False) -> Fields:
        out = self._wire_to_ext_fields()
        if numeric_bool:
            out["isForce"] = "1" if self.is_force else "0"
        return out


@header
class GetConsumerStatusRequestHeader(WireHeader):
    """GET_CONSUMER_STATUS_FROM_CLIENT (221, broker → client) and INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223)."""

    topic: str = wire("topic")
    group: str = wire("group")
    client_addr: str | None = wire("clientAddr", default=None)


@header
class GetConsumerRunningInfoRequestHeader(WireHeader):
    """GET_CONSUMER_RUNNING_INFO (307): admin → broker, relayed broker → client. The client's reply body is
    ConsumerRunningInfo, which C++ writes with object keys: relay it as bytes."""

    consumer_group: str = wire("consumerGroup")
    client_id: str = wire("clientId")
    jstack_enable: bool = wire("jstackEnable", default=False)


# -- admin -----------------------------------------------------------------------------------------------------------


@header
class CreateTopicRequestHeader(WireHeader):
    """UPDATE_AND_CREATE_TOPIC (17). J also requires ``order``; a missing one reads as false here."""

    topic: str = wire("topic")
    default_topic: str = wire("defaultTopic")
    read_queue_nums: int = wire("readQueueNums")
    write_queue_nums: int = wire("writeQueueNums")
    perm: int = wire("perm")
    topic_filter_type: str = wire("topicFilterType", default="SINGLE_TAG", required=True)
    topic_sys_flag: int = wire("topicSysFlag", default=0)
    order: bool = wire("order", default=False)
    attributes: str | None = wire("attributes", default=None, empty=None)  # 5.x: "+message.type=FIFO,..."


@header
class GetTopicConfigRequestHeader(WireHeader):
    """GET_TOPIC_CONFIG (351, 5.x). ``lo``: also return the static-topic queue mapping (none here)."""

    topic: str = wire("topic")
    lo: bool | None = wire("lo", default=None)


@header
class TopicRequestHeader(WireHeader):
    """A header with only ``topic``: DELETE_TOPIC_IN_BROKER, DELETE_TOPIC_IN_NAMESRV, GET_TOPIC_STATS_INFO,
    QUERY_TOPIC_CONSUME_BY_WHO."""

    topic: str = wire("topic")


DeleteTopicRequestHeader = TopicRequestHeader
DeleteTopicFromNamesrvRequestHeader = TopicRequestHeader
GetTopicStatsInfoRequestHeader = TopicRequestHeader
QueryTopicConsumeByWhoRequestHeader = TopicRequestHeader


@header
class GetRouteInfoRequestHeader(WireHeader):
    """GET_ROUTEINFO_BY_TOPIC (105). ``accept_standard_json_only`` is None when the client did not say."""

    topic: str = wire("topic")
    accept_standard_json_only: bool | None = wire("acceptStandardJsonOnly", default=None)


@header
class DeleteSubscriptionGroupRequestHeader(WireHeader):
    group_name: str = wire("groupName")
    remove_offset: bool = wire("removeOffset", default=False)


@header
class GetConsumeStatsRequestHeader(WireHeader):
    """GET_CONSUME_STATS (208): every topic of the group when ``topic`` is absent or empty."""

    consumer_group: str = wire("consumerGroup")
    topic: str | None = wire("topic", default=None, empty=None)


@header
class ProducerGroupRequestHeader(WireHeader):
    """``producerGroup`` only: GET_PRODUCER_CONNECTION_LIST."""

    producer_group: str = wire("producerGroup")


GetProducerConnectionListRequestHeader = ProducerGroupRequestHeader


@header
class QueryConsumeTimeSpanRequestHeader(WireHeader):
    """QUERY_CONSUME_TIME_SPAN (303): store-time span of every queue of ``topic`` and where ``group`` is in it."""

    topic: str = wire("topic")
    group: str = wire("group")


@header
class QueryConsumeQueueRequestHeader(WireHeader):
    """QUERY_CONSUME_QUEUE (321): ``count`` raw consume-queue units of ``topic``/``queueId`` from queue offset
    ``index``; ``consumerGroup`` adds that group's subscription. J declares every field nullable (a missing number
    reads as 0, a missing topic fails later with a NullPointerException); here topic, queueId, index and count are
    required so a bad request gets J's "the custom field <x> is null" instead."""

    topic: str = wire("topic")
    queue_id: int = wire("queueId")
    index: int = wire("index")
    count: int = wire("count")
    consumer_group: str | None = wire("consumerGroup", default=None, empty=None)


@header
class CloneGroupOffsetRequestHeader(WireHeader):
    """CLONE_GROUP_OFFSET (314): copy ``srcGroup``'s committed offsets on ``topic`` (every topic it has offsets on
    when absent or empty) to ``destGroup``. ``offline`` = skip the check that ``srcGroup``'s online consumers
    subscribe the topic."""

    src_group: str = wire("srcGroup")
    dest_group: str = wire("destGroup")
    topic: str | None = wire("topic", default=None, empty=None)
    offline: bool = wire("offline", default=False)


@header
class GetConsumeStatsInBrokerHeader(WireHeader):
    """GET_BROKER_CONSUME_STATS (317). The key is literally ``isOrder`` (J reads headers by field name);
    ``true`` = only ordered topics. Required, as J's ``@CFNotNull boolean isOrder``."""

    is_order: bool = wire("isOrder")


@header
class ConsumeMessageDirectlyResultRequestHeader(WireHeader):
    """CONSUME_MESSAGE_DIRECTLY (309): admin → broker, relayed broker → client with the stored message as the body.
    ``msgId`` is an offset msgId (``protocol.msg_id.decode_offset_msg_id``); the broker sets ``brokerName`` to its
    own name before relaying. Only ``consumerGroup`` is required (J 4.9.7)."""

    consumer_group: str = wire("consumerGroup")
    client_id: str | None = wire("clientId", default=None)
    msg_id: str | None = wire("msgId", default=None)
    broker_name: str | None = wire("brokerName", default=None)


@header
class GetBrokerConfigResponseHeader(WireHeader):
    """Reply of GET_BROKER_CONFIG (26): the body is the properties text, ``version`` its DataVersion JSON."""

    version: str = wire("version")


# -- name server -----------------------------------------------------------------------------------------------------


@header
class RegisterBrokerRequestHeader(WireHeader):
    """REGISTER_BROKER (103). ``body_crc32`` = crc32(body) & 0x7FFFFFFF, 0 = do not check; ``compressed`` selects
    the zlib form of RegisterBrokerBody."""

    broker_name: str = wire("brokerName")
    broker_addr: str = wire("brokerAddr")
    cluster_name: str = wire("clusterName")
    ha_server_addr: str = wire("haServerAddr")
    broker_id: int = wire("brokerId")
    compressed: bool = wire("compressed", default=False)
    body_crc32: int = wire("bodyCrc32", default=0)


@header
class RegisterBrokerResponseHeader(WireHeader):
    """Reply of REGISTER_BROKER: the master's HA and broker address, for slaves (None for a master)."""

    ha_server_addr: str | None = wire("haServerAddr", default=None)
    master_addr: str | None = wire("masterAddr", default=None)


@header
class UnregisterBrokerRequestHeader(WireHeader):
    """UNREGISTER_BROKER (104); the same four fields identify the broker in QUERY_DATA_VERSION (322)."""

    broker_name: str = wire("brokerName")
    broker_addr: str = wire("brokerAddr")
    cluster_name: str = wire("clusterName")
    broker_id: int = wire("brokerId")


QueryDataVersionRequestHeader = UnregisterBrokerRequestHeader


@header
class QueryDataVersionResponseHeader(WireHeader):
    """Reply of QUERY_DATA_VERSION: whether the name server's DataVersion for the broker differs from the body's."""

    changed: bool = wire("changed")


@header
class KVConfigRequestHeader(WireHeader):
    """PUT_KV_CONFIG (with value), GET_KV_CONFIG / DELETE_KV_CONFIG (without); the lenient form of the two
    specific classes below."""

    namespace: str = wire("namespace")
    key: str = wire("key")
    value: str | None = wire("value", default=None)


@header
class PutKVConfigRequestHeader(WireHeader):
    namespace: str = wire("namespace")
    key: str = wire("key")
    value: str = wire("value")


@header
class NamespaceKeyRequestHeader(WireHeader):
    """GET_KV_CONFIG (101) and DELETE_KV_CONFIG (102)."""

    namespace: str = wire("namespace")
    key: str = wire("key")


GetKVConfigRequestHeader = NamespaceKeyRequestHeader
DeleteKVConfigRequestHeader = NamespaceKeyRequestHeader


@header
class GetKVConfigResponseHeader(WireHeader):
    value: str | None = wire("value", default=None)


@header
class GetKVListByNamespaceRequestHeader(WireHeader):
    namespace: str = wire("namespace")


@header
class GetTopicsByClusterRequestHeader(WireHeader):
    cluster: str = wire("cluster")


@header
class BrokerNameRequestHeader(WireHeader):
    """``brokerName`` only: WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327)."""

    broker_name: str = wire("brokerName")


WipeWritePermOfBrokerRequestHeader = BrokerNameRequestHeader
AddWritePermOfBrokerRequestHeader = BrokerNameRequestHeader


@header
class WipeWritePermOfBrokerResponseHeader(WireHeader):
    wipe_topic_count: int = wire("wipeTopicCount")


@header
class AddWritePermOfBrokerResponseHeader(WireHeader):
    add_topic_count: int = wire("addTopicCount")
