"""The message store: commit log, consume queues, index, flush, recovery and retention (RocketMQ's design).

Imports only the standard library and the pure record codec (``protocol.record``, ``protocol.record_decode``, ``protocol.message_properties``, ``protocol.batch``, ``protocol.msg_id``). The broker talks to the
``MessageStore`` façade; see ``message_store.py``.
"""

from __future__ import annotations

from broker.store.config import StoreConfig
from broker.store.message_store import MessageStore
from broker.store.request import BatchPutRequest, GetRequest, PutRequest
from broker.store.results import (
    AppendResult,
    ConsumeQueueSlice,
    ConsumeQueueUnit,
    GetMessageResult,
    GetMessageStatus,
    PutMessageResult,
    PutMessageStatus,
)

__all__ = [
    "AppendResult",
    "BatchPutRequest",
    "ConsumeQueueSlice",
    "ConsumeQueueUnit",
    "GetMessageResult",
    "GetMessageStatus",
    "GetRequest",
    "MessageStore",
    "PutMessageResult",
    "PutMessageStatus",
    "PutRequest",
    "StoreConfig",
]
