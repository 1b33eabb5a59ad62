"""The RocketMQ 5 gRPC endpoint (``apache.rocketmq.v2``) inside the broker, like RocketMQ 5's proxy in local mode
(``mqbroker --enable-proxy``): ``server`` (lifecycle on the broker's loop), ``service`` (the RPC adapters over the
broker's services), ``channel`` (a 5.x client as a broker client channel), ``convert`` (v2 ↔ stored messages),
``pop_state`` / ``pop_store`` / ``pop_service`` (POP consumption: pure state, its file, its timing and IO), ``auth``
(the authorization header), ``pb`` (generated stubs). Needs the extra ``[grpc]``; ``broker.app`` imports it only when
enabled.
"""
