"""RocketMQ's shared naming and permission rules, pure (no state, no IO): system topic names (``TBW102`` …), the
``%RETRY%``/``%DLQ%`` prefixes, the permission bits (J ``PermName``) and topic/group name validation (J
``TopicValidator``). The name server, the broker and the client read them from here; Spark reaches them through
``client``.

| name                         | value                                                                              |
|------------------------------|------------------------------------------------------------------------------------|
| AUTO_CREATE_TOPIC            | ``TBW102``: the template topic of auto-created topics                              |
| RETRY_PREFIX / DLQ_PREFIX    | ``%RETRY%`` + group / ``%DLQ%`` + group                                            |
| reply_topic(cluster)         | ``<cluster>_REPLY_TOPIC``: where request-reply answers go (J ``MixAll.getReplyTopic``) |
| REPLY_MESSAGE_FLAG           | ``reply``: the MSG_TYPE property of a reply message                                |
| SYSTEM_GROUP_PREFIX          | ``CID_RMQ_SYS_``: system consumer groups (J ``MixAll.isSysConsumerGroup``)          |
| SYSTEM_TOPIC_PREFIX          | ``rmq_sys_``                                                                       |
| PERM_PRIORITY/READ/WRITE/INHERIT | 0x8 / 0x4 / 0x2 / 0x1                                                          |
| NAME_PATTERN                 | ``^[%|a-zA-Z0-9_-]+$`` (topics and groups)                                         |
| TOPIC_MAX_LENGTH / GROUP_MAX_LENGTH | 127 / 255                                                                   |
"""

from __future__ import annotations

import re
from typing import Final

AUTO_CREATE_TOPIC: Final = "TBW102"
SELF_TEST_TOPIC: Final = "SELF_TEST_TOPIC"
BENCHMARK_TOPIC: Final = "BenchmarkTest"
OFFSET_MOVED_EVENT: Final = "OFFSET_MOVED_EVENT"
SCHEDULE_TOPIC: Final = "SCHEDULE_TOPIC_XXXX"
TRANS_HALF_TOPIC: Final = "RMQ_SYS_TRANS_HALF_TOPIC"
TRANS_OP_HALF_TOPIC: Final = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
TRANS_CHECK_MAX_TIME_TOPIC: Final = "TRANS_CHECK_MAX_TIME_TOPIC"
TRACE_TOPIC: Final = "RMQ_SYS_TRACE_TOPIC"
REPLY_TOPIC_POSTFIX: Final = "REPLY_TOPIC"
RETRY_PREFIX: Final = "%RETRY%"
DLQ_PREFIX: Final = "%DLQ%"
SYSTEM_TOPIC_PREFIX: Final = "rmq_sys_"
REPLY_MESSAGE_FLAG: Final = "reply"
SYSTEM_GROUP_PREFIX: Final = "CID_RMQ_SYS_"

# Sends to these are refused (J TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET).
NOT_ALLOWED_SEND: Final = frozenset(
    {
        SCHEDULE_TOPIC,
        TRANS_HALF_TOPIC,
        TRANS_OP_HALF_TOPIC,
        TRANS_CHECK_MAX_TIME_TOPIC,
        SELF_TEST_TOPIC,
        OFFSET_MOVED_EVENT,
    }
)

# J TopicValidator.SYSTEM_TOPIC_SET as initialised statically (the broker adds the topics of
# ``topic_config.system_topics`` to it at start: cluster name, broker name, trace topic, <cluster>_REPLY_TOPIC).
SYSTEM_TOPIC_SET: Final = frozenset(
    {
        AUTO_CREATE_TOPIC,
        SCHEDULE_TOPIC,
        BENCHMARK_TOPIC,
        TRANS_HALF_TOPIC,
        TRANS_OP_HALF_TOPIC,
        TRANS_CHECK_MAX_TIME_TOPIC,
        TRACE_TOPIC,
        OFFSET_MOVED_EVENT,
        SELF_TEST_TOPIC,
    }
)

# PermName bits.
PERM_PRIORITY: Final = 0x8
PERM_READ: Final = 0x4
PERM_WRITE: Final = 0x2
PERM_INHERIT: Final = 0x1
PERM_RW: Final = PERM_READ | PERM_WRITE

TOPIC_MAX_LENGTH: Final = 127
GROUP_MAX_LENGTH: Final = 255
NAME_PATTERN: Final = "^[%|a-zA-Z0-9_-]+$"
VALID_NAME: Final = re.compile(NAME_PATTERN)


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


def retry_topic(group: str) -> str:
    return RETRY_PREFIX + group


def dlq_topic(group: str) -> str:
    return DLQ_PREFIX + group


def reply_topic(cluster: str) -> str:
    """J ``MixAll.getReplyTopic``: the topic every broker of ``cluster`` creates for request-reply answers."""
    return f"{cluster}_{REPLY_TOPIC_POSTFIX}"


def is_valid_name(name: str, max_length: int = GROUP_MAX_LENGTH) -> bool:
    """``NAME_PATTERN`` and at most ``max_length`` characters (a group's 255 by default)."""
    return len(name) <= max_length and VALID_NAME.match(name) is not None


def topic_error(topic: str) -> str | None:
    """J ``TopicValidator.validateTopic``: the SYSTEM_ERROR remark for a bad topic name, or None when it is fine."""
    if not topic or not topic.strip():
        return "The specified topic is blank."
    if not VALID_NAME.match(topic):
        return "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    if len(topic) > TOPIC_MAX_LENGTH:
        return f"The specified topic is longer than topic max length {TOPIC_MAX_LENGTH}."
    return None


def group_error(group: str) -> str | None:
    """The remark for a bad group name, or None."""
    if not group or not group.strip():
        return "the specified group is blank"
    if not VALID_NAME.match(group):
        return "the specified group contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    if len(group) > GROUP_MAX_LENGTH:
        return f"the specified group is longer than group max length {GROUP_MAX_LENGTH}."
    return None


def send_forbidden_remark(topic: str) -> str | None:
    """J ``TopicValidator.isNotAllowedSendTopic``: NO_PERMISSION remark, or None when sending is allowed."""
    if topic in NOT_ALLOWED_SEND:
        return f"Sending message to topic[{topic}] is forbidden."
    return None
