use std::future::Future;
use std::sync::Arc;

use serde_json::Value;
use tool_core::{TextInput, ToolError, ToolMetadata, ToolOutput, ToolSource, ToolSpec};

use crate::boxed::BoxFuture;
use crate::guard::Guard;
use crate::ToolContext;

/// A dynamic tool's closure, called with its checked arguments, a context to keep and the guard
/// of the call, which boxes the closure's future once, together with itself.
pub(crate) type DynamicInvoke = Arc<
    dyn for<'g> Fn(
            Value,
            ToolContext<'static>,
            Guard<'g>,
        ) -> BoxFuture<'g, Result<ToolOutput, ToolError>>
        + Send
        + Sync,
>;

/// Gives a closure the higher-ranked signature of [`DynamicInvoke`].
pub(crate) fn invoke<F>(call: F) -> DynamicInvoke
where
    F: for<'g> Fn(
            Value,
            ToolContext<'static>,
            Guard<'g>,
        ) -> BoxFuture<'g, Result<ToolOutput, ToolError>>
        + Send
        + Sync
        + 'static,
{
    Arc::new(call)
}

/// A tool defined at run time from a name, a description, a JSON Schema and an async closure.
///
/// The schema is enforced exactly as written.
///
/// ```
/// # use tool_runtime::{DynamicTool, ToolOutput};
/// # use serde_json::json;
/// let echo = DynamicTool::new(
///     "echo",
///     "Repeats the text it is given",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     |args, _ctx| async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) },
/// );
/// ```
#[derive(Clone)]
pub struct DynamicTool {
    pub(crate) spec: ToolSpec,
    pub(crate) invoke: Option<DynamicInvoke>,
}

impl DynamicTool {
    /// A tool with an implementation.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        call: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext<'static>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        let spec = ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
            output_schema: None,
            metadata: ToolMetadata {
                source: Some(ToolSource::Dynamic),
                ..ToolMetadata::default()
            },
        };
        DynamicTool {
            spec,
            invoke: Some(invoke(move |args, ctx, guard| guard.boxed(call(args, ctx)))),
        }
    }

    /// A tool that takes plain text, not JSON arguments ([`TextInput`]): free text, or text a
    /// grammar accepts. OpenAI Chat and Responses declare it as a custom tool (with the
    /// grammar), the other APIs as a function of one string, [`TEXT_INPUT`]; a regular
    /// expression is checked before `call` runs, like any schema. `call` gets the text.
    ///
    /// [`TEXT_INPUT`]: tool_core::text_input::TEXT_INPUT
    pub fn taking_text<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        input: TextInput,
        call: F,
    ) -> Self
    where
        F: Fn(String, ToolContext<'static>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        let schema = input.schema();
        let mut tool = DynamicTool::new(name, description, schema, move |args, ctx| {
            call(tool_core::text_input::input_text(&args).to_owned(), ctx)
        });
        tool.spec.metadata.text_input = Some(input);
        tool
    }

    /// A declared tool with no implementation: it can be listed and validated against, and
    /// executing it is `ToolError::NotExecutable`.
    pub fn declared(spec: ToolSpec) -> Self {
        DynamicTool { spec, invoke: None }
    }

    /// Replaces the metadata (keywords, hints, examples...).
    pub fn with_metadata(mut self, metadata: ToolMetadata) -> Self {
        let source = self.spec.metadata.source.take();
        let text_input = self.spec.metadata.text_input.take();
        self.spec.metadata = ToolMetadata {
            source: metadata.source.clone().or(source),
            text_input: metadata.text_input.clone().or(text_input),
            ..metadata
        };
        self
    }

    /// Declares the JSON Schema of the tool's structured output (MCP's `outputSchema`).
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.spec.output_schema = Some(schema);
        self
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool")
            .field("spec", &self.spec)
            .field("executable", &self.invoke.is_some())
            .finish()
    }
}
