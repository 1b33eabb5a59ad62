"""The gRPC endpoint's words for a send's outcome: ``broker.services.send``'s refusals and non-OK stored statuses
as ``apache.rocketmq.v2`` codes, as RocketMQ 5's proxy answers them (``ResponseBuilder``, ``SendMessageActivity``).

=================================== ===============================================================================
service outcome                     v2 code
=================================== ===============================================================================
BROKER_READ_ONLY, TOPIC_FORBIDDEN,  FORBIDDEN
TOPIC_READ_ONLY, TX_FORBIDDEN
TOPIC_NAME, SYSTEM_TOPIC            ILLEGAL_TOPIC
NO_TOPIC                            TOPIC_NOT_FOUND
TOO_LARGE                           MESSAGE_BODY_TOO_LARGE
QUEUE_ID, BAD_BATCH                 BAD_REQUEST
TIMER                               ILLEGAL_DELIVERY_TIME (a bad delivery time), else INTERNAL_SERVER_ERROR
PUT_FAILED MESSAGE_ILLEGAL          BAD_REQUEST
PUT_FAILED PROPERTIES_SIZE_EXCEEDED MESSAGE_PROPERTIES_TOO_LARGE
STORE_UNAVAILABLE, other PUT_FAILED INTERNAL_SERVER_ERROR
stored FLUSH_DISK_TIMEOUT           MASTER_PERSISTENCE_TIMEOUT
stored FLUSH_SLAVE_TIMEOUT          SLAVE_PERSISTENCE_TIMEOUT
stored SLAVE_NOT_AVAILABLE          HA_NOT_AVAILABLE
=================================== ===============================================================================

The message of a refusal is the service's ``detail`` (J's remark; for a failed put, the store's own).
"""

from __future__ import annotations

from typing import Final

from broker.proxy.convert import timer_refusal_code
from broker.proxy.pb import definition_pb2 as pb
from broker.services.send import Refusal, SendRefused
from broker.store.results import PutMessageStatus

_REFUSAL_CODE: Final[dict[Refusal, int]] = {
    Refusal.BROKER_READ_ONLY: pb.Code.FORBIDDEN,
    Refusal.TOPIC_FORBIDDEN: pb.Code.FORBIDDEN,
    Refusal.TOPIC_READ_ONLY: pb.Code.FORBIDDEN,
    Refusal.TX_FORBIDDEN: pb.Code.FORBIDDEN,
    Refusal.TOPIC_NAME: pb.Code.ILLEGAL_TOPIC,
    Refusal.SYSTEM_TOPIC: pb.Code.ILLEGAL_TOPIC,
    Refusal.NO_TOPIC: pb.Code.TOPIC_NOT_FOUND,
    Refusal.TOO_LARGE: pb.Code.MESSAGE_BODY_TOO_LARGE,
    Refusal.QUEUE_ID: pb.Code.BAD_REQUEST,
    Refusal.BAD_BATCH: pb.Code.BAD_REQUEST,
    Refusal.STORE_UNAVAILABLE: pb.Code.INTERNAL_SERVER_ERROR,
}
_FAILED_CODE: Final[dict[PutMessageStatus, int]] = {
    PutMessageStatus.MESSAGE_ILLEGAL: pb.Code.BAD_REQUEST,
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: pb.Code.MESSAGE_PROPERTIES_TOO_LARGE,
}
STORED_CODE: Final[dict[PutMessageStatus, int]] = {
    PutMessageStatus.PUT_OK: pb.Code.OK,
    PutMessageStatus.FLUSH_DISK_TIMEOUT: pb.Code.MASTER_PERSISTENCE_TIMEOUT,
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: pb.Code.SLAVE_PERSISTENCE_TIMEOUT,
    PutMessageStatus.SLAVE_NOT_AVAILABLE: pb.Code.HA_NOT_AVAILABLE,
}


def refused_code(exc: SendRefused) -> int:
    """The v2 code of a send the service refused."""
    if exc.reason is Refusal.TIMER:
        return timer_refusal_code(exc.code)
    if exc.reason is Refusal.PUT_FAILED:
        return (
            _FAILED_CODE.get(exc.status, pb.Code.INTERNAL_SERVER_ERROR) if exc.status else pb.Code.INTERNAL_SERVER_ERROR
        )
    return _REFUSAL_CODE.get(exc.reason, pb.Code.INTERNAL_SERVER_ERROR)
