//! Hooks into a run: before each request ([`RunHooks::prepare_step`]), and before and after
//! each tool call, which may skip, deny, rewrite or end the run, or mend a call whose
//! arguments were refused ([`RunHooks::repair_call`]).

use serde_json::Value;
use tool_core::{ToolCall, ToolError, ToolOutput};

use tool_model::ToolChoice;

/// What a step's request will be, for [`RunHooks::prepare_step`] to change.
#[derive(Debug, Clone)]
pub struct StepPlan {
    /// The step's number, from 0.
    pub index: usize,
    /// The request's tool choice.
    pub tool_choice: ToolChoice,
    /// Only these of the run's offered tools, for this request; `None` for all of them. A name
    /// the run did not offer is ignored: a hook can narrow what is offered, never widen it.
    pub tools: Option<Vec<String>>,
}

/// What to do with a call, decided before it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeTool {
    /// Run it.
    Run,
    /// Run it with these arguments instead (validated like any call's).
    Rewrite(Value),
    /// Do not run it; this is its result.
    Skip(ToolOutput),
    /// Do not run it; the model is told this reason, as an error.
    Deny(String),
    /// Do not run it, and end the run after this step
    /// ([`StopReason::Terminated`](crate::StopReason::Terminated)).
    Terminate(String),
}

/// What to do with a call whose arguments the tool's schema refused
/// ([`RunHooks::repair_call`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RepairCall {
    /// Send the model the errors, for it to call again (what happens without a hook).
    AskModel,
    /// Run the call again, once, with these arguments (checked like any call's: errors again
    /// go to the model). The record keeps them ([`RepairedBy::Hook`](crate::RepairedBy)).
    Fixed(Value),
    /// Do not run it; this is its result.
    Skip(ToolOutput),
}

/// What to do after a call ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterTool {
    /// Go on.
    Continue,
    /// End the run after this step ([`StopReason::Terminated`](crate::StopReason::Terminated)).
    Terminate(String),
}

/// Code run at points of every run: give one to [`AgentBuilder::hooks`](crate::AgentBuilder::hooks).
/// Every method has a default that changes nothing. Hooks run on the run's task; keep them
/// quick.
///
/// ```
/// use tool_agent::{BeforeTool, RunHooks};
/// use tool_core::ToolCall;
///
/// /// No deletions on Fridays.
/// struct NoDeletes;
///
/// impl RunHooks for NoDeletes {
///     fn before_tool(&self, call: &ToolCall) -> BeforeTool {
///         if call.name.starts_with("delete") {
///             BeforeTool::Deny("Deleting is not allowed today.".into())
///         } else {
///             BeforeTool::Run
///         }
///     }
/// }
/// ```
pub trait RunHooks: Send + Sync {
    /// Before each request: change its tool choice, or narrow the tools it offers.
    fn prepare_step(&self, _plan: &mut StepPlan) {}

    /// Before each call of an offered tool.
    fn before_tool(&self, _call: &ToolCall) -> BeforeTool {
        BeforeTool::Run
    }

    /// After a call of an offered tool came back with invalid arguments
    /// ([`ToolError::InvalidArguments`], whose violations say what is wrong): mend the
    /// arguments, answer for the tool, or leave it to the model (the default). The call is as
    /// it ran: after the loop's JSON repair and [`RunHooks::before_tool`]'s rewrite.
    fn repair_call(&self, _call: &ToolCall, _error: &ToolError) -> RepairCall {
        RepairCall::AskModel
    }

    /// After each call that ran: look at the result, or change it.
    fn after_tool(
        &self,
        _call: &ToolCall,
        _result: &mut Result<ToolOutput, ToolError>,
    ) -> AfterTool {
        AfterTool::Continue
    }
}
