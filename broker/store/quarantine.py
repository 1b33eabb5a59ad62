"""Quarantine: damaged commit-log bytes are copied aside before the store skips (or cuts) them, so nothing that was
on disk is ever destroyed without a copy.

Files: ``quarantine/<20-digit commit-log offset>.bin`` under the store root, one per damaged region, holding the
region's raw bytes (at most ``MAX_COPY``; a region longer than that is a garbled tail or padding, and its length is
in the log line)::

    | bytes [offset, offset + min(length, MAX_COPY)) of the commit log, verbatim |

A region already quarantined by an earlier start (same offset) is not copied again.
"""

from __future__ import annotations

import os
from typing import Final

from broker.store.integrity import IntegrityReport

MAX_COPY: Final = 1 << 20


class Quarantine:
    __slots__ = ("_seen", "dir", "report")

    def __init__(self, root: str, report: IntegrityReport) -> None:
        self.dir = os.path.join(root, "quarantine")
        self.report = report
        self._seen: set[int] = set()  # offsets counted this run: recovery and a later read may both meet one record

    def path(self, offset: int) -> str:
        return os.path.join(self.dir, f"{offset:020d}.bin")

    def keep(self, offset: int, data: bytes | memoryview, length: int, reason: str, *, record: bool = True) -> None:
        """Copy a damaged region (``data`` is its first bytes, ``length`` its full size) and count it once per run:
        as a quarantined record, or (``record=False``) as a cut tail."""
        if offset in self._seen:
            return
        self._seen.add(offset)
        path = self.path(offset)
        known = os.path.exists(path)
        if not known:
            os.makedirs(self.dir, exist_ok=True)
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(bytes(data[:MAX_COPY]))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        if record:
            self.report.quarantined_records += 1
            self.report.quarantined_bytes += length
        else:
            self.report.truncated_tail_bytes += length
        self.report.repaired(
            "commit-log %s quarantined: offset=%d length=%d reason=%s copy=%s%s",
            "record" if record else "tail",
            offset,
            length,
            reason,
            path,
            " (already there)" if known else "",
        )

    def files(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.dir) if n.endswith(".bin"))
        except FileNotFoundError:
            return []
