"""StoreConfig: every knob of the message store, as a frozen dataclass (the store imports no pydantic).

The broker maps RocketMQ's ``broker.conf`` keys onto this (``broker/config.py``); defaults are RocketMQ 4.9's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

FlushDiskType = Literal["ASYNC_FLUSH", "SYNC_FLUSH"]


@dataclass(frozen=True, slots=True)
class StoreConfig:
    store_path_root_dir: str = field(default_factory=lambda: os.path.expanduser("~/store"))
    store_path_commit_log: str | None = None  # default <root>/commitlog
    mapped_file_size_commit_log: int = 1024 * 1024 * 1024
    mapped_file_size_consume_queue: int = 300_000 * 20
    flush_disk_type: FlushDiskType = "ASYNC_FLUSH"
    flush_interval_commit_log_ms: int = 500
    flush_interval_consume_queue_ms: int = 1000
    sync_flush_timeout_ms: int = 5000
    group_commit_inline: bool = False  # SYNC_FLUSH: fdatasync on the event loop, not the flush thread (flush.py)
    max_message_size: int = 4 * 1024 * 1024
    file_reserved_time_hours: float = 72
    delete_when: str = "04"
    disk_max_used_space_ratio: int = 75
    disk_space_warning_level_ratio: int = 90  # J 5.x: above it puts are refused (see put.py: ``reserve``)
    clean_file_forcibly_enable: bool = True  # J: over the disk ratio, delete the oldest files even if not expired
    clean_resource_interval_ms: int = 10_000
    delete_files_batch_max: int = 10
    message_index_enable: bool = True
    max_hash_slot_num: int = 500_000
    max_index_num: int = 2_000_000
    max_transfer_bytes_on_message_in_memory: int = 256 * 1024
    max_transfer_count_on_message_in_memory: int = 32
    check_crc_on_recover: bool = True
    # seal every new record with the whole-record CRC trailer (record_check); off only to measure its cost
    seal_records: bool = True
    store_host: tuple[str, int] = ("127.0.0.1", 10911)

    @property
    def commit_log_dir(self) -> str:
        return self.store_path_commit_log or os.path.join(self.store_path_root_dir, "commitlog")

    @property
    def consume_queue_dir(self) -> str:
        return os.path.join(self.store_path_root_dir, "consumequeue")

    @property
    def index_dir(self) -> str:
        return os.path.join(self.store_path_root_dir, "index")

    def __post_init__(self) -> None:
        if self.mapped_file_size_commit_log < 4096:
            raise ValueError("mapped_file_size_commit_log must be at least 4096 bytes")
        if self.mapped_file_size_consume_queue < 20 or self.mapped_file_size_consume_queue % 20:
            raise ValueError("mapped_file_size_consume_queue must be a positive multiple of 20")
        if self.flush_disk_type not in ("ASYNC_FLUSH", "SYNC_FLUSH"):
            raise ValueError(f"unknown flush_disk_type {self.flush_disk_type!r}")
