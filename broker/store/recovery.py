"""Recovery at open: find the true end of the commit log, cut a torn tail, and bring consume queues and the index
level with it.

* Clean shutdown (no abort marker): trust the checkpoint; re-scan only from the dispatched offset it recorded (at
  most the last files) to find the end, validating records without the CRC check being skipped.
* Unclean shutdown (abort marker present): scan from the start of the file holding the checkpoint's dispatched
  offset (consume queues and index are durable up to it), validating magic, size and body CRC of every record.

Either way the scan stops at the first invalid record: everything from there on is a torn tail. It is logged (file,
offset, bytes dropped) and zeroed, later files are removed, consume-queue units and index files that point past the
new end are dropped, and every valid record beyond what the consume queues hold is dispatched again. A valid record
is never deleted or rewritten.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from broker.store.checkpoint import Checkpoint
from broker.store.commitlog import CommitLog
from broker.store.consume_queue import ConsumeQueue
from broker.store.dispatcher import Dispatcher
from broker.store.index import IndexService

_log = logging.getLogger("rocketq.store.recovery")


def recover(
    commitlog: CommitLog,
    queues: Iterable[ConsumeQueue],
    index: IndexService | None,
    dispatcher: Dispatcher,
    checkpoint: Checkpoint,
    *,
    clean: bool,
    check_crc: bool,
) -> int:
    """Returns the commit-log end offset after recovery."""
    queues = list(queues)
    for cq in queues:
        cq.recover()
    files = commitlog.queue.files
    if not files:
        dispatcher.dispatched_offset = 0
        return 0
    start = min(max(checkpoint.dispatched_offset, commitlog.min_offset), files[-1].start + commitlog.file_size)
    start_file = commitlog.queue.find(start) or files[-1]
    if start_file.start > start:
        start_file = files[0]
    scan_from = start_file.start
    # every file before the scan start is whole (its records were dispatched and flushed before the checkpoint)
    for mf in files:
        if mf.start < scan_from:
            mf.wrote = mf.size
            mf.flushed = mf.size
    end, records = commitlog.scan_valid(scan_from, check_crc=check_crc or not clean)
    _cut_tail(commitlog, end)
    for cq in queues:
        cq.truncate_beyond(end)
    if index is not None:
        index.truncate_beyond(end)
    # re-dispatch what the consume queues may not hold; cq.put skips units already present
    dispatcher.dispatched_offset = scan_from
    redone = dispatcher.redispatch(commitlog, records)
    dispatcher.dispatched_offset = end
    _log.info(
        "store recovered: clean=%s scan_from=%d end=%d records_scanned=%d redispatched=%d",
        clean,
        scan_from,
        end,
        len(records),
        redone,
    )
    return end


def _cut_tail(commitlog: CommitLog, end: int) -> None:
    mf = commitlog.queue.find(end) if end < commitlog.queue.files[-1].start + commitlog.file_size else None
    dropped = 0
    if mf is not None:
        dropped = _garbage_after(mf.buf, end - mf.start)
        if dropped:
            _log.warning("commit log torn tail truncated: file=%s offset=%d bytes_dropped=%d", mf.path, end, dropped)
    later = [f for f in commitlog.queue.files if f.start > end]
    for f in later:
        _log.warning("commit log file after the torn tail removed: file=%s", f.path)
    if dropped or later:
        commitlog.queue.truncate(end)


def _garbage_after(buf: memoryview, rel: int, chunk: int = 1 << 20) -> int:
    """Bytes from ``rel`` up to the last non-zero byte of the file: the torn or garbled tail (zeros after it are
    just unused space). Read in chunks, so a 1 GiB segment is never copied at once."""
    last = rel
    pos = rel
    size = len(buf)
    while pos < size:
        n = min(chunk, size - pos)
        kept = len(bytes(buf[pos : pos + n]).rstrip(b"\x00"))
        if kept:
            last = pos + kept
        pos += n
    return last - rel
