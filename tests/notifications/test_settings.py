"""The notification settings are checked at start-up; a wrong one is named."""

from __future__ import annotations

import pytest

from webapp.config import ConfigError, load_config


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("PUBLIC_URL", "flowdesk.example.org", "PUBLIC_URL must start with http:// or https://"),
        ("NOTIFY_INTERVAL", "0", "NOTIFY_INTERVAL must be a number of seconds greater than 0"),
        ("NOTIFY_DUE_SOON", "-1", "NOTIFY_DUE_SOON must be a whole number of hours"),
        ("NOTIFY_DIGEST_HOUR", "24", "NOTIFY_DIGEST_HOUR must be a whole hour from 0 to 23"),
        ("NOTIFY_DIGEST_HOUR", "seven", "NOTIFY_DIGEST_HOUR='seven' is not valid"),
    ],
)
def test_a_wrong_notification_setting_stops_start_up_naming_it(
    tmp_path, monkeypatch, setting, value, message
):
    monkeypatch.setenv(setting, value)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path, {"TESTING": True})


def test_the_public_url_loses_its_trailing_slash(tmp_path, monkeypatch):
    monkeypatch.setenv("PUBLIC_URL", "https://flowdesk.example.org/")
    config = load_config(tmp_path, {"TESTING": True})
    assert config["PUBLIC_URL"] == "https://flowdesk.example.org"
