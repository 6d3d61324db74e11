//! OpenTelemetry export over OTLP/HTTP (feature `otel`): the spans and metrics of the agent
//! loop and of MCP calls, named by OpenTelemetry's GenAI and MCP semantic conventions.
//!
//! The crates make their spans and metric events with `tracing` whether or not this feature is
//! on; [`Telemetry`] is what sends them on. Add [`Telemetry::layer`] to a `tracing` subscriber:
//!
//! - spans go through `tracing-opentelemetry` and a batch exporter (`invoke_agent`,
//!   `chat {model}`, `execute_tool {tool}`, and for MCP `tools/call {tool}` on both sides, the
//!   served one a child of the caller's across the hop, by `_meta.traceparent`);
//! - the metric events (target [`METRICS_TARGET`])
//!   become the conventions' histograms, `gen_ai.client.operation.duration` (seconds) and
//!   `gen_ai.client.token.usage` (tokens, by `gen_ai.token.type`), with the bucket boundaries
//!   the conventions advise, exported every [`OtlpHttp::metrics_interval`].
//!
//! Arguments and results are not on the spans unless the agent is built with
//! `.trace_content(true)`.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let telemetry = ai_tool::otel::Telemetry::otlp_http()
//!     .endpoint("http://127.0.0.1:4318") // or OTEL_EXPORTER_OTLP_ENDPOINT, else this
//!     .service_name("support-agent")
//!     .build()?;
//! let subscriber = tracing_subscriber::registry().with(telemetry.layer());
//! tracing::subscriber::set_global_default(subscriber)?;
//! // ... run agents, serve or import MCP tools ...
//! telemetry.shutdown()?; // sends what is left
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::agent::telemetry::METRICS_TARGET;

/// Why telemetry could not be set up, or could not send what it had.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct TelemetryError(String);

/// The exporters, and what makes their layer. Dropping it without
/// [`shutdown`](Telemetry::shutdown) may lose the last batch.
pub struct Telemetry {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    endpoint: String,
}

/// Builds a [`Telemetry`] exporting over OTLP/HTTP (protobuf).
pub struct OtlpHttp {
    endpoint: Option<String>,
    service_name: String,
    headers: HashMap<String, String>,
    timeout: Duration,
    metrics_interval: Duration,
}

impl Telemetry {
    /// Starts building an OTLP/HTTP export. Its endpoint is [`OtlpHttp::endpoint`], or the
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` variable, or `http://localhost:4318`; each signal goes to
    /// its path under it (`/v1/traces`, `/v1/metrics`).
    pub fn otlp_http() -> OtlpHttp {
        OtlpHttp {
            endpoint: None,
            service_name: "ai-tool".to_owned(),
            headers: HashMap::new(),
            timeout: Duration::from_secs(10),
            metrics_interval: Duration::from_secs(60),
        }
    }

    /// The `tracing` layer that sends the spans and the metric events on.
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
    {
        let tracer = self.tracer.tracer("ai-tool");
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .and_then(GenAiMetrics::new(&self.meter))
    }

    /// Sends every finished span and the metrics now, and waits for it.
    pub fn flush(&self) -> Result<(), TelemetryError> {
        self.tracer.force_flush().map_err(|e| self.unsent(e))?;
        self.meter.force_flush().map_err(|e| self.unsent(e))
    }

    /// Sends what is left and stops the exporters.
    pub fn shutdown(self) -> Result<(), TelemetryError> {
        let spans = self.tracer.shutdown().map_err(|e| self.unsent(e));
        let metrics = self.meter.shutdown().map_err(|e| self.unsent(e));
        spans.and(metrics)
    }

    fn unsent(&self, error: impl std::fmt::Display) -> TelemetryError {
        TelemetryError(format!("sending to {}: {error}", self.endpoint))
    }
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// The URL without a user and password before its host, to be shown.
fn without_userinfo(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

fn failed(error: impl std::fmt::Display) -> TelemetryError {
    TelemetryError(error.to_string())
}

impl OtlpHttp {
    /// The collector's base URL (`http://127.0.0.1:4318`); the signals' paths are added to it.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into().trim_end_matches('/').to_owned());
        self
    }

    /// The `service.name` of the resource; `ai-tool` by default.
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = name.into();
        self
    }

    /// A header sent with every export (an API key, say). Its value is never logged nor
    /// shown by `Debug`.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// How long one export may take; 10 s by default.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often the metrics are exported; every 60 s by default, and at
    /// [`Telemetry::flush`] and [`Telemetry::shutdown`].
    pub fn metrics_interval(mut self, interval: Duration) -> Self {
        self.metrics_interval = interval;
        self
    }

    /// Builds the exporters, and sets OpenTelemetry's global propagator to W3C trace context,
    /// what MCP's `_meta.traceparent` carries.
    ///
    /// The exporters send from threads of their own (with a blocking HTTP client), so they
    /// work whatever runtime the program has, or none.
    pub fn build(self) -> Result<Telemetry, TelemetryError> {
        let resource = Resource::builder()
            .with_service_name(self.service_name.clone())
            .build();
        let url = |path: &str| self.endpoint.as_ref().map(|base| format!("{base}{path}"));
        let mut spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_timeout(self.timeout)
            .with_headers(self.headers.clone());
        if let Some(url) = url("/v1/traces") {
            spans = spans.with_endpoint(url);
        }
        let mut metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_timeout(self.timeout)
            .with_headers(self.headers.clone());
        if let Some(url) = url("/v1/metrics") {
            metrics = metrics.with_endpoint(url);
        }
        // The blocking client makes a runtime of its own, which tokio refuses to make or drop
        // on one of its threads: build on a thread apart.
        let built = std::thread::spawn(move || (spans.build(), metrics.build()))
            .join()
            .map_err(|_| TelemetryError("building the exporters panicked".into()))?;
        let spans = built.0.map_err(failed)?;
        let metrics = built.1.map_err(failed)?;
        let tracer = SdkTracerProvider::builder()
            .with_resource(resource.clone())
            .with_batch_exporter(spans)
            .build();
        let reader = PeriodicReader::builder(metrics)
            .with_interval(self.metrics_interval)
            .build();
        let meter = SdkMeterProvider::builder()
            .with_resource(resource)
            .with_reader(reader)
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Ok(Telemetry {
            tracer,
            meter,
            endpoint: self.endpoint.as_deref().map_or_else(
                || "OTEL_EXPORTER_OTLP_ENDPOINT or http://localhost:4318".into(),
                without_userinfo,
            ),
        })
    }
}

impl std::fmt::Debug for OtlpHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpHttp")
            .field("endpoint", &self.endpoint.as_deref().map(without_userinfo))
            .field("service_name", &self.service_name)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .field("metrics_interval", &self.metrics_interval)
            .finish()
    }
}

/// The conventions' bucket boundaries for `gen_ai.client.operation.duration`, in seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The conventions' bucket boundaries for `gen_ai.client.token.usage`.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// Turns the agent's metric events into the conventions' histograms.
struct GenAiMetrics {
    duration: Histogram<f64>,
    tokens: Histogram<u64>,
}

impl GenAiMetrics {
    fn new(provider: &SdkMeterProvider) -> Self {
        let meter = provider.meter("ai-tool");
        GenAiMetrics {
            duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("GenAI operation duration")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Number of input and output tokens used")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build(),
        }
    }
}

/// What one metric event holds.
#[derive(Default)]
struct MetricEvent {
    duration: Option<f64>,
    tokens: Option<u64>,
    attributes: Vec<KeyValue>,
}

const DURATION_FIELD: &str = "histogram.gen_ai.client.operation.duration";
const TOKENS_FIELD: &str = "histogram.gen_ai.client.token.usage";

impl Visit for MetricEvent {
    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == DURATION_FIELD {
            self.duration = Some(value);
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == TOKENS_FIELD {
            self.tokens = Some(value);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() != "message" {
            self.attributes
                .push(KeyValue::new(field.name(), value.to_owned()));
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: Subscriber> Layer<S> for GenAiMetrics {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != METRICS_TARGET {
            return;
        }
        let mut seen = MetricEvent::default();
        event.record(&mut seen);
        if let Some(seconds) = seen.duration {
            self.duration.record(seconds, &seen.attributes);
        }
        if let Some(tokens) = seen.tokens {
            self.tokens.record(tokens, &seen.attributes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_endpoint_has_no_user_nor_password() {
        assert_eq!(
            without_userinfo("https://user:secret@otel.example/v1"),
            "https://otel.example/v1"
        );
        assert_eq!(
            without_userinfo("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318"
        );
        assert_eq!(without_userinfo("http://h/a@b"), "http://h/a@b");
        let debug = format!(
            "{:?}",
            Telemetry::otlp_http()
                .endpoint("https://u:secret@h")
                .header("authorization", "Bearer secret")
        );
        assert!(!debug.contains("secret"), "{debug}");
    }
}
