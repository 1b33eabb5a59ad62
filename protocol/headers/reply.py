"""The header of PUSH_REPLY_MESSAGE_TO_CLIENT (326, broker → requesting client): a request-reply answer pushed to
the client that sent the request (J ``ReplyMessageRequestHeader``; RIP-16). SEND_REPLY_MESSAGE (324) and
SEND_REPLY_MESSAGE_V2 (325), responder → broker, use the send headers (``SendMessageRequestHeader`` / ``…V2``).

| field                 | wire name             | note                                                         |
|-----------------------|-----------------------|--------------------------------------------------------------|
| producer_group        | !producerGroup        | the responder's producer group                               |
| topic                 | !topic                | ``<cluster>_REPLY_TOPIC``                                    |
| default_topic         | !defaultTopic         | as sent                                                      |
| default_topic_queue_nums | !defaultTopicQueueNums | as sent                                                  |
| queue_id              | !queueId              | as sent (may be -1)                                          |
| sys_flag              | !sysFlag              | bit 0x1: the body is zlib-compressed                         |
| born_timestamp        | !bornTimestamp        | the responder's send time (ms)                               |
| flag                  | !flag                 | the message flag                                             |
| properties            | properties            | CORRELATION_ID, REPLY_TO_CLIENT, MSG_TYPE=reply, TTL, PUSH_REPLY_TIME … |
| reconsume_times       | reconsumeTimes        |                                                              |
| unit_mode             | unitMode              |                                                              |
| born_host             | !bornHost             | the responder's ``ip:port`` as the broker saw it             |
| store_host            | !storeHost            | the broker's ``ip:port``                                     |
| store_timestamp       | !storeTimestamp       | the broker's push time (ms)                                  |

The body is the reply's body. The client answers SUCCESS (J ``ClientRemotingProcessor.receiveReplyMessage``).
"""

from __future__ import annotations

from protocol.headers.codec import WireHeader, header, wire


@header
class ReplyMessageRequestHeader(WireHeader):
    """PUSH_REPLY_MESSAGE_TO_CLIENT (326)."""

    producer_group: str = wire("producerGroup")
    topic: str = wire("topic")
    default_topic: str = wire("defaultTopic")
    default_topic_queue_nums: int = wire("defaultTopicQueueNums")
    queue_id: int = wire("queueId")
    sys_flag: int = wire("sysFlag")
    born_timestamp: int = wire("bornTimestamp")
    flag: int = wire("flag")
    born_host: str = wire("bornHost")
    store_host: str = wire("storeHost")
    store_timestamp: int = wire("storeTimestamp")
    properties: str | None = wire("properties", default=None)
    reconsume_times: int | None = wire("reconsumeTimes", default=None)
    unit_mode: bool = wire("unitMode", default=False)
