"""Composition of the broker's part-2 request handlers (send-back, locks, queries, offset reset, transactions,
admin: topics, groups, stats, offsets, queues), kept beside ``broker.app`` so the composition root stays short.
Like ``BrokerApp`` it holds no business logic: it builds the services and handler modules, gives each only its
collaborators, registers them, and owns the transaction check task's start/stop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from broker.config import BrokerConfig
from broker.handlers.admin_broker import BrokerConfigHandlers, RuntimeConfig
from broker.handlers.admin_group import AdminGroupHandlers
from broker.handlers.admin_maintenance import AdminMaintenanceHandlers
from broker.handlers.admin_offsets import AdminOffsetsHandlers
from broker.handlers.admin_queue import AdminQueueHandlers
from broker.handlers.admin_stats import AdminStatsHandlers, ConsumeStatsBuilder
from broker.handlers.admin_topic import AdminTopicHandlers
from broker.handlers.lock import LockHandlers
from broker.handlers.offset_reset import OffsetResetHandlers
from broker.handlers.query import QueryHandlers
from broker.handlers.send_back import SendBackHandlers
from broker.handlers.transaction import TransactionHandlers
from broker.services.broker_stats import BrokerStats
from broker.services.client_registry import ClientRegistry
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.rebalance_locks import RebalanceLockManager
from broker.services.schedule import ScheduleService
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.services.transactions import TransactionService
from broker.store.message_store import MessageStore
from protocol.codes import RequestCode
from protocol.remoting import HandlerRegistry


class Part2:
    def __init__(
        self,
        config: BrokerConfig,
        store: MessageStore,
        topics: TopicConfigTable,
        groups: SubscriptionGroupTable,
        offsets: ConsumerOffsetTable,
        clients: ClientRegistry,
        schedule: ScheduleService,
        on_config: Callable[[BrokerConfig], None],
        release_held_pulls: Callable[[str, str], int],
        broker_addr: Callable[[], str],
        stats: BrokerStats | None = None,
    ) -> None:
        ident, feat = config.identity, config.features
        self.locks = RebalanceLockManager()
        self.transactions = TransactionService(
            store,
            topics,
            offsets,
            clients,
            check_interval_ms=feat.transaction_check_interval,
            timeout_ms=feat.transaction_time_out,
            check_max=feat.transaction_check_max,
        )
        if stats is not None:
            self.transactions.on_end = stats.on_tx_end

        def store_knobs(c: BrokerConfig) -> None:
            store.config = dataclasses.replace(
                store.config,
                file_reserved_time_hours=c.store.file_reserved_time,
                delete_when=c.store.delete_when,
                disk_max_used_space_ratio=c.store.disk_max_used_space_ratio,
            )

        def tx_knobs(c: BrokerConfig) -> None:
            tx = self.transactions
            tx.timeout_ms = c.features.transaction_time_out
            tx.check_max = c.features.transaction_check_max
            tx.check_interval_ms = c.features.transaction_check_interval

        def then_publish(fn: Callable[[BrokerConfig], None]) -> Callable[[BrokerConfig], None]:
            def apply(c: BrokerConfig) -> None:
                fn(c)
                on_config(c)

            return apply

        self.runtime_config = RuntimeConfig(
            config,
            {
                "autoCreateTopicEnable": then_publish(lambda c: topics.update_features(c.features)),
                "autoCreateSubscriptionGroup": then_publish(
                    lambda c: groups.set_auto_create(c.features.auto_create_subscription_group)
                ),
                "fileReservedTime": then_publish(store_knobs),
                "deleteWhen": then_publish(store_knobs),
                "diskMaxUsedSpaceRatio": then_publish(store_knobs),
                "transactionTimeOut": then_publish(tx_knobs),
                "transactionCheckMax": then_publish(tx_knobs),
                "transactionCheckInterval": then_publish(tx_knobs),
            },
        )
        self.send_back = SendBackHandlers(
            store,
            topics,
            groups,
            schedule,
            broker_ip=ident.broker_ip1,
            broker_permission=ident.broker_permission,
            stats=stats,
        )
        self.transaction_handlers = TransactionHandlers(
            self.transactions,
            topics,
            broker_ip=ident.broker_ip1,
            broker_permission=ident.broker_permission,
            region_id=ident.region_id,
            trace_on=ident.trace_on,
            max_message_size=config.store.max_message_size,
            is_slave=ident.broker_role == "SLAVE",
        )
        self.consume_stats = consume_stats = ConsumeStatsBuilder(
            store, topics, offsets, clients, broker_name=ident.broker_name
        )
        self._tables = [
            self.send_back.table(),
            LockHandlers(self.locks).table(),
            QueryHandlers(store).table(),
            OffsetResetHandlers(
                store, topics, offsets, clients, release_held_pulls, broker_name=ident.broker_name
            ).table(),
            self.transaction_handlers.table(),
            AdminTopicHandlers(topics, offsets, store, cluster_name=ident.broker_cluster_name).table(),
            AdminGroupHandlers(groups, offsets).table(),
            AdminStatsHandlers(
                store, topics, offsets, clients, consume_stats, broker_name=ident.broker_name, stats=stats
            ).table(),
            AdminOffsetsHandlers(
                store,
                topics,
                groups,
                offsets,
                clients,
                schedule,
                consume_stats,
                broker_name=ident.broker_name,
                broker_addr=broker_addr,
            ).table(),
            AdminQueueHandlers(store, topics, clients, broker_name=ident.broker_name).table(),
            AdminMaintenanceHandlers(store, topics, clients).table(),
            BrokerConfigHandlers(self.runtime_config).table(),
        ]

    def register(self, registry: HandlerRegistry) -> None:
        """Register every part-2 code, skipping codes part 1 already serves, and route prepared sends through the
        transaction interceptor."""
        for table in self._tables:
            registry.register_all({code: h for code, h in table.items() if code not in registry})
        for code in (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2):
            if code in registry:
                registry.wrap(code, self.transaction_handlers.intercept)

    async def start(self) -> None:
        await self.transactions.start()

    async def stop(self) -> None:
        await self.transactions.stop()
