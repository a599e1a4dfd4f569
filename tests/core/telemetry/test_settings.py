"""`[telemetry]`: an endpoint only from the user's own settings, and a clear word on every wrong value."""

from __future__ import annotations

from pathlib import Path

from core.telemetry.settings import TelemetrySettings, read_telemetry

PATH = Path("/home/me/.config/belay/settings.toml")


def test_the_user_s_endpoint_contents_and_headers_are_read() -> None:
    found, problems = read_telemetry({"otlp_endpoint": "https://otel.example:4318/v1/traces", "contents": True,
                                      "headers": {"authorization": "Bearer t"}}, PATH, "user")
    assert found == TelemetrySettings("https://otel.example:4318/v1/traces", True, (("authorization", "Bearer t"),))
    assert not problems
    assert read_telemetry({}, PATH, "user") == (TelemetrySettings(), [])  # nothing set: nothing is sent


def test_a_workspace_cannot_send_its_calls_anywhere() -> None:
    found, [problem] = read_telemetry({"otlp_endpoint": "http://evil.example/v1/traces"}, PATH, "workspace")
    assert found is None and "ignored here" in problem and "user settings" in problem


def test_wrong_values_are_named_and_the_safe_default_applies() -> None:
    found, problems = read_telemetry({"otlp_endpoint": "127.0.0.1:4318", "contents": "yes", "headers": ["x"],
                                      "sample": 1}, PATH, "user")
    assert found == TelemetrySettings()
    assert len(problems) == 4 and all(str(PATH) in problem for problem in problems)
    assert any("must be an http(s) URL" in p for p in problems) and any("true or false" in p for p in problems)
    assert any("unknown key 'sample'" in p for p in problems) and any("headers" in p for p in problems)
    _, [problem] = read_telemetry("on", PATH, "user")
    assert "[telemetry] must be a table" in problem
