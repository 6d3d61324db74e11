//! The spans of MCP calls, served and imported, and the W3C trace context carried between them
//! in `_meta` (`traceparent`, `tracestate`: MCP's SEP-414), so that a trace goes on across the
//! hop. Without the `otel` feature the spans are made and nothing is carried.
//!
//! With it, the context is read and written through OpenTelemetry's global propagator
//! (`opentelemetry::global::set_text_map_propagator`, which `ai_tool::otel` sets to W3C trace
//! context) and `tracing-opentelemetry`'s span extension: a subscriber without its layer leaves
//! the spans without an OpenTelemetry context, and nothing is carried then either.

use rmcp::model::MetaObject;
use tracing::field::Empty;
use tracing::Span;

/// The span of one `tools/call` this server answers, a child of the caller's span when the
/// request's `_meta` carries one.
pub(crate) fn served_call(tool: &str, request_id: &str, meta: &[Option<&MetaObject>]) -> Span {
    let span = tracing::info_span!(
        "mcp.tools_call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %tool,
        jsonrpc.request.id = %request_id,
        error.r#type = Empty,
    );
    #[cfg(feature = "otel")]
    {
        let carried = meta
            .iter()
            .flatten()
            .find(|m| m.get_traceparent().is_some());
        otel::adopt(&span, carried.copied());
    }
    #[cfg(not(feature = "otel"))]
    let _ = meta;
    span
}

/// The span of one `tools/call` sent to an imported server; its context goes into `meta`.
pub(crate) fn sent_call(server: &str, tool: &str, meta: &mut MetaObject) -> Span {
    let span = tracing::info_span!(
        "mcp.tools_call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "client",
        otel.status_code = Empty,
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %tool,
        server.address = %server,
        error.r#type = Empty,
    );
    #[cfg(feature = "otel")]
    otel::inject(&span, meta);
    #[cfg(not(feature = "otel"))]
    let _ = meta;
    span
}

/// Marks a call's span failed, with a short kind of failure.
pub(crate) fn failed(span: &Span, kind: &str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

#[cfg(feature = "otel")]
mod otel {
    use std::collections::HashMap;

    use opentelemetry::propagation::{Extractor, Injector};
    use opentelemetry::trace::TraceContextExt;
    use opentelemetry::Context;
    use rmcp::model::MetaObject;
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// The fields of `_meta` trace context lives in.
    const FIELDS: [&str; 2] = ["traceparent", "tracestate"];

    struct Reader<'a>(&'a MetaObject);

    impl Extractor for Reader<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => self.0.get_traceparent(),
                "tracestate" => self.0.get_tracestate(),
                _ => None,
            }
        }

        fn keys(&self) -> Vec<&str> {
            FIELDS.to_vec()
        }
    }

    #[derive(Default)]
    struct Writer(HashMap<String, String>);

    impl Injector for Writer {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), value);
        }
    }

    /// Makes the span a child of the context `meta` carries, or without one the root of a
    /// trace of its own (not a child of whatever span the connection's task is in: rmcp's
    /// span of the whole connection, say, which would make one endless trace of every call).
    /// A malformed `traceparent` is read as none, so a client cannot break the server's
    /// traces, only fail to join them.
    pub(super) fn adopt(span: &Span, meta: Option<&MetaObject>) {
        // Read against an empty context, not the thread's current one: what a malformed
        // field leaves is then no context at all.
        let parent = meta.map_or_else(Context::new, |meta| {
            opentelemetry::global::get_text_map_propagator(|propagator| {
                propagator.extract_with_context(&Context::new(), &Reader(meta))
            })
        });
        let parent = if parent.span().span_context().is_valid() {
            parent
        } else {
            Context::new()
        };
        let _ = span.set_parent(parent);
    }

    /// Writes the span's context into `meta`.
    pub(super) fn inject(span: &Span, meta: &mut MetaObject) {
        let context = span.context();
        let mut written = Writer::default();
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&context, &mut written)
        });
        if let Some(parent) = written.0.remove("traceparent") {
            meta.set_traceparent(parent);
        }
        if let Some(state) = written.0.remove("tracestate").filter(|s| !s.is_empty()) {
            meta.set_tracestate(state);
        }
    }
}
