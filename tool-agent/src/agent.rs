//! The agent: a model, an executor, instructions and the rules choosing the tools of each run.

use std::collections::HashMap;
use std::sync::Arc;

use tool_core::provider::DeclareOptions;
use tool_core::{ToolCall, ToolSpec};
use tool_runtime::Executor;

use crate::approval::{ApprovalPolicy, CallApprovalPolicy};
use crate::context::RunContext;
use crate::hooks::RunHooks;
use crate::kept::{read_result_spec, READ_RESULT};
use crate::options::RunOptions;
use crate::result::RunFailure;
use crate::search::ToolSearch;
use tool_core::provider::tool_search::TOOL_SEARCH;
use tool_model::ChatModel;
use tool_model::OfferedTools;

/// Whether the system tools of one purpose are offered, given the run's context.
pub type PurposeGate = Arc<dyn Fn(&RunContext) -> bool + Send + Sync>;

/// Runs a model with tools: built once, then [`Agent::run`] for each request.
///
/// ```
/// use std::sync::Arc;
/// use tool_agent::{Agent, ModelResponse, RunOptions, ScriptedModel};
/// use tool_runtime::Executor;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedModel::new().then(ModelResponse::answer("Hello!"));
/// let agent = Agent::builder(model)
///     .executor(Executor::builder().registered_tools(false).build()?)
///     .instructions("Be brief.")
///     .build();
/// let result = agent.run("Hi", &RunOptions::default()).await?;
/// assert_eq!(result.text, "Hello!");
/// # Ok(()) }
/// ```
pub struct Agent {
    pub(crate) model: Arc<dyn ChatModel>,
    pub(crate) executor: Option<Executor>,
    pub(crate) instructions: Option<String>,
    gates: HashMap<String, PurposeGate>,
    declare: DeclareOptions,
    pub(crate) approval: Option<ApprovalPolicy>,
    pub(crate) call_approval: Option<CallApprovalPolicy>,
    /// Whether the executor's declared tools are offered, their calls answered from outside.
    pub(crate) external: bool,
    pub(crate) hooks: Option<Arc<dyn RunHooks>>,
    /// Seals interrupted runs' states; a resumed state must carry its seal.
    pub(crate) state_key: Option<crate::approval::StateKey>,
    /// Whether tool calls' spans carry their arguments and results.
    pub(crate) trace_content: bool,
    /// How the model finds the selectable tools, when they are searched.
    pub(crate) tool_search: Option<ToolSearch>,
    /// Whether a gated tool whose gates all fail stays declared, and only its calls are
    /// refused, where the API restricts calls without changing the declarations.
    gated_declared: bool,
    /// [`AgentBuilder::answer_sampling`].
    pub(crate) answers_sampling: bool,
    /// The most tokens a sampling request may ask for ([`AgentBuilder::answer_sampling`]).
    pub(crate) sampling_cap: u32,
    /// Tools the provider runs, declared beside the offered ones.
    hosted: Vec<tool_core::provider::hosted::HostedTool>,
    #[cfg(feature = "retrieval")]
    retriever: Option<(
        Arc<tool_retrieval::Retriever>,
        tool_retrieval::RetrieveOptions,
    )>,
}

/// Builds an [`Agent`].
pub struct AgentBuilder {
    agent: Agent,
}

impl Agent {
    /// Starts building an agent on this model. Pass an `Arc` of the model to keep a handle on
    /// it (a [`ScriptedModel`](crate::ScriptedModel)'s recorded requests, say).
    pub fn builder(model: impl ChatModel + 'static) -> AgentBuilder {
        AgentBuilder {
            agent: Agent {
                model: Arc::new(model),
                executor: None,
                instructions: None,
                gates: HashMap::new(),
                declare: DeclareOptions::default(),
                approval: None,
                call_approval: None,
                external: false,
                hooks: None,
                state_key: None,
                trace_content: false,
                tool_search: None,
                gated_declared: false,
                answers_sampling: false,
                sampling_cap: 0,
                hosted: Vec::new(),
                #[cfg(feature = "retrieval")]
                retriever: None,
            },
        }
    }

    /// The executor whose tools the agent offers, if it has one.
    pub fn executor(&self) -> Option<&Executor> {
        self.executor.as_ref()
    }

    /// The executor of a run with these options: theirs ([`RunOptions::tools`]), or the
    /// agent's.
    pub(crate) fn executor_for<'a>(&'a self, options: &'a RunOptions) -> Option<&'a Executor> {
        options.tools.as_ref().or(self.executor.as_ref())
    }

    /// The tools a run with these options offers for this input, declared in the model's
    /// format:
    ///
    /// - a system tool (not `selectable`) without a purpose is always offered;
    /// - a system tool with purposes is offered when the gate of one of its purposes passes
    ///   for the run's context (a purpose without a gate passes);
    /// - a selectable tool is offered when the options select it by name, or when the
    ///   retriever picks it for the input (feature `retrieval`);
    /// - a tool that is only declared (a catalog line with no implementation) is offered only
    ///   with [`AgentBuilder::external_tools`], under the same rules;
    /// - with a [`tool search`](AgentBuilder::tool_search) the model's API has, every
    ///   selectable tool is offered, declared deferred (those the options select by name are
    ///   loaded from the start), beside the search.
    pub async fn offered_tools(
        &self,
        input: &str,
        options: &RunOptions,
    ) -> Result<OfferedTools, RunFailure> {
        let Some(exec) = self.executor_for(options) else {
            return Ok(OfferedTools::none());
        };
        let search = self.native_search();
        let retrieved = match search {
            Some(_) => Vec::new(),
            None => self.retrieved(input).await?,
        };
        let mut specs: Vec<ToolSpec> = exec
            .tools()
            .filter(|spec| self.external || exec.is_executable(&spec.name))
            .filter(|spec| {
                (search.is_some() && spec.metadata.selectable)
                    || self.offers(spec, options, &retrieved, !self.keeps_gated_declared())
            })
            .cloned()
            .collect();
        specs.extend(read_result(exec, options));
        Ok(self.searchable(specs, exec, options))
    }

    /// The tools of these names, as an interrupted run offered them.
    pub(crate) fn offered_by_name(&self, names: &[String], options: &RunOptions) -> OfferedTools {
        let Some(exec) = self.executor_for(options) else {
            return OfferedTools::new(Vec::new(), self.model.format(), &self.declare);
        };
        let mut specs: Vec<ToolSpec> = exec
            .tools()
            .filter(|spec| names.contains(&spec.name))
            .filter(|spec| self.external || exec.is_executable(&spec.name))
            .cloned()
            .collect();
        let reads = names.iter().any(|name| name == READ_RESULT);
        specs.extend(read_result(exec, options).filter(|_| reads));
        self.searchable(specs, exec, options)
    }

    /// The agent's tool search, when the model's API has deferred loading.
    fn native_search(&self) -> Option<&ToolSearch> {
        self.tool_search
            .as_ref()
            .filter(|search| search.native_in(self.model.format()))
    }

    /// The offered tools declared for the model: with a search its API has, the selectable
    /// ones not selected by name deferred, and the search declared beside them; without one,
    /// none deferred (a deferred tool no search can find could never be called).
    fn searchable(
        &self,
        mut specs: Vec<ToolSpec>,
        exec: &Executor,
        options: &RunOptions,
    ) -> OfferedTools {
        let format = self.model.format();
        let callable: Vec<String> = specs
            .iter()
            .filter(|spec| self.passes_gates(spec, options))
            .map(|spec| spec.name.clone())
            .chain([TOOL_SEARCH.to_owned()])
            .collect();
        let Some(search) = self.native_search() else {
            for spec in &mut specs {
                spec.metadata.defer_loading = false;
            }
            return OfferedTools::new(specs, format, &self.declare)
                .with_hosted(self.hosted.clone())
                .with_callable(callable);
        };
        for spec in &mut specs {
            if spec.metadata.selectable && !options.selected_tools.contains(&spec.name) {
                spec.metadata.defer_loading = true;
            }
        }
        if let Some(tool) = search.spec() {
            if exec.spec(TOOL_SEARCH).is_some() {
                tracing::warn!(
                    "the executor has a tool named `{TOOL_SEARCH}`: the agent's tool search is \
                     not offered beside it"
                );
            } else {
                specs.push(tool);
            }
        }
        let hosted = self.hosted.iter().cloned().chain(search.hosted()).collect();
        OfferedTools::new(specs, format, &self.declare)
            .with_hosted(hosted)
            .with_callable(callable)
    }

    /// Whether a run with these options may have offered the tool called `name`: a tool of the
    /// executor that [`Agent::offered_tools`]' rules let through, a selectable one counting as
    /// picked when the agent has a retriever (the pick depended on the input). What a stored
    /// state's names are held to.
    pub(crate) fn may_have_offered(&self, name: &str, options: &RunOptions) -> bool {
        let Some(exec) = self.executor_for(options) else {
            return false;
        };
        let Some(spec) = exec.spec(name) else {
            let searches = self.native_search().and_then(ToolSearch::spec).is_some();
            return (name == READ_RESULT && read_result(exec, options).is_some())
                || (name == TOOL_SEARCH && searches);
        };
        if !(self.external || exec.is_executable(name)) {
            return false;
        }
        #[cfg(feature = "retrieval")]
        let retrieves = self.retriever.is_some() || self.tool_search.is_some();
        #[cfg(not(feature = "retrieval"))]
        let retrieves = self.tool_search.is_some();
        let picked = if retrieves && spec.metadata.selectable {
            vec![spec.name.clone()]
        } else {
            Vec::new()
        };
        self.offers(spec, options, &picked, !self.keeps_gated_declared())
    }

    /// Whether gated tools stay declared, their calls restricted instead: asked for, and the
    /// model's API restricts calls without changing the declarations.
    fn keeps_gated_declared(&self) -> bool {
        self.gated_declared
            && self
                .model
                .format()
                .is_some_and(tool_model::ToolChoice::keeps_declarations_in)
    }

    /// The run's offered tools narrowed to these names, for one request.
    pub(crate) fn narrowed(&self, offered: &OfferedTools, names: &[String]) -> OfferedTools {
        let specs = offered
            .specs()
            .iter()
            .filter(|spec| names.contains(&spec.name))
            .cloned()
            .collect();
        OfferedTools::new(specs, self.model.format(), &self.declare)
            .with_hosted(offered.hosted().to_vec())
    }

    /// Whether the rules offer the tool; with `gates` false, a system tool with purposes is
    /// offered whatever its gates say ([`Agent::passes_gates`] says whether it is callable).
    fn offers(
        &self,
        spec: &ToolSpec,
        options: &RunOptions,
        retrieved: &[String],
        gates: bool,
    ) -> bool {
        let name = &spec.name;
        if spec.metadata.selectable {
            return options.selected_tools.contains(name) || retrieved.contains(name);
        }
        !gates || self.passes_gates(spec, options)
    }

    /// Whether a system tool's gates let it be called in a run with these options: it has no
    /// purpose, or one of its purposes has no gate or a gate that passes.
    fn passes_gates(&self, spec: &ToolSpec, options: &RunOptions) -> bool {
        let purposes = &spec.metadata.purposes;
        spec.metadata.selectable
            || purposes.is_empty()
            || purposes.iter().any(|purpose| {
                self.gates
                    .get(purpose)
                    .is_none_or(|gate| gate(&options.context))
            })
    }

    /// The selectable tools the retriever picks for the input: the agent's, else its tool
    /// search's (a model whose API has no deferred loading).
    #[cfg(feature = "retrieval")]
    async fn retrieved(&self, input: &str) -> Result<Vec<String>, RunFailure> {
        let search = self.tool_search.as_ref().and_then(ToolSearch::retriever);
        let Some((retriever, options)) = self
            .retriever
            .as_ref()
            .map(|(retriever, options)| (retriever, options))
            .or(search)
        else {
            return Ok(Vec::new());
        };
        let found = retriever
            .retrieve(input, options)
            .await
            .map_err(|e| RunFailure::ToolSelection(e.to_string()))?;
        Ok(found
            .into_iter()
            .filter(|r| r.reason != tool_retrieval::Reason::System)
            .map(|r| r.name)
            .collect())
    }

    #[cfg(not(feature = "retrieval"))]
    async fn retrieved(&self, _input: &str) -> Result<Vec<String>, RunFailure> {
        Ok(Vec::new())
    }
}

impl AgentBuilder {
    /// The executor whose tools the agent offers. Without one, the agent offers no tools.
    pub fn executor(mut self, executor: Executor) -> Self {
        self.agent.executor = Some(executor);
        self
    }

    /// The system prompt of every request.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.agent.instructions = Some(instructions.into());
        self
    }

    /// The gate of a purpose: the system tools serving `purpose` are offered only in runs whose
    /// context passes it (a tool with several purposes, when one of them passes).
    ///
    /// ```
    /// # use tool_agent::{Agent, RunContext, ScriptedModel};
    /// struct Documents(Vec<String>);
    ///
    /// let agent = Agent::builder(ScriptedModel::new())
    ///     .purpose_gate("document_processing", |context: &RunContext| {
    ///         context.get::<Documents>().is_some_and(|d| !d.0.is_empty())
    ///     })
    ///     .build();
    /// # drop(agent);
    /// ```
    pub fn purpose_gate(
        mut self,
        purpose: impl Into<String>,
        gate: impl Fn(&RunContext) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.agent.gates.insert(purpose.into(), Arc::new(gate));
        self
    }

    /// The tools whose calls wait for a person's approval: a run whose model calls one stops
    /// with the call pending ([`StopReason::Interrupted`](crate::StopReason::Interrupted)),
    /// and [`Agent::resume`] goes on with the decisions. The other calls of the same answer run.
    ///
    /// Policies add up: a tool waits when any policy given names it (and always when it is
    /// marked `requires_approval`). A later policy never lets through what an earlier one held.
    pub fn require_approval(
        mut self,
        policy: impl Fn(&ToolSpec) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.agent.approval = Some(match self.agent.approval.take() {
            None => Arc::new(policy),
            Some(earlier) => Arc::new(move |spec: &ToolSpec| earlier(spec) || policy(spec)),
        });
        self
    }

    /// The calls that wait for a person's approval, decided on their arguments (a payment
    /// over 100, a path outside the workspace), beside the tools that always wait. The policy
    /// sees the tool's spec, the call as the model made it (arguments that are not valid JSON
    /// are a string) and the run's context, and may be asked again for the same call. A
    /// decision is bound to the arguments it was made on, as for any approval.
    ///
    /// ```
    /// # use tool_agent::{Agent, ScriptedModel};
    /// let agent = Agent::builder(ScriptedModel::new())
    ///     .require_approval_when(|spec, call, _ctx| {
    ///         spec.name == "pay" && call.arguments["amount"].as_i64().unwrap_or(i64::MAX) > 100
    ///     })
    ///     .build();
    /// ```
    pub fn require_approval_when(
        mut self,
        policy: impl Fn(&ToolSpec, &ToolCall, &RunContext) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.agent.call_approval = Some(Arc::new(policy));
        self
    }

    /// Offers the executor's declared tools too (catalog lines,
    /// [`DynamicTool::declared`](tool_runtime::DynamicTool::declared)): tools run outside the
    /// executor, by the client
    /// (a browser, a phone) or a person. A call of one with valid arguments stops the run as
    /// an approval does ([`StopReason::Interrupted`](crate::StopReason::Interrupted)), the call
    /// pending and marked [`external`](crate::PendingApproval::external); [`Agent::resume`]
    /// goes on with its result, given with [`PendingApproval::answer`](crate::PendingApproval::answer).
    /// Invalid arguments go back to the model as for any tool, without stopping.
    pub fn external_tools(mut self) -> Self {
        self.agent.external = true;
        self
    }

    /// [`AgentBuilder::require_approval`] for every tool that may destroy data
    /// ([`ToolMetadata::may_destroy`](tool_core::ToolMetadata::may_destroy)): marked
    /// `destructive`, or imported from an MCP server without a `destructiveHint` (MCP's
    /// default is destructive). An imported tool's hints are its server's word; to hold every
    /// imported tool whatever it says, add [`AgentBuilder::require_approval_for_imported`].
    pub fn require_approval_for_destructive(self) -> Self {
        self.require_approval(|spec| spec.metadata.may_destroy())
    }

    /// [`AgentBuilder::require_approval`] for every tool imported from an MCP server, whatever
    /// its annotations say: MCP calls them untrusted, and a hostile server can mark a tool that
    /// deletes everything `readOnlyHint: true`.
    pub fn require_approval_for_imported(self) -> Self {
        self.require_approval(|spec| spec.metadata.is_imported())
    }

    /// Seals the state of each interrupted run with this key (HMAC-SHA256), and refuses to
    /// resume a state without this key's seal: a state that waits outside the process (a
    /// database, a browser) cannot be edited to approve a tool for the run, offer another, or
    /// change what was done. Give every process that resumes the same key (at least 32
    /// random bytes, kept as a secret).
    ///
    /// Without a key, a state is still held to what this agent could have done
    /// ([`Agent::resume`]), but an edit within that (approving an offered tool for the rest
    /// of the run, say) cannot be told.
    pub fn state_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.agent.state_key = Some(crate::approval::StateKey(Arc::from(key.as_ref())));
        self
    }

    /// Puts each tool call's arguments and result on its span
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`); off by default, as
    /// OpenTelemetry's GenAI conventions have it, because they may hold personal data or
    /// secrets that would then reach wherever the spans are sent.
    pub fn trace_content(mut self, on: bool) -> Self {
        self.agent.trace_content = on;
        self
    }

    /// Code run before each request and around each tool call (see [`RunHooks`]).
    pub fn hooks(mut self, hooks: impl RunHooks + 'static) -> Self {
        self.agent.hooks = Some(Arc::new(hooks));
        self
    }

    /// Declares tools in the strict mode of the model's API, where it has one.
    pub fn strict(mut self, strict: bool) -> Self {
        self.agent.declare.strict = strict;
        self
    }

    /// Lets a retriever pick, for each run's input, the selectable tools to offer (beside those
    /// selected by name). `[tool]` in the input forces a tool in.
    #[cfg(feature = "retrieval")]
    pub fn retriever(
        mut self,
        retriever: Arc<tool_retrieval::Retriever>,
        options: tool_retrieval::RetrieveOptions,
    ) -> Self {
        self.agent.retriever = Some((retriever, options));
        self
    }

    /// Declares a tool the provider runs beside the offered ones in every request
    /// ([`HostedTool`](tool_core::provider::hosted::HostedTool): web search, code execution,
    /// programmatic tool calling...). A model whose API does not host it is sent the others,
    /// with a note in the declarations. The calls of those you run (computer use, bash, the
    /// text editor) need a tool of that name in the executor, like any call.
    pub fn hosted_tool(mut self, tool: tool_core::provider::hosted::HostedTool) -> Self {
        self.agent.hosted.push(tool);
        self
    }

    /// Keeps a gated tool declared when its gates fail, and refuses its calls instead, where
    /// the model's API restricts calls without changing the declarations (OpenAI Chat and
    /// Responses, Gemini): the run sends the tools it may call as an allowed-tools choice
    /// ([`ToolChoice::Allowed`](tool_model::ToolChoice::Allowed)), and runs of different
    /// contexts send the same tools, which keeps the provider's prompt cache. The model then
    /// sees the declarations of tools it may not call: leave this off when a gate hides a tool
    /// the model must not know of. Elsewhere the gated tool is not declared, as without it.
    pub fn keep_gated_tools_declared(mut self, keep: bool) -> Self {
        self.agent.gated_declared = keep;
        self
    }

    /// Answers a tool's requests to a model (`ToolContext::sample`, MCP's sampling) with the
    /// run's own model: a request of the tool's messages and instructions, no tools, its
    /// `max_tokens` held to `cap_tokens`. Off by default: those tokens are not counted in the
    /// run's `Usage` nor held to its `token_budget`, so a tool could spend what the run never
    /// sees; turn it on for tools you trust. Off, a tool asking gets an error that says no
    /// model is reachable.
    pub fn answer_sampling(mut self, cap_tokens: u32) -> Self {
        self.agent.answers_sampling = true;
        self.agent.sampling_cap = cap_tokens;
        self
    }

    /// Lets the model search the selectable tools instead of being offered a pick of them up
    /// front ([`ToolSearch`]). Where the model's API has deferred loading (Anthropic, OpenAI
    /// Responses), every selectable tool is declared deferred beside the search, and the
    /// request's tools stay byte for byte the same from step to step, which keeps the
    /// provider's prompt cache. Elsewhere the run chooses its tools up front as without it:
    /// by the agent's retriever, else the search's own, else by name only.
    pub fn tool_search(mut self, search: ToolSearch) -> Self {
        self.agent.tool_search = Some(search);
        self
    }

    /// The agent.
    pub fn build(self) -> Agent {
        self.agent
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.model_name())
            .field("executor", &self.executor)
            .field("instructions", &self.instructions)
            .field("gates", &self.gates.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The run's own `read_result` tool, when it keeps cut results
/// ([`RunOptions::kept_result_bytes`]) and the executor has no tool of that name (which is then
/// offered as any other, and no result is kept).
pub(crate) fn read_result(exec: &Executor, options: &RunOptions) -> Option<ToolSpec> {
    if options.kept_result_bytes == 0 {
        return None;
    }
    if exec.spec(READ_RESULT).is_some() {
        tracing::warn!(
            "the executor has a tool named `{READ_RESULT}`: cut results are not kept, and the \
             run offers no tool of its own to read them (RunOptions::kept_result_bytes)"
        );
        return None;
    }
    Some(read_result_spec(options.max_result_bytes))
}
