"""GroupStateTables: the tables every question about a consumer group's standing on this broker reads (queue
offsets in the store, topic configs, subscription groups, committed offsets, the group's live clients), handed around
as one value to the request wiring, both front ends and the services and handlers that answer such questions
(consume stats, offset resets, transaction checks)."""

from __future__ import annotations

from typing import NamedTuple

from broker.services.client_registry import ClientRegistry
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore


class GroupStateTables(NamedTuple):
    store: MessageStore
    topics: TopicConfigTable
    groups: SubscriptionGroupTable
    offsets: ConsumerOffsetTable
    clients: ClientRegistry
