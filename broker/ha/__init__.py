"""Master/slave replication (RocketMQ 4.x HA): the HA byte protocol (``wire``), the master's side (``master``:
the HA listener, one connection per slave, SYNC_MASTER waits), the slave's side (``slave``: the HA client), the
plain state objects both keep (``state``), and the slave's metadata copy (``sync``: SlaveSynchronize).

Everything here sits beside the store and uses only its public replication API (``MessageStore.append_replicated``,
``read_replication_chunk``, ``refuse_puts``, ``set_replica_wait``).
"""
