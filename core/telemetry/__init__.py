"""Live export of what agents do to the observability tools a team runs: OpenTelemetry spans over OTLP."""
