//! What wraps the calls of a toolset: the [`ToolLayer`] trait, the [`Next`] step it passes a
//! call on to, and [`layer_fn`] for a layer written as a closure.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;
use tool_core::{ToolError, ToolOutput, ToolSpec};

use crate::dynamic::{invoke, DynamicInvoke};
use crate::guard::Guard;
use crate::ToolContext;

/// What a layer returns for one call: a boxed future of the call's result.
pub type LayerFuture =
    std::pin::Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

/// Something around every call of a toolset ([`Toolset::layer`](crate::Toolset::layer)): it
/// sees the tool's spec, the checked arguments and the call's context, and passes the call on
/// with [`Next::run`], or answers without it (a cached result, a refusal).
///
/// The call's time limit and cancellation hold around the whole layer: when the call is
/// given up, the layer's future is dropped.
pub trait ToolLayer: Send + Sync + 'static {
    /// Handles one call of the tool `spec` describes (its spec when the layer was added; the
    /// name it is called by now is [`ToolContext::tool_name`]).
    fn call(
        &self,
        spec: &Arc<ToolSpec>,
        args: Value,
        ctx: ToolContext<'static>,
        next: Next,
    ) -> LayerFuture;
}

impl<L: ToolLayer + ?Sized> ToolLayer for Arc<L> {
    fn call(
        &self,
        spec: &Arc<ToolSpec>,
        args: Value,
        ctx: ToolContext<'static>,
        next: Next,
    ) -> LayerFuture {
        (**self).call(spec, args, ctx, next)
    }
}

/// The rest of a call's way, past this layer: the layers added before it, then the tool.
pub struct Next {
    inner: DynamicInvoke,
}

impl Next {
    /// Passes the call on, with these arguments and this context.
    pub async fn run(
        self,
        args: Value,
        ctx: ToolContext<'static>,
    ) -> Result<ToolOutput, ToolError> {
        let name: Arc<str> = ctx.tool_name().into();
        // The outer guard keeps the time limit and the cancellation; this one only catches a
        // panic of the inner closure's future, as the executor would.
        (self.inner)(args, ctx, Guard::new(&name, None, None, None)).await
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Next")
    }
}

/// A layer written as a closure of the spec, the arguments, the context and the next step.
///
/// ```
/// use tool_runtime::toolset::layer_fn;
/// use tool_runtime::ToolError;
///
/// // Refuses every call outside office hours; passes the others on.
/// let office_hours = layer_fn(|spec, args, ctx, next| async move {
///     let open = true; // a clock, in real code
///     if !open {
///         return Err(ToolError::retry(ctx.tool_name(), "tools are closed until 9:00"));
///     }
///     let _ = spec;
///     next.run(args, ctx).await
/// });
/// ```
pub fn layer_fn<F, Fut>(layer: F) -> impl ToolLayer
where
    F: Fn(Arc<ToolSpec>, Value, ToolContext<'static>, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    LayerFn(layer)
}

struct LayerFn<F>(F);

impl<F, Fut> ToolLayer for LayerFn<F>
where
    F: Fn(Arc<ToolSpec>, Value, ToolContext<'static>, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    fn call(
        &self,
        spec: &Arc<ToolSpec>,
        args: Value,
        ctx: ToolContext<'static>,
        next: Next,
    ) -> LayerFuture {
        Box::pin((self.0)(Arc::clone(spec), args, ctx, next))
    }
}

/// `inner` with `layer` around it.
pub(super) fn wrapped(
    layer: Arc<dyn ToolLayer>,
    spec: Arc<ToolSpec>,
    inner: DynamicInvoke,
) -> DynamicInvoke {
    invoke(move |args, ctx, guard| {
        let next = Next {
            inner: Arc::clone(&inner),
        };
        guard.boxed(layer.call(&spec, args, ctx, next))
    })
}
