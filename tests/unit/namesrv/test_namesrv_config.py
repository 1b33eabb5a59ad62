"""NamesrvConfig: the properties parser, key table, errors that name the key, and the runtime allow-list."""

from __future__ import annotations

from pathlib import Path

import pytest

from namesrv.config import (
    ConfigError,
    ConfigUpdateRefused,
    LiveConfig,
    config_from_properties,
    format_config,
    load_config,
    parse_properties,
)


def test_defaults_follow_rocketmq() -> None:
    cfg = load_config(None)
    assert cfg.listen_port == 9876
    assert cfg.listen_address == "0.0.0.0"
    assert cfg.kv_config_path == str(Path.home() / "namesrv" / "kvConfig.json")
    assert cfg.config_store_path == str(Path.home() / "namesrv" / "namesrv.properties")
    assert cfg.scan_not_active_broker_interval == 10_000
    assert cfg.broker_channel_expired_time == 120_000
    assert not cfg.order_message_enable and not cfg.cluster_test


def test_properties_syntax() -> None:
    text = "# comment\n! also a comment\n\n  listenPort = 9877 \nkvConfigPath: /tmp/kv.json\nbindAddress=127.0.0.1\n"
    assert parse_properties(text) == [
        (4, "listenPort", "9877"),
        (5, "kvConfigPath", "/tmp/kv.json"),
        (6, "bindAddress", "127.0.0.1"),
    ]
    cfg = config_from_properties(text + "orderMessageEnable=TRUE\n")
    assert (cfg.listen_port, cfg.kv_config_path, cfg.listen_address) == (9877, "/tmp/kv.json", "127.0.0.1")
    assert cfg.order_message_enable


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("listenPortt=1\n", "line 1: unknown config key 'listenPortt'"),
        ("\nlistenPort=abc\n", "line 2: listenPort=abc is not a valid integer"),
        ("listenPort=70000\n", "listenPort=70000"),
        ("orderMessageEnable=yes\n", "orderMessageEnable=yes is not a valid boolean"),
        ("justakey\n", "line 1: unknown config key 'justakey'"),
        ("listenport=1\n", "(did you mean 'listenPort'?)"),
        ("serverSocketBacklog=many\n", "serverSocketBacklog=many: expected an integer"),
        ("=1\n", "line 1: expected key=value"),
    ],
)
def test_bad_config_names_the_problem(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_properties(text, "ns.conf")
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_overrides_take_python_or_rocketmq_names(tmp_path: Path) -> None:
    conf = tmp_path / "ns.conf"
    conf.write_text("listenPort=1\n")
    cfg = load_config(conf, {"listenPort": 0, "kv_config_path": tmp_path / "kv.json"})
    assert cfg.listen_port == 0 and cfg.kv_config_path == str(tmp_path / "kv.json")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "missing.conf")


def test_format_config_round_trips() -> None:
    cfg = config_from_properties("listenPort=1234\norderMessageEnable=true\n")
    text = format_config(cfg)
    assert "listenPort=1234\n" in text and "orderMessageEnable=true\n" in text
    assert config_from_properties(text) == cfg


@pytest.mark.parametrize("key", ["kvConfigPath", "configStorePath", "rocketmqHome"])
def test_runtime_update_never_changes_a_path(key: str) -> None:
    live = LiveConfig(load_config(None))
    before = live.current
    with pytest.raises(ConfigUpdateRefused, match=f"Can not update config path: {key}"):
        live.change({"orderMessageEnable": "true", key: "/etc/cron.d/x"})
    assert live.current is before  # all or nothing


def test_runtime_update_allow_list() -> None:
    live = LiveConfig(load_config(None))
    with pytest.raises(ConfigUpdateRefused, match="listenPort can not be changed at runtime"):
        live.change({"listenPort": "1"})
    with pytest.raises(ConfigUpdateRefused, match="unknown config key: bogus"):
        live.change({"bogus": "1"})
    with pytest.raises(ConfigError, match="not a valid integer"):
        live.change({"brokerChannelExpiredTime": "soon"})
    live.change({"orderMessageEnable": "true", "brokerChannelExpiredTime": "500"})
    assert live.current.order_message_enable and live.current.broker_channel_expired_time == 500


def test_rocketmq_keys_without_effect_are_accepted_with_one_warning_line() -> None:
    warned: list[str] = []
    text = "listenPort=9877\nserverWorkerThreads=8\nconfigBlackList=configBlackList;rocketmqHome\nuseEpollNativeSelector=true\n"
    cfg = config_from_properties(text, "namesrv.conf", warn=warned.append)
    assert cfg.listen_port == 9877
    assert warned == [
        "WARN namesrv.conf: RocketMQ config key(s) accepted without effect here: serverWorkerThreads, "
        "configBlackList, useEpollNativeSelector"
    ]
    assert config_from_properties("listenPort=1\n", warn=warned.append).listen_port == 1 and len(warned) == 1
