"""protocol.properties: the Java-properties lines of broker.conf / namesrv.conf and config-update bodies."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.properties import PropertiesError, parse_properties, read_properties_file


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


@pytest.mark.parametrize("line", ["justakey", "=value", ": value"])
def test_a_bad_line_names_source_and_line(line: str) -> None:
    with pytest.raises(PropertiesError, match=r"broker\.conf line 2: expected key=value"):
        parse_properties(f"a=1\n{line}\n", "broker.conf")


def test_the_callers_error_type() -> None:
    class ConfigError(ValueError):
        pass

    with pytest.raises(ConfigError):
        parse_properties("nope", error=ConfigError)


def test_an_unreadable_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "latin1.conf").write_bytes(b"brokerName=caf\xe9\n")
    with pytest.raises(PropertiesError, match=r"cannot read config file .*missing\.conf: No such file"):
        read_properties_file(tmp_path / "missing.conf")
    with pytest.raises(PropertiesError, match=r"cannot read config file .*latin1\.conf: 'utf-8' codec"):
        read_properties_file(tmp_path / "latin1.conf")
    (tmp_path / "ok.conf").write_text("a=1\n")
    assert read_properties_file(tmp_path / "ok.conf") == "a=1\n"
