"""kill -9 durability cycles: a SYNC_FLUSH writer (tests/unit/store/_crash_child.py) is SIGKILLed mid-stream again
and again on the same store; after each kill the store is reopened and every acknowledged message of every cycle
so far must be there, byte for byte (same queue offset, commit-log offset and digest).

    python bench/kill9_cycles.py --cycles 30 [--acks 300] [--dir /tmp]

Prints one line per cycle and a summary ``acked: N lost: M``; exits 1 when anything acknowledged was lost.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from broker.store import GetMessageStatus, GetRequest, MessageStore, StoreConfig  # noqa: E402

CHILD = REPO / "tests" / "unit" / "store" / "_crash_child.py"
PRODUCERS = 4


def _cfg(root: str) -> StoreConfig:
    return StoreConfig(
        store_path_root_dir=root,
        mapped_file_size_commit_log=64 * 1024,
        mapped_file_size_consume_queue=100 * 20,
        flush_disk_type="SYNC_FLUSH",
        max_hash_slot_num=512,
        max_index_num=4096,
    )


def run_and_kill(root: str, acks: int) -> list[tuple[int, int, int, str]]:
    """(queue, queue offset, commit-log offset, digest) of every acknowledged put before the kill."""
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), root, str(PRODUCERS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    out: list[tuple[int, int, int, str]] = []
    assert proc.stdout is not None
    while len(out) < acks:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"writer exited early ({proc.wait()})")
        p, _seq, qoff, phys, dig = line.split()
        out.append((int(p), int(qoff), int(phys), dig.decode()))
    proc.send_signal(signal.SIGKILL)
    for line in proc.stdout.read().splitlines():
        parts = line.split()
        if len(parts) == 5 and len(parts[4]) == 64:
            out.append((int(parts[0]), int(parts[2]), int(parts[3]), parts[4].decode()))
    proc.wait()
    proc.stdout.close()
    return out


def lost(root: str, acked: list[tuple[int, int, int, str]]) -> int:
    store = MessageStore.open(_cfg(root))
    try:
        have: dict[tuple[int, int], tuple[int, str]] = {}
        for q in range(PRODUCERS):
            off = 0
            while True:
                r = store.get_message_sync(GetRequest("g", "CrashTopic", q, off, 32))
                if r.status is not GetMessageStatus.FOUND:
                    break
                for m in r.messages():
                    have[(q, m.queue_offset)] = (m.commit_log_offset, hashlib.sha256(m.body).hexdigest())
                off = r.next_begin_offset
        return sum(1 for q, qoff, phys, dig in acked if have.get((q, qoff)) != (phys, dig))
    finally:
        store.close_sync()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--acks", type=int, default=300)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="kill9-", dir=a.dir)
    acked: list[tuple[int, int, int, str]] = []
    missing = 0
    for c in range(a.cycles):
        t0 = time.perf_counter()
        acked += run_and_kill(root, a.acks)
        missing = lost(root, acked)
        print(
            f"cycle {c + 1}: acked so far {len(acked)}, lost {missing} ({time.perf_counter() - t0:.1f} s)", flush=True
        )
        if missing:
            break
    print(f"acked: {len(acked)} lost: {missing} store: {root}")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
