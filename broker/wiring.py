"""The broker's handler wiring: one flat list that builds the request-serving services and registers every handler
module's table through ``HandlerRegistry`` (which refuses a code registered twice), then the middlewares around
them. ``BrokerApp`` calls ``wire`` once per start; nothing here opens files or sockets, and no business logic lives
here: each handler module gets only the collaborators it uses.

A send has no middleware around it (one coroutine per request): ``SendService`` (shared with the gRPC endpoint)
counts ``send_inflight`` itself and stores prepared messages as transaction half messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from broker.config import BrokerConfig
from broker.ha.service import HAService
from broker.handlers.admin_acl import AclAdminHandlers
from broker.handlers.admin_auth import AuthAdminHandlers
from broker.handlers.admin_broker import Applier, BrokerConfigHandlers, RuntimeConfig
from broker.handlers.admin_group import AdminGroupHandlers
from broker.handlers.admin_maintenance import AdminMaintenanceHandlers
from broker.handlers.admin_offsets import AdminOffsetsHandlers
from broker.handlers.admin_queue import AdminQueueHandlers
from broker.handlers.admin_stats import AdminStatsHandlers, ConsumeStatsBuilder
from broker.handlers.admin_topic import AdminTopicHandlers
from broker.handlers.client_manage import ClientManageHandlers
from broker.handlers.consumer_manage import ConsumerManageHandlers
from broker.handlers.lock import LockHandlers
from broker.handlers.offset_reset import OffsetResetHandlers
from broker.handlers.pull import PullHandlers
from broker.handlers.query import QueryHandlers
from broker.handlers.reply import ReplyHandlers
from broker.handlers.send import SendHandlers
from broker.handlers.send_back import SendBackHandlers
from broker.handlers.transaction import TransactionHandlers
from broker.services.broker_stats import BrokerStats
from broker.services.consume import ConsumeService
from broker.services.group_state import GroupStateTables
from broker.services.long_polling import LongPollingService
from broker.services.rebalance_locks import RebalanceLockManager
from broker.services.reply import ReplyService
from broker.services.schedule import ScheduleService
from broker.services.send import SendService
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.services.transactions import TransactionService
from broker.stamp import BrokerStamp
from broker.store.message_store import MessageStore
from protocol.codes import RequestCode
from protocol.remoting import Handler, HandlerRegistry
from runtime.acl.hook import AclWatcher


@dataclasses.dataclass(slots=True)
class Wiring:
    """What ``wire`` built that the app still talks to: the registry the server dispatches through, the transaction
    service (its check task, the gRPC endpoint), the send and consume services and the group-state tables (the gRPC
    endpoint), the runtime-config allow-list and the consume-stats builder."""

    registry: HandlerRegistry
    transactions: TransactionService
    sends: SendService
    consume: ConsumeService
    runtime_config: RuntimeConfig
    consume_stats: ConsumeStatsBuilder
    group_tables: GroupStateTables


def wire(
    config: BrokerConfig,
    group_tables: GroupStateTables,
    polling: LongPollingService,
    schedule: ScheduleService,
    stats: BrokerStats,
    ha: HAService,
    acl: AclWatcher | None,
    *,
    on_config: Callable[[BrokerConfig], None],
    broker_addr: Callable[[], str],
) -> Wiring:
    """Build the request-serving services and register every handler; a code claimed twice raises ``ValueError``."""
    ident, feat = config.identity, config.features
    is_slave = ident.broker_role == "SLAVE"
    store, topics, groups, offsets, clients = group_tables
    transactions = TransactionService(
        group_tables,
        check_interval_ms=feat.transaction_check_interval,
        timeout_ms=feat.transaction_time_out,
        check_max=feat.transaction_check_max,
    )
    transactions.on_end = stats.on_tx_end
    consume_stats = ConsumeStatsBuilder(group_tables, broker_name=ident.broker_name)

    stamp = BrokerStamp(ident.broker_cluster_name, ident.region_id, ident.trace_on)
    sends = SendService(
        store,
        topics,
        schedule,
        transactions,
        broker_ip=ident.broker_ip1,
        broker_permission=ident.broker_permission,
        max_message_size=config.store.max_message_size,
        stats=stats,
        stamp=stamp,
        reject_transactions=feat.reject_transaction_message,
    )
    send = SendHandlers(
        sends,
        region_id=ident.region_id,
        trace_on=ident.trace_on,
        max_queue_wait_ms=feat.wait_time_mills_in_send_queue,
    )
    reply = ReplyHandlers(
        ReplyService(clients, broker_addr),
        store,
        send.checked_topic,
        region_id=ident.region_id,
        trace_on=ident.trace_on,
        store_reply=feat.store_reply_message_enable,
        stamp=BrokerStamp(None, ident.region_id, ident.trace_on),
        stats=stats,
    )
    transaction = TransactionHandlers(transactions, is_slave=is_slave)
    consume = ConsumeService(
        topics,
        groups,
        broker_ip=ident.broker_ip1,
        broker_permission=ident.broker_permission,
        clients=clients,
        property_filter=config.features.enable_property_filter,
    )
    pull = PullHandlers(
        store,
        consume,
        groups,
        offsets,
        polling,
        long_polling_enable=feat.long_polling_enable,
        short_polling_ms=feat.short_polling_time_mills,
        max_transfer_bytes=config.store.max_transfer_bytes_on_message_in_memory,
        is_slave=is_slave,
        stats=stats,
        slave_read_enable=config.ha.slave_read_enable,
        access_message_in_memory_max_ratio=config.ha.access_message_in_memory_max_ratio,
    )
    send_back = SendBackHandlers(
        store,
        topics,
        groups,
        schedule,
        broker_ip=ident.broker_ip1,
        broker_permission=ident.broker_permission,
        stats=stats,
    )
    runtime_config = RuntimeConfig(
        config,
        _runtime_appliers(config, store, topics, groups, transactions, ha, sends, (sends, consume, send_back), on_config),
    )  # fmt: skip
    tables: list[dict[int, Handler]] = [
        send.table(),
        reply.table(),
        transaction.table(),
        pull.table(),
        ConsumerManageHandlers(offsets, store).table(),
        ClientManageHandlers(
            clients, groups, topics, enable_property_filter=config.features.enable_property_filter
        ).table(),
        send_back.table(),
        LockHandlers(RebalanceLockManager()).table(),
        QueryHandlers(store).table(),
        OffsetResetHandlers(group_tables, polling.release_group, broker_name=ident.broker_name).table(),
        AdminTopicHandlers(topics, offsets, store, cluster_name=ident.broker_cluster_name).table(),
        AdminGroupHandlers(groups, offsets).table(),
        AdminStatsHandlers(group_tables, consume_stats, broker_name=ident.broker_name, stats=stats).table(),
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
        BrokerConfigHandlers(runtime_config).table(),
    ]
    if acl is not None:
        tables.append(
            AclAdminHandlers(
                acl, broker_name=ident.broker_name, cluster_name=ident.broker_cluster_name, broker_addr=broker_addr
            ).table()
        )
        tables.append(AuthAdminHandlers(acl).table())
    registry = HandlerRegistry()
    for table in tables:
        registry.register_all(table)
    ha.register(registry)
    registry.wrap(RequestCode.PULL_MESSAGE, stats.count_pulls)
    registry.wrap(RequestCode.UPDATE_AND_CREATE_TOPIC, stats.time_creates("topic"))
    registry.wrap(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, stats.time_creates("group"))
    return Wiring(registry, transactions, sends, consume, runtime_config, consume_stats, group_tables)


def _runtime_appliers(
    config: BrokerConfig,
    store: MessageStore,
    topics: TopicConfigTable,
    groups: SubscriptionGroupTable,
    transactions: TransactionService,
    ha: HAService,
    sends: SendService,
    gated: tuple[SendService, ConsumeService, SendBackHandlers],
    on_config: Callable[[BrokerConfig], None],
) -> dict[str, Applier]:
    """UPDATE_BROKER_CONFIG's allow-list: each key a running broker may change, and what applies it (then
    ``on_config`` publishes the new config)."""

    def store_knobs(c: BrokerConfig) -> None:
        store.config = dataclasses.replace(
            store.config,
            file_reserved_time_hours=c.store.file_reserved_time,
            delete_when=c.store.delete_when,
            disk_max_used_space_ratio=c.store.disk_max_used_space_ratio,
        )

    def max_message_size(c: BrokerConfig) -> None:
        """J reads ``maxMessageSize`` on every send: the send checks and the store's appender take it at once."""
        sends.max_message_size = c.store.max_message_size
        store.config = dataclasses.replace(store.config, max_message_size=c.store.max_message_size)

    def tx_knobs(c: BrokerConfig) -> None:
        transactions.timeout_ms = c.features.transaction_time_out
        transactions.check_max = c.features.transaction_check_max
        transactions.check_interval_ms = c.features.transaction_check_interval

    def broker_permission(c: BrokerConfig) -> None:
        """J reads ``brokerPermission`` on every send and pull (the name server hears of it through ``on_config``:
        the app re-registers, as J's updateBrokerConfig does)."""
        for handlers in gated:
            handlers.set_broker_permission(c.identity.broker_permission)

    def then_publish(fn: Callable[[BrokerConfig], None]) -> Applier:
        def apply(c: BrokerConfig) -> None:
            fn(c)
            on_config(c)

        return apply

    return {
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
        "haMasterForceWritable": then_publish(lambda c: ha.force_writable(c.ha.ha_master_force_writable)),
        "maxMessageSize": then_publish(max_message_size),
        "brokerPermission": then_publish(broker_permission),
    }
