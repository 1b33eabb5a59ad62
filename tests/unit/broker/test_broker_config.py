"""broker.config: the key table, defaults, and one-line errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.config import ConfigError, format_config, load_config, parse_delay_levels


def test_defaults_work_on_loopback() -> None:
    cfg = load_config(None)
    assert cfg.identity.broker_name == "broker-a"
    assert cfg.identity.broker_ip1 == "127.0.0.1"
    assert cfg.network.listen_port == 10911
    assert cfg.features.auto_create_topic_enable is True
    assert cfg.features.default_topic_queue_nums == 8
    assert cfg.store.delay_levels_ms[0] == 1000 and len(cfg.store.delay_levels_ms) == 18
    assert cfg.store.commit_log_dir.endswith("store/commitlog")


def test_properties_file_and_aliases(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(
        "# sample\nbrokerClusterName = C1\nbrokerName=b1\nmapedFileSizeCommitLog=65536\n"
        "flushDiskType=SYNC_FLUSH\nmessageDelayLevel=1s 2s 1m 1h 1d\nsendMessageThreadPoolNums=4\n"
    )
    cfg = load_config(conf, {"listenPort": 0})
    assert cfg.identity.broker_cluster_name == "C1"
    assert cfg.store.mapped_file_size_commit_log == 65536
    assert cfg.store.flush_disk_type == "SYNC_FLUSH"
    assert cfg.store.delay_levels_ms == (1000, 2000, 60_000, 3_600_000, 86_400_000)
    assert "brokerName=b1" in format_config(cfg)


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"noSuchKey": "1"}, "noSuchKey"),
        ({"listenPort": "abc"}, "listenPort=abc"),
        ({"listenPort": "70000"}, "listenPort=70000"),
        ({"autoCreateTopicEnable": "yes"}, "autoCreateTopicEnable=yes"),
        ({"flushDiskType": "FAST"}, "flushDiskType=FAST"),
        ({"brokerId": "2"}, "brokerId=2"),
        ({"aclEnable": "true"}, "aclEnable=true"),
        ({"messageDelayLevel": "1s 2x"}, "messageDelayLevel"),
        ({"namesrvAddr": "nohost"}, "namesrvAddr"),
        ({"deleteWhen": "25"}, "deleteWhen"),
    ],
)
def test_bad_values_name_the_key(overrides: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, overrides)
    msg = str(info.value)
    assert needle in msg and "\n" not in msg


def test_bad_line_in_file_names_the_line(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("brokerName=b\nlistenPort=x\n")
    with pytest.raises(ConfigError, match="line 2: listenPort=x"):
        load_config(conf)


def test_important_subset() -> None:
    full = format_config(load_config(None)).splitlines()
    important = format_config(load_config(None), important_only=True).splitlines()
    assert set(important) < set(full)
    assert any(line.startswith("namesrvAddr=") for line in important)


def test_delay_levels() -> None:
    assert parse_delay_levels("1s 5m 2h") == (1000, 300_000, 7_200_000)
    with pytest.raises(ValueError):
        parse_delay_levels("")
