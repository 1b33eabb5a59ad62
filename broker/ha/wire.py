"""The HA byte protocol on ``haListenPort``: plain TCP, no remoting framing, big-endian, no handshake (RocketMQ 4.x
``HAService`` / ``HAConnection``), plus one extension of ours for a master that must catch up from a slave.

==========  ==========================================  =============================================================
direction   bytes                                       meaning
==========  ==========================================  =============================================================
slave →     ``int64 maxPhyOffset`` (``REPORT``)         the slave's commit-log end: the next byte it needs, and its
master                                                  ack of every byte before it. Sent at connect, after every
                                                        append, and every ``haSendHeartbeatInterval`` otherwise.
master →    ``int64 phyOffset | int32 bodySize`` +      ``bodySize`` raw commit-log bytes starting at ``phyOffset``
slave       body (``HEADER``)                           (≤ ``haTransferBatchSize``, never across a file; may split a
                                                        record). ``bodySize`` 0 is the heartbeat.
master →    ``HEADER`` with ``bodySize = -1``           *ours* (``PULL_FROM_SLAVE``): "my log ends at ``phyOffset``,
slave       (``PULL_FROM_SLAVE``)                       yours is longer: send me yours from there". Sent only by a
                                                        master that has taken no write since it started.
master →    ``HEADER`` with ``bodySize = -2``           *ours* (``DIVERGED``): "your log is longer than mine and I
slave       (``DIVERGED``)                              already take writes": the slave keeps its bytes, serves reads
                                                        and reports the state; the master closes the connection.
slave →     ``REPORT`` of ``-1`` (``REVERSE_MARK``)     *ours*: the answer to ``PULL_FROM_SLAVE``: from here on this
master                                                  connection carries ``HEADER`` + body frames slave → master,
                                                        from the offset asked, until the slave's end; then the
                                                        master closes it and the slave reconnects as usual.
slave →     ``REPORT`` of ``-2`` (``EPOCH_QUERY``) +     *ours*, controller mode only, first on a connection: "I am
master      ``int64 brokerId``                          replica ``brokerId``; show me your epochs".
master →    ``HEADER`` with ``bodySize = -3``           *ours*, the answer: ``phyOffset`` = the master's log end,
slave       (``EPOCH_TABLE``) + ``int32 n`` + ``n`` ×    then its epoch table (``broker.ha.epoch_file``). The slave
            ``(int32 epoch, int64 startOffset)``        cuts its log where the tables stop agreeing, then sends an
            (``EPOCH_ENTRY``)                           ordinary ``REPORT`` and replication goes on as above. A
                                                        master that is not (or no longer) the master closes instead.
==========  ==========================================  =============================================================

A J slave never sees the extensions: a master sends them only to a slave whose first report is beyond its own end,
which J's master answers by closing the connection.
"""

from __future__ import annotations

import struct
from typing import Final

REPORT: Final = struct.Struct(">q")
BROKER_ID: Final = struct.Struct(">q")
COUNT: Final = struct.Struct(">i")
EPOCH_ENTRY: Final = struct.Struct(">iq")
HEADER: Final = struct.Struct(">qi")
assert REPORT.size == 8 and HEADER.size == 12

PULL_FROM_SLAVE: Final = -1
DIVERGED: Final = -2
REVERSE_MARK: Final = -1
EPOCH_QUERY: Final = -2
EPOCH_TABLE: Final = -3
