"""OpenTelemetry, API only by default: with no SDK configured a span costs microseconds and
exports nothing. `ROOST_OTEL=console` prints spans to stderr, `ROOST_OTEL=otlp` sends them to
the OTLP endpoint in the standard OTEL_EXPORTER_OTLP_* variables; both need the `otel` extra
(`pip install 'roost[otel]'`)."""

from __future__ import annotations

import os
import sys
from typing import Any

_configured = False


def tracer() -> Any:
    from opentelemetry import trace

    _configure_once()
    return trace.get_tracer("roost")


def _configure_once() -> None:
    global _configured
    if _configured:
        return
    _configured = True
    wanted = os.environ.get("ROOST_OTEL", "")
    if not wanted:
        return
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        print(
            "roost: ROOST_OTEL is set but opentelemetry-sdk is not installed "
            "(pip install 'roost[otel]')",
            file=sys.stderr,
        )
        return
    provider = TracerProvider()
    if wanted == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    elif wanted == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
