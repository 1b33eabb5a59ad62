"""protocol.bodies.properties_text and runtime.properties_file: the Java-properties lines of broker.conf / namesrv.conf and config-update bodies."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.bodies.properties_text import PropertiesError, parse_properties, update_properties_text
from runtime.properties_file import read_properties_file, write_properties_file_atomically


def test_pairs_comments_and_both_separators() -> None:
    text = "# comment\n! also a comment\n\n  brokerName = broker-a \nlistenPort: 10911\nmessageDelayLevel=1s 5s\n"
    assert parse_properties(text) == [
        (4, "brokerName", "broker-a"),
        (5, "listenPort", "10911"),
        (6, "messageDelayLevel", "1s 5s"),
    ]


def test_first_separator_wins_and_values_may_be_empty() -> None:
    assert parse_properties("namesrvAddr=a:9876;b:9876\nempty=") == [
        (1, "namesrvAddr", "a:9876;b:9876"),
        (2, "empty", ""),
    ]


@pytest.mark.parametrize("line", ["=value", ": value"])
def test_an_empty_key_names_source_and_line(line: str) -> None:
    with pytest.raises(PropertiesError, match=r"broker\.conf line 3: expected key=value"):
        parse_properties(f"a=1\\\n  2\n{line}\n", "broker.conf")


def test_java_grammar_space_separator_continuations_escapes_and_bare_keys() -> None:
    text = "brokerName broker-x\nmessageDelayLevel=1s 5s \\\n    10s\nbrokerIP1=caf\\u00e9\njustakey\nk\\=x=v\n"
    assert parse_properties(text) == [
        (1, "brokerName", "broker-x"),
        (2, "messageDelayLevel", "1s 5s 10s"),
        (4, "brokerIP1", "caf\u00e9"),
        (5, "justakey", ""),
        (6, "k=x", "v"),
    ]


def test_the_callers_error_type() -> None:
    class ConfigError(ValueError):
        pass

    with pytest.raises(ConfigError):
        parse_properties("=nope", error=ConfigError)


def test_update_keeps_comments_and_order_and_appends_new_keys() -> None:
    text = "# operator's notes\nbrokerName = broker-a\nfileReservedTime=48\n\n# tail\n"
    out = update_properties_text(text, {"fileReservedTime": "24", "brokerPermission": "4"})
    assert out == "# operator's notes\nbrokerName = broker-a\nfileReservedTime=24\n\n# tail\nbrokerPermission=4\n"
    assert dict((k, v) for _n, k, v in parse_properties(out))["fileReservedTime"] == "24"


def test_atomic_write_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "broker.conf"
    target.write_text("a=1\n")
    write_properties_file_atomically(target, "a=2\n")
    assert target.read_text() == "a=2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["broker.conf"]


def test_an_unreadable_file_is_one_line_naming_it_and_latin1_is_read(tmp_path: Path) -> None:
    (tmp_path / "latin1.conf").write_bytes(b"brokerName=caf\xe9\n")
    with pytest.raises(PropertiesError, match=r"cannot read config file .*missing\.conf: No such file"):
        read_properties_file(tmp_path / "missing.conf")
    assert read_properties_file(tmp_path / "latin1.conf") == "brokerName=caf\u00e9\n"  # ISO-8859-1, as Java reads
    (tmp_path / "ok.conf").write_text("a=1\n")
    assert read_properties_file(tmp_path / "ok.conf") == "a=1\n"
