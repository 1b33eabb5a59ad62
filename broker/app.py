"""BrokerApp: the broker's composition root. Opens the store, builds the tables and services, has ``broker.wiring``
register every handler, and owns the start/stop order. No business logic lives here.

Start: load topics/groups/offsets → open + start the store → bind the server → start the services (client expiry,
offset persistence, delay delivery) → register with the name servers.
Stop (uvicorn's shape, flush the store last): stop accepting → stop delay delivery → release held pulls (each is
answered PULL_NOT_FOUND) → unregister from the name servers → let in-flight requests finish (``grace``) and close
connections → persist offsets, topics, groups and delay offsets (after the server stops, so the last in-flight
offset updates are included) → close the store.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import ssl
from typing import TYPE_CHECKING

import structlog

from broker import topics as T
from broker.config import BrokerConfig
from broker.ha.auth import build_security
from broker.ha.service import HAService
from broker.metrics.collector import BrokerSources
from broker.metrics.exporter import BrokerMetrics, const_labels
from broker.metrics.replication import ReplicationCollector
from broker.metrics.timer import TimerCollector
from broker.services.access import record_topic
from broker.services.broker_stats import BrokerStats
from broker.services.client_registry import ClientRegistry
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.group_state import GroupStateTables
from broker.services.long_polling import LongPollingService
from broker.services.namesrv_registrar import NamesrvRegistrar
from broker.services.schedule import ScheduleService
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.timer import TIMER_TOPIC, TimerService, TimerSettings
from broker.services.topic_config import TopicConfigTable
from broker.services.transactions import TransactionService
from broker.store.config import StoreConfig
from broker.store.errors import StoreError
from broker.store.message_store import MessageStore
from broker.wiring import Wiring, wire
from protocol.acl.signature import SessionCredentials
from protocol.remoting import HandlerRegistry, RemotingClient, RemotingServer
from protocol.remoting.tls import TlsConfigError, client_context, server_context
from runtime.acl.hook import AclWatcher
from runtime.acl.rules import AclError, AclRules
from runtime.daemon import DaemonApp
from runtime.host import resolve_ip

if TYPE_CHECKING:
    from broker.proxy.server import ProxyServer

_log = structlog.get_logger("rocketq.broker")


class BrokerStartError(RuntimeError):
    """The broker cannot start (store unusable, …); the message is one line for the operator."""


def store_config(cfg: BrokerConfig, port: int | None = None) -> StoreConfig:
    """The store's knobs from the broker config; ``store_host`` is brokerIP1 and the bound port."""
    s = cfg.store
    return StoreConfig(
        store_path_root_dir=s.root_dir,
        store_path_commit_log=s.commit_log_dir,
        mapped_file_size_commit_log=s.mapped_file_size_commit_log,
        mapped_file_size_consume_queue=s.mapped_file_size_consume_queue,
        flush_disk_type=s.flush_disk_type,
        flush_interval_commit_log_ms=s.flush_interval_commit_log,
        flush_interval_consume_queue_ms=s.flush_interval_consume_queue,
        sync_flush_timeout_ms=s.sync_flush_timeout,
        group_commit_inline=s.group_commit_inline,
        max_message_size=s.max_message_size,
        file_reserved_time_hours=s.file_reserved_time,
        delete_when=s.delete_when,
        disk_max_used_space_ratio=s.disk_max_used_space_ratio,
        disk_space_warning_level_ratio=s.disk_space_warning_level_ratio,
        clean_file_forcibly_enable=s.clean_file_forcibly_enable,
        message_index_enable=s.message_index_enable,
        max_transfer_bytes_on_message_in_memory=s.max_transfer_bytes_on_message_in_memory,
        max_transfer_count_on_message_in_memory=s.max_transfer_count_on_message_in_memory,
        check_crc_on_recover=s.check_crc_on_recover,
        # the record codec packs IP addresses only: a host name in brokerIP1 is resolved here, once
        store_host=(resolve_ip(cfg.identity.broker_ip1), cfg.network.listen_port if port is None else port),
    )


class BrokerApp(DaemonApp):
    """One broker. ``async with BrokerApp(cfg) as broker:`` or ``await start()`` / ``await stop()``."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        cfg = config
        config_dir = cfg.store.config_dir
        self.topics = TopicConfigTable(config_dir, cfg.identity, cfg.features)
        self.groups = SubscriptionGroupTable(config_dir, auto_create=cfg.features.auto_create_subscription_group)
        self.offsets = ConsumerOffsetTable(config_dir, cfg.features.flush_consumer_offset_interval)
        self.clients = ClientRegistry(cfg.network.channel_expired_timeout, self._notify_enabled)
        self.polling = LongPollingService()
        self.stats = BrokerStats()
        self.metrics: BrokerMetrics | None = None
        self._server: RemotingServer | None = None
        self._fast: RemotingServer | None = None  # J's fast (VIP) server: the same handlers on listenPort - 2
        self._client: RemotingClient | None = None
        self._port: int | None = None
        self.store: MessageStore | None = None
        self.schedule: ScheduleService | None = None
        self.registrar: NamesrvRegistrar | None = None
        self.wiring: Wiring | None = None
        self.ha: HAService | None = None
        self.acl: AclWatcher | None = None
        self.proxy: ProxyServer | None = None  # the RocketMQ 5 gRPC endpoint (enableProxy / --enable-proxy)

    def _set_config(self, config: BrokerConfig) -> None:
        perm = config.identity.broker_permission
        changed = perm != self.config.identity.broker_permission
        self.config = config
        # J's updateBrokerConfig: a new data version, registered at once (both front ends share the send service,
        # which the runtime-config applier has already told)
        if changed and self.registrar is not None:
            self.registrar.set_permission(perm)

    def _group_alive(self, group: str) -> bool:
        return (
            self.groups.get(group) is not None
            or self.clients.consumer_group(group) is not None
            or bool(self.offsets.topics_of_group(group))
        )

    def _readiness(self) -> tuple[bool, str]:
        """/readyz: the store is open and at least one name server took our registration."""
        if self.store is None or self._server is None:
            return False, "store not open"
        if self.registrar is None or self.registrar.registrations == 0:
            return False, "not registered with any name server yet"
        return True, ""

    def _notify_enabled(self, group: str) -> bool:
        g = self.groups.get(group)
        return g.notify_consumer_ids_changed_enable if g is not None else True

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("broker not started")
        return self._port

    @property
    def fast_port(self) -> int | None:
        """The port of the fast (VIP) server, None when it is not open."""
        return self._fast.port if self._fast is not None else None

    @property
    def server(self) -> RemotingServer | None:
        """The listening server (its ``stats``, ``connection_count``, ``pending_bytes``); None when stopped."""
        return self._server

    def _acl_rules(self) -> AclRules:
        assert self.acl is not None
        return self.acl.hook.rules

    @property
    def addr(self) -> str:
        """``brokerIP1:port``, the address this broker registers and clients dial."""
        return f"{self.config.identity.broker_ip1}:{self.port}"

    async def start(self) -> None:
        """Open the store, wire the handlers, bind, start the services, then register with the name servers."""
        if self._server is not None:
            raise RuntimeError("broker already started")
        self._open_acl()
        server_ssl, client_ssl = self._tls_contexts()
        store, schedule = await self._open_store()
        ha = self._build_ha(store, schedule, server_ssl, client_ssl)
        self.metrics = self._build_metrics(ha)
        self.wiring = wire(
            self.config, GroupStateTables(store, self.topics, self.groups, self.offsets, self.clients), self.polling,
            schedule, self.stats, ha, self.acl, on_config=self._set_config, broker_addr=lambda: self.addr,
        )  # fmt: skip
        ha.before_serving()
        store.consumed_offset = self.offsets.slowest  # forced cleans count what no group had consumed yet
        if self.acl is not None:  # the rule table's record resources (view by id, send back, end transaction)
            self.acl.hook.record_topic = record_topic(store)
        await self._bind(self.wiring.registry, server_ssl, store)
        await self._start_services(store, schedule, self.wiring.transactions)
        await self._start_ha_listener(ha)
        if self.config.proxy.enable_proxy:
            await self._start_proxy(store, self.wiring)
        await self._register(ha)
        await ha.start()
        ident = self.config.identity
        _log.info(
            "broker started",
            addr=self.addr,
            name=ident.broker_name,
            cluster=ident.broker_cluster_name,
            namesrv=self.config.namesrv.namesrv_addr,
        )

    def _open_acl(self) -> None:
        cfg = self.config
        if cfg.features.acl_enable:
            try:
                self.acl = AclWatcher(cfg.identity.rocketmq_home, interval_s=cfg.security.acl_reload_interval / 1000)
            except AclError as exc:
                raise BrokerStartError(f"ACL files under {cfg.identity.rocketmq_home}/conf: {exc}") from None

    def _tls_contexts(self) -> tuple[ssl.SSLContext | None, ssl.SSLContext | None]:
        """The server's and the outbound client's TLS contexts (None where TLS is off)."""
        sec = self.config.security
        try:
            server_ssl = (
                server_context(
                    sec.tls_server_cert_path,
                    sec.tls_server_key_path,
                    key_password=sec.tls_server_key_password,
                    trust_cert_path=sec.tls_server_trust_cert_path,
                    need_client_auth=sec.tls_server_need_client_auth,
                )
                if sec.tls_server_mode != "disabled"
                else None
            )
            client_ssl = (
                client_context(
                    trust_cert_path=sec.tls_client_trust_cert_path if sec.tls_client_auth_server else "",
                    cert_path=sec.tls_client_cert_path,
                    key_path=sec.tls_client_key_path,
                    key_password=sec.tls_client_key_password,
                )
                if sec.tls_enable
                else None
            )
        except TlsConfigError as exc:
            raise BrokerStartError(str(exc)) from None
        return server_ssl, client_ssl

    async def _open_store(self) -> tuple[MessageStore, ScheduleService]:
        """Load topics, groups and offsets, open the store (not started yet) and load the delay offsets."""
        cfg = self.config
        try:
            self.topics.load()
            self.groups.load()
            self.offsets.load()
            store = await asyncio.to_thread(MessageStore.open, store_config(cfg))
        except (OSError, StoreError, ValueError) as exc:
            raise BrokerStartError(f"cannot open the store under {cfg.store.root_dir}: {exc}") from None
        self.store = store
        st = cfg.store
        if st.timer_wheel_enable and st.timer_max_delay_sec > st.file_reserved_time * 3600:
            _log.warning(  # a pending timer's record lives in the commit log, which retention deletes
                "timerMaxDelaySec is longer than fileReservedTime: a timer message may expire before its time",
                timer_max_delay_sec=st.timer_max_delay_sec,
                file_reserved_time_hours=st.file_reserved_time,
            )
        timer = TimerService(
            store,
            TimerSettings(st.timer_wheel_enable, st.timer_precision_ms, st.timer_max_delay_sec, st.root_dir),
        )
        try:
            await asyncio.to_thread(timer.open)
        except (OSError, ValueError) as exc:
            await asyncio.to_thread(store.close_sync)
            raise BrokerStartError(f"cannot open the timer wheel under {st.root_dir}: {exc}") from None
        schedule = ScheduleService(
            store, st.config_dir, st.delay_levels_ms, cfg.features.flush_delay_offset_interval, timer
        )
        schedule.load()
        self.schedule = schedule
        return store, schedule

    def _build_ha(
        self,
        store: MessageStore,
        schedule: ScheduleService,
        server_ssl: ssl.SSLContext | None,
        client_ssl: ssl.SSLContext | None,
    ) -> HAService:
        """The outbound remoting client (signed with the inner ACL key) and the HA service that shares it; the HA
        port authenticates slaves and uses TLS as ``broker.ha.auth.build_security`` says."""
        sec = self.config.security
        creds = SessionCredentials(sec.inner_access_key, sec.inner_secret_key) if sec.inner_access_key else None
        security = build_security(
            sec.ha_auth_secret,
            (sec.inner_access_key, sec.inner_secret_key) if sec.inner_access_key else None,
            self._acl_rules if self.acl is not None else None,
            server_ssl,
            client_ssl,
        )
        self._client = RemotingClient(rpc_hook=creds.sign if creds is not None else None, ssl_context=client_ssl)
        self.ha = HAService(
            self.config,
            store,
            self._client,
            self.topics,
            self.offsets,
            schedule,
            self.groups,
            lambda: self.addr,
            lambda: self.registrar.trigger() if self.registrar is not None else None,
            security,
        )
        return self.ha

    def _build_metrics(self, ha: HAService) -> BrokerMetrics | None:
        cfg = self.config
        if not cfg.observability.metrics_enabled:
            return None
        sources = BrokerSources(
            self.stats, self.topics, self.groups, self.offsets, self.clients, self.polling, lambda: self.store
        )
        metrics = BrokerMetrics(cfg, sources, self._readiness)
        metrics.add_collector(ReplicationCollector(const_labels(cfg), ha))
        if self.schedule is not None and self.schedule.timer is not None:
            metrics.add_collector(TimerCollector(const_labels(cfg), self.schedule.timer))
        return metrics

    async def _bind(self, registry: HandlerRegistry, server_ssl: ssl.SSLContext | None, store: MessageStore) -> None:
        """Listen for requests and serve metrics; on failure the store is closed again."""
        cfg = self.config
        sec = cfg.security

        def listener(port: int, name: str) -> RemotingServer:
            return RemotingServer(
                registry,
                cfg.network.bind_address,
                port,
                name=name,
                idle_timeout_s=cfg.network.server_channel_max_idle_time_seconds,
                observer=self.metrics.observe if self.metrics is not None else None,
                request_hook=self.acl.hook if self.acl is not None else None,
                max_connections=sec.server_max_connections,
                max_pending_bytes=sec.server_max_pending_frame_bytes,
                tls_mode=sec.tls_server_mode,
                ssl_context=server_ssl,
            )

        server = listener(cfg.network.listen_port, "broker")
        try:
            await server.start()
        except OSError:
            await asyncio.to_thread(store.close_sync)
            self.store = None
            raise
        fast_port = cfg.fast_listen_port
        if fast_port is not None:
            fast = listener(fast_port, "broker-fast")
            try:
                await fast.start()
            except OSError as exc:
                await server.stop(0)
                await asyncio.to_thread(store.close_sync)
                self.store = None
                raise BrokerStartError(f"cannot listen on fastListenPort {fast_port}: {exc.strerror or exc}") from None
            self._fast = fast
        if self.metrics is not None:
            try:
                await self.metrics.start()
            except OSError as exc:
                await server.stop(0)
                if self._fast is not None:
                    await self._fast.stop(0)
                    self._fast = None
                await asyncio.to_thread(store.close_sync)
                self.store = None
                obs = cfg.observability
                raise BrokerStartError(
                    f"cannot listen on metricsPromExporterPort {obs.metrics_prom_exporter_port}: {exc.strerror or exc}"
                ) from None
        self._server, self._port = server, server.port

    async def _start_services(
        self, store: MessageStore, schedule: ScheduleService, transactions: TransactionService
    ) -> None:
        """Start the store and the background services; a slave re-delivers no delayed message and checks no
        transaction (J)."""
        # With listenPort=0 the port is known only now; msgIds and stored STOREHOST must carry the real one.
        # Nothing has been put yet: the store only starts below, and no request has been read in between.
        store.config = dataclasses.replace(
            store.config, store_host=(resolve_ip(self.config.identity.broker_ip1), self.port)
        )
        await store.start()
        store.add_arrival_listener(self.polling.notify_arrival, self.polling.held_on)
        # the schedule's and the timer's listeners hear their own topics only: no call per message of another
        store.add_arrival_listener(schedule.on_arrival, topic=T.SCHEDULE_TOPIC)
        if schedule.timer is not None:
            store.add_arrival_listener(schedule.timer.on_arrival, topic=TIMER_TOPIC)
        if self.acl is not None:
            self.acl.start()
        self.clients.start()
        self.offsets.start()
        if self.config.identity.broker_role != "SLAVE":
            schedule.start()
            if schedule.timer is not None:
                schedule.timer.start()
            await transactions.start()
        self.stats.start(self.topics.__contains__, self._group_alive)

    async def _start_ha_listener(self, ha: HAService) -> None:
        try:
            await ha.start_listener()
        except OSError as exc:
            await self.stop(grace=0)
            reason = "address already in use" if exc.errno == errno.EADDRINUSE else str(exc)
            raise BrokerStartError(f"cannot listen on HA port {self.config.ha_listen_port}: {reason}") from None

    async def _register(self, ha: HAService) -> None:
        """Register with the name servers now and every registerNameServerPeriod, and on each topic change."""
        assert self._client is not None
        cfg, ident = self.config, self.config.identity
        registrar = NamesrvRegistrar(
            self._client,
            cfg.namesrv.addrs,
            self.topics,
            cluster_name=ident.broker_cluster_name,
            broker_name=ident.broker_name,
            broker_id=ident.broker_id,
            broker_permission=ident.broker_permission,
            period_ms=cfg.namesrv.register_name_server_period,
            timeout_ms=cfg.namesrv.register_broker_timeout_mills,
        )
        self.registrar = registrar
        self.topics.add_listener(registrar.trigger)
        self.topics.set_registration(registrar.registered)
        registrar.on_reply = ha.on_register_reply
        if ha.controller_mode:  # J: no registration until the controller gives a role (broker.ha.replicas)
            ha.register_as = lambda bid: registrar.register_as(bid, self.addr, ha.ha_addr())
            if ha.replicas is not None:
                registrar.stale_master = ha.replicas.lease_lapsed
            return
        await registrar.start(self.addr, ha.ha_addr())

    async def _start_proxy(self, store: MessageStore, wiring: Wiring) -> None:
        """The RocketMQ 5 gRPC endpoint (``broker.proxy``); on failure the broker stops again and does not start."""
        cfg = self.config
        where = f"{cfg.network.bind_address}:{cfg.proxy.grpc_server_port}"
        try:
            from broker.proxy.server import ProxyServer  # grpcio is the optional extra [grpc]
        except ImportError as exc:
            await self.stop()
            raise BrokerStartError(f"enableProxy needs the extra [grpc] (pip install 'rocketq[grpc]'): {exc}") from None
        proxy = ProxyServer(
            cfg, wiring,
            self._acl_rules if self.acl is not None else None,  # the remoting hook's rules: reloads apply too
            self.stats,  # one set of traffic counters for both front ends
        )  # fmt: skip
        try:
            await proxy.start()
        except OSError as exc:
            await self.stop()
            raise BrokerStartError(f"cannot start the gRPC endpoint on {where}: {exc}") from None
        self.proxy = proxy
        wiring.consume_stats.pull_offset = proxy.pop.state.offset

    async def stop(self, grace: float = 5.0) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.stop_accepting()
        fast, self._fast = self._fast, None
        if fast is not None:
            fast.stop_accepting()
        if self.proxy is not None:
            await self.proxy.stop()
        if self.schedule is not None:
            await self.schedule.stop()
            if self.schedule.timer is not None:
                await self.schedule.timer.stop()
        if self.wiring is not None:
            await self.wiring.transactions.stop()
        if self.ha is not None:
            await self.ha.stop()
        self.polling.release_all()
        if self.registrar is not None:
            await self.registrar.stop()
        await server.stop(grace)
        if fast is not None:
            await fast.stop(grace)
        await self.stats.stop()
        if self.metrics is not None:
            await self.metrics.stop()
        if self.acl is not None:
            await self.acl.stop()
        await self.clients.stop()
        await self.offsets.stop()
        await self.topics.flush()
        await self.groups.flush()
        if self.schedule is not None:
            await self.schedule.flush()
        if self._client is not None:
            await self._client.close()
        store, self.store = self.store, None
        if store is not None:
            await store.close()
        _log.info("broker stopped", name=self.config.identity.broker_name)
