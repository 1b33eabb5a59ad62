"""Checkpoint and abort marker: how the store knows whether the last shutdown was clean and where to re-scan.

``checkpoint`` file (big-endian, written atomically: tmp + fsync + rename)::

    | int64 physicMsgTimestamp | int64 logicsMsgTimestamp | int64 indexMsgTimestamp | int64 dispatchedOffset |

``dispatchedOffset`` (our addition) is the commit-log offset up to which consume queues and the index were flushed
when the checkpoint was written: recovery re-dispatches from there. ``abort`` exists while the store is open and is
removed by a clean close; finding it at start means the last run did not shut down cleanly.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Final

CHECKPOINT: Final = struct.Struct(">qqqq")
assert CHECKPOINT.size == 32


@dataclass(slots=True)
class Checkpoint:
    physic_msg_timestamp: int = 0
    logics_msg_timestamp: int = 0
    index_msg_timestamp: int = 0
    dispatched_offset: int = 0


def read_checkpoint(path: str) -> Checkpoint:
    try:
        with open(path, "rb") as f:
            data = f.read(CHECKPOINT.size)
    except FileNotFoundError:
        return Checkpoint()
    if len(data) < CHECKPOINT.size:
        return Checkpoint()
    return Checkpoint(*CHECKPOINT.unpack(data))


def write_checkpoint(path: str, cp: Checkpoint) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(
            CHECKPOINT.pack(
                cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp, cp.dispatched_offset
            )
        )
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def create_abort_marker(root: str) -> bool:
    """Create ``abort``; returns True when it was already there (the previous run did not close cleanly)."""
    path = os.path.join(root, "abort")
    existed = os.path.exists(path)
    with open(path, "wb") as f:
        f.flush()
        os.fsync(f.fileno())
    return existed


def remove_abort_marker(root: str) -> None:
    try:
        os.unlink(os.path.join(root, "abort"))
    except FileNotFoundError:
        pass
