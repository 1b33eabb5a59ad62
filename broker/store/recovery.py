"""Recovery at open: find the true end of the commit log, keep every valid record, set damaged ones aside, and
bring consume queues and the index level with the log.

* The scan starts at the checkpoint's dispatched offset — after a clean stop and after a crash alike: consume
  queues, the index and the commit log are durable up to it. When that offset is not a record boundary (a damaged
  or foreign checkpoint) the scan starts at the beginning of its file; with no checkpoint, at the first file.
* Every record from there on is validated completely (``record_check.verify``: magic, sizes, body CRC, the
  whole-record CRC, UTF-8 text). A damaged record in the middle is copied to ``quarantine/`` (``quarantine.py``)
  and skipped; the scan resynchronises on the next valid record (``log_scan``). Only bytes after the last valid
  record of the log — a genuinely torn tail — are cut (and copied to quarantine first when they are not zeros).
* Consume-queue units pointing past the new end are dropped, and every valid record the consume queues do not hold
  yet is dispatched again. A queue offset held by a quarantined record gets a marker unit (``MARKER_PHYS``) that
  reads skip with a log line, so the queue stays dense and later records keep their offsets.

Returns the end offset and the offset from which reads may trust records without re-checking them (everything
before the scan start, and damaged regions, are checked again on read).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from broker.store.checkpoint import Checkpoint
from broker.store.commitlog import CommitLog
from broker.store.consume_queue import ConsumeQueue
from broker.store.cq_marks import Marks
from broker.store.cq_rebuild import BACKGROUND_BYTES
from broker.store.cq_repair import rebuild, rebuild_index, resume_offset, trim_tail
from broker.store.dispatcher import Dispatcher
from broker.store.index import IndexService
from broker.store.log_scan import check_at, scan
from broker.store.mapped_file import MappedFile
from broker.store.quarantine import Quarantine
from broker.store.sealed_ranges import SealedRanges
from protocol.record import RecordError

_log = logging.getLogger("rocketq.store.recovery")


def scan_start(
    commitlog: CommitLog,
    checkpoint: Checkpoint,
    queues: list[ConsumeQueue],
    *,
    check_crc: bool,
    seals: SealedRanges | None,
) -> int:
    """Where the scan starts: the checkpoint — or earlier, at the start of the file holding the first record that a
    consume queue's last unit points at and that is not valid (the log lost bytes the checkpoint vouched for)."""
    start = _checkpoint_start(commitlog, checkpoint, check_crc=check_crc, seals=seals)
    for cq in queues:
        u = cq.last_unit()
        if u is None or u[0] < 0 or u[0] >= start:
            continue
        mf = commitlog.queue.find(u[0])
        if mf is None:
            continue
        pos = u[0] - mf.start
        try:
            if check_at(mf, pos, check_crc=check_crc, seals=seals) == u[1]:
                continue
        except (RecordError, IndexError, ValueError):
            pass
        _log.warning(
            "last unit of consume queue %s-%d points at a damaged record: scanning from %d",
            cq.topic,
            cq.queue_id,
            mf.start,
        )
        start = min(start, mf.start)
    return start


def _checkpoint_start(
    commitlog: CommitLog, checkpoint: Checkpoint, *, check_crc: bool, seals: SealedRanges | None
) -> int:
    files = commitlog.queue.files
    cp = checkpoint.dispatched_offset
    mf = commitlog.queue.find(cp)
    if mf is None:
        if cp >= files[-1].start + commitlog.file_size:
            return files[-1].start  # a checkpoint beyond the log: trust nothing of the last file
        return files[0].start
    pos = cp - mf.start
    if pos == 0 or pos + 8 > mf.size:
        return cp
    try:
        check_at(mf, pos, check_crc=check_crc, seals=seals)
        return cp
    except (RecordError, IndexError, ValueError):
        pass
    # the end of the log (zeros) is a boundary too
    if bytes(mf.buf[pos : pos + 8]) == bytes(8):
        return cp
    _log.warning("checkpoint offset %d is not a record boundary: scanning from the start of its file", cp)
    return mf.start


def recover(
    commitlog: CommitLog,
    queues: Iterable[ConsumeQueue],
    index: IndexService | None,
    dispatcher: Dispatcher,
    checkpoint: Checkpoint,
    *,
    clean: bool,
    check_crc: bool,
    seals: SealedRanges | None,
    quarantine: Quarantine,
    damaged_queues: Iterable[ConsumeQueue] = (),
    index_from: int | None = None,
    marks: Marks | None = None,
    background: list[tuple[ConsumeQueue, int]] | None = None,
) -> tuple[int, int]:
    """Returns (commit-log end offset, trusted-from offset) after recovery. ``damaged_queues`` (files padded or
    cut at load) are rebuilt from the commit log, and so are queues that end short of their ``marks`` (the unit
    counts the last logics flush made durable, ``cq_marks.py``). With ``background``, a damaged queue whose rebuild
    would walk more than ``BACKGROUND_BYTES`` of the log is not rebuilt here: it is marked rebuilding and added as
    (queue, scan start) for ``cq_rebuild.BackgroundRebuild``."""
    marks = marks or {}
    report = quarantine.report
    queues = list(queues)
    damaged_queues = list(damaged_queues)
    for cq in queues:
        if cq.recover():
            report.repaired(
                "consume queue %s-%d had a gap in a full file: units after it dropped", cq.topic, cq.queue_id
            )
            damaged_queues.append(cq)
        elif cq.max_offset < marks.get((cq.topic, cq.queue_id), 0):
            # units zeroed at the very end of the last file: nothing after them shows the gap, the marks do
            report.repaired(
                "consume queue %s-%d ends at unit %d, but %d were durable: the units after it are rebuilt",
                cq.topic, cq.queue_id, cq.max_offset, marks[(cq.topic, cq.queue_id)],
            )  # fmt: skip
            damaged_queues.append(cq)
    files = commitlog.queue.files
    if not files:
        dispatcher.dispatched_offset = 0
        return 0, 0
    start = scan_start(commitlog, checkpoint, queues, check_crc=check_crc, seals=seals)
    inline = list({id(cq): cq for cq in damaged_queues}.values())
    if background is not None:
        for cq in list(inline):
            lo = resume_offset(commitlog, cq, start)
            if start - lo > BACKGROUND_BYTES:
                inline.remove(cq)
                cq.rebuild_from = lo
                cq.rebuilding = []
                background.append((cq, start))
                report.repaired(
                    "consume queue %s-%d is rebuilt in the background (%d bytes of the commit log to walk)",
                    cq.topic, cq.queue_id, start - lo,
                )  # fmt: skip
    rebuild(commitlog, inline, start, report)
    if index is not None and index_from is not None:
        rebuild_index(commitlog, index, index_from, start, report)
    for mf in files:  # every file before the scan start is whole
        if mf.start + mf.size <= start:
            mf.wrote = mf.size
            mf.flushed = mf.size
    damaged: list[tuple[int, int]] = []

    def on_damage(mf: MappedFile, pos: int, length: int, reason: str) -> None:
        at = mf.start + pos
        if _all_zero(mf, pos, pos + length):
            report.repaired("commit-log file %s holds only zeros from %d: skipped to the next file", mf.path, at)
            return
        quarantine.keep(at, mf.buf[pos : pos + length], length, reason)
        damaged.append((at, length))

    records: list[tuple[int, int]] = []
    end = scan(
        commitlog,
        start,
        on_damage,
        check_crc=check_crc or not clean,
        seals=seals,
        on_record=lambda off, n: records.append((off, n)),
    )
    cut = _cut_tail(commitlog, end, quarantine, clean=clean)
    for cq in queues:
        trim_tail(commitlog, cq, end, report, cut=cut)
        cq.checked_below = cq.max_offset  # units from here on are re-dispatched from verified records
    if index is not None:
        index.truncate_beyond(end)
    dispatcher.dispatched_offset = start

    def on_gap(cq: ConsumeQueue, phys: int) -> None:
        # units missing below a record: from the log where they exist (a consume queue shorter than the
        # checkpoint promised), else they are quarantined records and get markers
        if cq.rebuilding is None:  # a queue rebuilt in the background keeps later units aside instead
            rebuild(commitlog, [cq], phys, report, force=False)

    redone = dispatcher.redispatch(commitlog, records, on_gap=on_gap)
    dispatcher.dispatched_offset = end
    for mf in commitlog.queue.files:  # re-dispatch read the records again: give those pages back too
        if mf.start + mf.size > start:
            mf.release(max(0, start - mf.start), mf.size)
    trusted = max([start, *(at + n for at, n in damaged)])
    _log.info(
        "store recovered: clean=%s scan_from=%d end=%d records_scanned=%d redispatched=%d quarantined=%d",
        clean,
        start,
        end,
        len(records),
        redone,
        len(damaged),
    )
    return end, trusted


def _cut_tail(commitlog: CommitLog, end: int, quarantine: Quarantine, *, clean: bool) -> bool:
    """Cut whatever follows the end; True when something was there (a torn tail or later files)."""
    mf = commitlog.queue.find(end) if end < commitlog.queue.files[-1].start + commitlog.file_size else None
    dropped = 0
    if mf is not None:
        rel = end - mf.start
        dropped = _garbage_after(mf, rel)
        if dropped:
            what = "damaged tail after a clean stop" if clean else "torn tail"
            _log.warning("commit log %s truncated: file=%s offset=%d bytes_dropped=%d", what, mf.path, end, dropped)
            quarantine.keep(end, mf.buf[rel : rel + dropped], dropped, what, record=False)
    later = [f for f in commitlog.queue.files if f.start > end]
    for f in later:
        _log.warning("commit log file after the torn tail removed: file=%s", f.path)
    if dropped or later:
        commitlog.queue.truncate(end)
    return bool(dropped or later)


def _garbage_after(mf: MappedFile, rel: int, chunk: int = 1 << 20) -> int:
    """Bytes from ``rel`` up to the last non-zero byte of the file: the torn or garbled tail (zeros after it are
    just unused space). Only written ranges are read, in chunks, and their pages are given back."""
    last = rel
    for start, stop in mf.data_ranges(rel):
        pos = max(start, rel)
        while pos < stop:
            n = min(chunk, stop - pos)
            kept = len(bytes(mf.buf[pos : pos + n]).rstrip(b"\x00"))
            if kept:
                last = pos + kept
            pos += n
        mf.release(start, stop)
    return last - rel


def _all_zero(mf: MappedFile, start: int, stop: int, chunk: int = 1 << 20) -> bool:
    for s, e in mf.data_ranges(start):
        p = s
        while p < min(e, stop):
            n = min(chunk, min(e, stop) - p)
            if bytes(mf.buf[p : p + n]).count(0) != n:
                return False
            p += n
        mf.release(s, min(e, stop))
    return True
