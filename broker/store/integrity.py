"""IntegrityReport: what the store found damaged and what it did about it — quarantined records, repaired or
rebuilt files, damaged records skipped by reads. One object per open store; ``MessageStore.integrity`` exposes it
to the admin command (``checkStore``) and, later, to metrics. Counters only grow; ``repairs`` keeps the start-up
log lines (bounded)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final

_log = logging.getLogger("rocketq.store.integrity")

MAX_REPAIR_LINES: Final = 200


@dataclass(slots=True)
class IntegrityReport:
    quarantined_records: int = 0  # damaged commit-log regions copied to quarantine/ and skipped (this run)
    quarantined_bytes: int = 0
    truncated_tail_bytes: int = 0  # bytes of a torn tail cut at recovery
    repaired_files: int = 0  # segment / consume-queue / config files padded, cut or rebuilt
    repaired_units: int = 0  # consume-queue units rewritten or filled in
    rebuilt_queues: int = 0  # consume queues rebuilt from the commit log
    skipped_reads: int = 0  # damaged records (or bogus units) a read skipped instead of serving
    repairs: list[str] = field(default_factory=list)

    def repaired(self, what: str, *args: object, files: int = 0, units: int = 0) -> None:
        """Count a repair and log it once (warning level: an operator should know)."""
        line = what % args if args else what
        _log.warning("store repair: %s", line)
        self.repaired_files += files
        self.repaired_units += units
        if len(self.repairs) < MAX_REPAIR_LINES:
            self.repairs.append(line)

    def as_dict(self) -> dict[str, Any]:
        return {
            "quarantinedRecords": self.quarantined_records,
            "quarantinedBytes": self.quarantined_bytes,
            "truncatedTailBytes": self.truncated_tail_bytes,
            "repairedFiles": self.repaired_files,
            "repairedUnits": self.repaired_units,
            "rebuiltQueues": self.rebuilt_queues,
            "skippedReads": self.skipped_reads,
            "repairs": list(self.repairs),
        }
