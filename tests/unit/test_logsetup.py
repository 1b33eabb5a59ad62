"""Daemon log files: J's layout (main file + store.log + remoting.log), size-based rotation with a kept count, the
level key with per-logger overrides, human-readable lines by default and JSON on request; plus a real ``mqnamesrv``
process writing ``namesrv.log`` under ``logDir``."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from broker.__main__ import log_settings
from broker.config import ConfigError, load_config
from runtime import logsetup
from runtime.logsetup import LogSettings, parse_log_levels

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    yield
    logsetup.reset()


def _flush() -> None:
    for h in logging.getLogger().handlers:
        h.flush()


def test_files_split_like_j_and_read_as_text(tmp_path: Path) -> None:
    logsetup.configure(LogSettings(directory=str(tmp_path), main_file="broker.log"), stderr_json=True, cache=False)
    structlog.get_logger("rocketq.broker").info("broker line", topic="T1")
    logging.getLogger("rocketq.store.flush").warning("store line %s", 42)
    structlog.get_logger("rocketq.remoting").info("remoting line", peer="1.2.3.4:5")
    try:
        raise ValueError("boom")
    except ValueError:
        structlog.get_logger("rocketq.broker").exception("with traceback")
    _flush()
    main = (tmp_path / "broker.log").read_text()
    store = (tmp_path / "store.log").read_text()
    remoting = (tmp_path / "remoting.log").read_text()
    assert "broker line" in main and "topic=T1" in main and "[rocketq.broker]" in main
    assert "store line" not in main and "remoting line" not in main
    assert "store line 42" in store and "broker line" not in store
    assert "remoting line" in remoting and "peer=1.2.3.4:5" in remoting
    assert not main.lstrip().startswith("{")  # human-readable by default
    assert "Traceback (most recent call last)" in main and "ValueError: boom" in main


def test_rotation_at_the_configured_size_keeps_the_count(tmp_path: Path) -> None:
    settings = LogSettings(directory=str(tmp_path), main_file="namesrv.log", max_bytes=2_000, backup_count=2)
    logsetup.configure(settings, stderr_json=True, cache=False)
    log = structlog.get_logger("rocketq.namesrv")
    for i in range(200):
        log.info("filler line to roll the file", i=i)
    _flush()
    names = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("namesrv.log"))
    assert names == ["namesrv.log", "namesrv.log.1", "namesrv.log.2"]
    for name in names:
        assert (tmp_path / name).stat().st_size <= 2_000
    assert "i=199" in (tmp_path / "namesrv.log").read_text()


def test_level_key_with_per_logger_overrides(tmp_path: Path) -> None:
    spec = "WARN,rocketq.remoting=DEBUG"
    logsetup.configure(LogSettings(level=spec, directory=str(tmp_path)), stderr_json=True, cache=False)
    structlog.get_logger("rocketq.broker").info("hidden info")
    structlog.get_logger("rocketq.broker").warning("shown warning")
    structlog.get_logger("rocketq.remoting.server").debug("shown debug")
    logging.getLogger("rocketq.store").info("hidden store info")
    _flush()
    main, remoting = (tmp_path / "broker.log").read_text(), (tmp_path / "remoting.log").read_text()
    assert "shown warning" in main and "hidden info" not in main
    assert "shown debug" in remoting
    assert "hidden store info" not in (tmp_path / "store.log").read_text()
    assert parse_log_levels(spec) == (logging.WARNING, {"rocketq.remoting": logging.DEBUG})
    with pytest.raises(ValueError, match="LOUD"):
        parse_log_levels("LOUD")


def test_json_on_request(tmp_path: Path) -> None:
    logsetup.configure(LogSettings(directory=str(tmp_path), json=True), stderr_json=True, cache=False)
    structlog.get_logger("rocketq.broker").info("as json", n=3)
    _flush()
    (line,) = (tmp_path / "broker.log").read_text().splitlines()
    doc = json.loads(line)
    assert doc["event"] == "as json" and doc["n"] == 3 and doc["level"] == "info" and doc["logger"] == "rocketq.broker"


def test_broker_config_keys(tmp_path: Path) -> None:
    cfg = load_config(
        None,
        {"logDir": tmp_path, "logLevel": "DEBUG,rocketq.store=ERROR", "logFormat": "json", "logFileMaxSize": 4096},
    )
    s = log_settings(cfg)
    assert (s.directory, s.level, s.json, s.max_bytes, s.backup_count, s.main_file) == (
        str(tmp_path),
        "DEBUG,rocketq.store=ERROR",
        True,
        4096,
        10,
        "broker.log",
    )
    assert log_settings(load_config(None, {"logFileMaxSize": 0})).directory is None
    assert load_config(None).observability.log_dir == os.path.expanduser("~/logs/rocketmqlogs")
    with pytest.raises(ConfigError, match="logLevel"):
        load_config(None, {"logLevel": "NOISY"})
    with pytest.raises(ConfigError, match="metricsExporterType"):
        load_config(None, {"metricsExporterType": "OTLP_GRPC"})
    assert load_config(None, {"metricsExporterType": "2"}).observability.metrics_enabled


async def test_namesrv_process_writes_its_log_file(tmp_path: Path) -> None:
    conf = tmp_path / "namesrv.conf"
    logs = tmp_path / "logs"
    conf.write_text(
        f"listenPort=0\nlistenAddress=127.0.0.1\nkvConfigPath={tmp_path}/kv.json\nlogDir={logs}\nlogLevel=INFO\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "namesrv",
        "-c",
        str(conf),
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert b"boot success" in line
        text = (logs / "namesrv.log").read_text()
        assert "name server started" in text and not text.startswith("{")
        assert "listening" in (logs / "remoting.log").read_text()  # rocketq.remoting.server's line
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
