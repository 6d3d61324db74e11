//! `ai-tool chat [--model API:MODEL] "question"`: the agent loop from the terminal, over the
//! tools the command line has (compiled-in, MCP servers' with `--mcp-stdio`/`--mcp-http`; a
//! catalog's tools are declared, not executable, so the model is not offered them). Features
//! `cli` and `agent`.
//!
//! The model's text goes to standard output as it comes; each call (as the model writes it)
//! and its result go to standard error. With `--json`, standard output carries one JSON
//! object per event instead. A call that needs approval is asked on the terminal (`y`, `n`,
//! or `e` to edit its arguments), and refused when standard input is not a terminal.
//!
//! Exit codes: `0` the model answered; `1` the run failed (the model's API, tools failing
//! step after step, a repeated call); `2` unusable input (the model, a flag); `3` a limit
//! ended the run before a whole answer (`--max-steps`, the model's output limit); `4` the
//! model declined; `5` `--max-time` passed.

use std::io::{BufRead, IsTerminal, Write};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use serde_json::{json, Value};

use super::{write_line, Failure};
use crate::agent::{
    Agent, AnthropicModel, Api, ApprovalVerdict, BedrockModel, ChatModel, Decision, GeminiModel,
    HttpModel, OpenAiChatModel, OpenAiResponsesModel, PendingApproval, RunError, RunEvent,
    RunOptions, RunResult, StopReason,
};
use crate::{CancellationToken, Elicitation, Elicited, Executor};

/// The model when neither `--model` nor `AI_TOOL_CHAT_MODEL` names one.
const DEFAULT_MODEL: &str = "openai:gpt-4o-mini";

/// How much of a result the terminal shows.
const SHOWN_RESULT_CHARS: usize = 300;

/// Which calls wait for a person's approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Ask {
    /// Calls of tools marked `requires_approval`.
    #[default]
    Required,
    /// Those, and calls of tools that may destroy data (marked `destructive`, or imported
    /// from an MCP server that does not say they are read-only or harmless).
    Destructive,
    /// Every call.
    All,
}

/// What `chat` is asked.
#[derive(clap::Args)]
pub(crate) struct ChatArgs {
    /// The question.
    pub question: String,
    /// The model, as API:MODEL: openai:gpt-4o-mini, openai-responses:, anthropic:,
    /// gemini:, vertex: (Gemini, or Claude by its name), bedrock: (default:
    /// AI_TOOL_CHAT_MODEL, else openai:gpt-4o-mini). Keys come from each API's variable
    /// (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, Google and AWS credentials).
    #[arg(long, value_name = "API:MODEL")]
    pub model: Option<String>,
    /// The API's base URL, such as a local OpenAI-compatible server's
    /// http://127.0.0.1:8080/v1 (default: OPENAI_BASE_URL, ANTHROPIC_BASE_URL or
    /// GEMINI_BASE_URL when set, else the API's own).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Instructions for the model (the system prompt).
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Print one JSON object per event on standard output instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Requests that may run tools (default 20); one more asks for the answer.
    #[arg(long, value_name = "N")]
    pub max_steps: Option<usize>,
    /// Seconds the whole run may take; past them it is cancelled (exit code 5).
    #[arg(long, value_name = "SECONDS", value_parser = super::parse_seconds)]
    pub max_time: Option<Duration>,
    /// Which calls are asked about on the terminal before they run: tools marked
    /// requires_approval (required), those and tools that may destroy data
    /// (destructive), or every call (all).
    #[arg(long, value_enum, default_value = "required")]
    pub ask: Ask,
}

/// The model `spec` names, `API:MODEL`.
fn model(spec: &str, base_url: Option<&str>) -> Result<Arc<dyn ChatModel>, Failure> {
    let apis = "openai, openai-responses, anthropic, gemini, vertex, bedrock";
    let Some((api, name)) = spec.split_once(':').filter(|(_, name)| !name.is_empty()) else {
        return Err(Failure::input(format!(
            "--model `{spec}`: expected API:MODEL, such as openai:gpt-4o-mini, with API one of {apis}"
        )));
    };
    let from_env = |variable: &str| std::env::var(variable).ok().filter(|v| !v.is_empty());
    let base = |variable: &str| base_url.map(str::to_owned).or_else(|| from_env(variable));
    let model: Arc<dyn ChatModel> = match api {
        "openai" => Arc::new(pointed(OpenAiChatModel::new(name), base("OPENAI_BASE_URL"))),
        "openai-responses" => Arc::new(pointed(
            OpenAiResponsesModel::new(name),
            base("OPENAI_BASE_URL"),
        )),
        "anthropic" => Arc::new(pointed(
            AnthropicModel::new(name),
            base("ANTHROPIC_BASE_URL"),
        )),
        "gemini" => Arc::new(pointed(GeminiModel::new(name), base("GEMINI_BASE_URL"))),
        // Claude on Vertex AI by its name, Gemini otherwise.
        "vertex" if name.starts_with("claude") => Arc::new(AnthropicModel::vertex_ai(name)),
        "vertex" => Arc::new(GeminiModel::vertex_ai(name)),
        "bedrock" => Arc::new(pointed(
            BedrockModel::new(name),
            base_url.map(str::to_owned),
        )),
        other => {
            return Err(Failure::input(format!(
                "--model `{spec}`: unknown API `{other}`; expected one of {apis}"
            )))
        }
    };
    Ok(model)
}

/// `model` sent to `base_url` when one is given.
fn pointed<A: Api>(model: HttpModel<A>, base_url: Option<String>) -> HttpModel<A> {
    match base_url {
        Some(url) => model.with_base_url(&url),
        None => model,
    }
}

/// `chat`: runs the loop on the question until it ends, asking for approvals on the way.
pub(crate) async fn chat(
    exec: Executor,
    args: ChatArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    let spec = args
        .model
        .clone()
        .or_else(|| {
            std::env::var("AI_TOOL_CHAT_MODEL")
                .ok()
                .filter(|m| !m.is_empty())
        })
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    let model = model(&spec, args.base_url.as_deref())?;
    let mut builder = Agent::builder(model).executor(exec);
    if let Some(system) = &args.system {
        builder = builder.instructions(system.clone());
    }
    builder = match args.ask {
        Ask::Required => builder,
        Ask::Destructive => builder.require_approval_for_destructive(),
        Ask::All => builder.require_approval(|_| true),
    };
    let agent = builder.build();
    let cancel = CancellationToken::new();
    let mut options = RunOptions::default();
    if let Some(steps) = args.max_steps {
        options = options.max_steps(steps);
    }
    options.cancellation = Some(cancel.clone());
    let timer = args.max_time.map(|limit| {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(limit).await;
            cancel.cancel();
        })
    });
    let mut shown = Shown::new(args.json, out, err);
    let mut ended = shown
        .events(agent.run_stream(args.question.clone(), &options))
        .await?;
    // Calls waiting for approval: asked, then the run goes on, until it ends otherwise.
    loop {
        let interruption = match &ended {
            Ok(result) => result.interruption.clone(),
            Err(_) => None,
        };
        let Some(interruption) = interruption else {
            break;
        };
        let decisions = shown.decide(&interruption.pending)?;
        ended = shown
            .events(agent.resume_stream(interruption.state, &decisions, &options))
            .await?;
    }
    if let Some(timer) = timer {
        timer.abort();
    }
    let timed_out = cancel.is_cancelled();
    shown.end(ended, timed_out, args.max_time)
}

/// Where a chat's events are shown: its text and its calls, or JSON lines.
struct Shown<'a> {
    json: bool,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    /// The call whose arguments are being shown as the model writes them, by index.
    writing: Option<usize>,
    /// The ids of the calls shown as they were written, not shown again when they start.
    written: std::collections::HashSet<String>,
    /// Whether standard output's last text ended its line.
    at_line_start: bool,
}

impl<'a> Shown<'a> {
    fn new(json: bool, out: &'a mut dyn Write, err: &'a mut dyn Write) -> Self {
        Shown {
            json,
            out,
            err,
            writing: None,
            written: std::collections::HashSet::new(),
            at_line_start: true,
        }
    }

    /// Shows a run's events until it finishes, and returns how it did.
    async fn events(
        &mut self,
        events: impl Stream<Item = RunEvent>,
    ) -> Result<Result<RunResult, RunError>, Failure> {
        let mut events = pin!(events);
        while let Some(event) = events.next().await {
            if let RunEvent::Finished(result) = event {
                return Ok(*result);
            }
            self.show(event)?;
        }
        Err(Failure {
            code: 1,
            message: "the run ended without a result".into(),
        })
    }

    fn show(&mut self, event: RunEvent) -> Result<(), Failure> {
        if self.json {
            return match event_json(&event) {
                Some(line) => write_line(self.out, &line.to_string()),
                None => Ok(()),
            };
        }
        match event {
            RunEvent::TextDelta { text, .. } => {
                self.end_call_line();
                write!(self.out, "{text}")
                    .and_then(|()| self.out.flush())
                    .map_err(|e| Failure::input(format!("cannot write the answer: {e}")))?;
                self.at_line_start = text.ends_with('\n');
            }
            RunEvent::ToolCallDelta { delta, .. } => {
                if self.writing != Some(delta.index) {
                    self.end_call_line();
                    self.end_text_line();
                    let name = delta.name.as_deref().unwrap_or("?");
                    let _ = write!(self.err, "-> {name} ");
                    self.writing = Some(delta.index);
                }
                if let Some(id) = &delta.id {
                    self.written.insert(id.clone());
                }
                let _ = write!(self.err, "{}", delta.arguments);
                let _ = self.err.flush();
            }
            RunEvent::ToolCallStarted { call, .. } => {
                // A call streamed has been shown as it was written.
                self.end_call_line();
                let written = call.id.as_ref().is_some_and(|id| self.written.remove(id));
                if !written {
                    self.end_text_line();
                    let _ = writeln!(self.err, "-> {} {}", call.name, call.arguments);
                }
            }
            RunEvent::ToolResult { record, .. } => {
                self.end_call_line();
                self.end_text_line();
                let (mark, text) = match &record.result {
                    Ok(output) if !output.is_error => ("<-", output.to_text()),
                    Ok(output) => ("<- error:", output.to_text()),
                    Err(error) => ("<- error:", error.to_string()),
                };
                let _ = writeln!(self.err, "{mark} {} {}", record.call.name, shortened(&text));
            }
            RunEvent::StepFinished(_) => self.end_call_line(),
            _ => {}
        }
        Ok(())
    }

    /// Ends the line of a call shown as it was written.
    fn end_call_line(&mut self) {
        if self.writing.take().is_some() {
            let _ = writeln!(self.err);
        }
    }

    /// Ends the model's text on standard output, before other lines go to the terminal.
    fn end_text_line(&mut self) {
        if !self.at_line_start {
            let _ = writeln!(self.out);
            let _ = self.out.flush();
            self.at_line_start = true;
        }
    }

    /// A decision for each waiting call: asked on the terminal, or a refusal when standard
    /// input is not one.
    fn decide(&mut self, pending: &[PendingApproval]) -> Result<Vec<Decision>, Failure> {
        self.end_call_line();
        self.end_text_line();
        let stdin = std::io::stdin();
        let terminal = stdin.is_terminal();
        let mut input = stdin.lock();
        let mut decisions = Vec::with_capacity(pending.len());
        for waiting in pending {
            let call = &waiting.call;
            if self.json {
                let line = match &waiting.question {
                    Some(asked) => json!({
                        "event": "question", "id": call.id, "name": call.name,
                        "arguments": call.arguments, "message": asked.question.message,
                        "schema": asked.question.schema,
                    }),
                    None => {
                        json!({ "event": "approval", "id": call.id, "name": call.name, "arguments": call.arguments })
                    }
                };
                write_line(self.out, &line.to_string())?;
            }
            let decision = if let (true, Some(asked)) = (terminal, &waiting.question) {
                self.ask_question(waiting, &asked.question, &mut input)
            } else if terminal {
                self.ask(waiting, &mut input)
            } else if waiting.question.is_some() {
                let _ = writeln!(
                    self.err,
                    "refused: {} asks the user a question, and standard input is not a terminal \
                     to ask on",
                    call.name
                );
                waiting.reject(
                    "The user could not be asked the tool's question, so the call was not run.",
                )
            } else {
                let _ = writeln!(
                    self.err,
                    "refused: {} needs approval, and standard input is not a terminal to ask on",
                    call.name
                );
                waiting.reject("The user could not be asked for approval, so the call was not run.")
            };
            if self.json {
                let line = json!({ "event": "decision", "id": call.id, "verdict": verdict_name(&decision) });
                write_line(self.out, &line.to_string())?;
            }
            decisions.push(decision);
        }
        Ok(decisions)
    }

    /// Asks about one call until the answer is `y`, `n` or `e` with arguments that are a
    /// JSON object; the end of input refuses.
    fn ask(&mut self, waiting: &PendingApproval, input: &mut dyn BufRead) -> Decision {
        let call = &waiting.call;
        loop {
            let _ = write!(
                self.err,
                "approve {} {}? [y]es, [n]o, [e]dit the arguments: ",
                call.name, call.arguments
            );
            let _ = self.err.flush();
            let Some(answer) = read_line(input) else {
                return waiting.reject("The user did not answer, so the call was not run.");
            };
            match answer.trim() {
                "y" | "yes" => return waiting.approve(),
                "n" | "no" => return waiting.reject("The user refused this call."),
                "e" | "edit" => {
                    let _ = write!(self.err, "arguments (a JSON object): ");
                    let _ = self.err.flush();
                    let Some(text) = read_line(input) else {
                        return waiting.reject("The user did not answer, so the call was not run.");
                    };
                    match serde_json::from_str::<Value>(text.trim()) {
                        Ok(arguments @ Value::Object(_)) => return waiting.approve_with(arguments),
                        Ok(_) => {
                            let _ = writeln!(self.err, "not a JSON object");
                        }
                        Err(e) => {
                            let _ = writeln!(self.err, "not JSON: {e}");
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Asks a tool's question until the answer is a JSON object its schema takes, `d` to
    /// decline or `c` to cancel; the end of input refuses the call.
    fn ask_question(
        &mut self,
        waiting: &PendingApproval,
        question: &Elicitation,
        input: &mut dyn BufRead,
    ) -> Decision {
        loop {
            let _ = write!(
                self.err,
                "{} {} asks: {}\nanswer with a JSON object for {}, [d]ecline or [c]ancel \
                 (answering runs the call): ",
                waiting.call.name, waiting.call.arguments, question.message, question.schema
            );
            let _ = self.err.flush();
            let Some(answer) = read_line(input) else {
                return waiting.reject("The user did not answer, so the call was not run.");
            };
            let answer = match answer.trim() {
                "d" | "decline" => Elicited::Declined,
                "c" | "cancel" => Elicited::Cancelled,
                text => match serde_json::from_str::<Value>(text) {
                    Ok(content @ Value::Object(_)) => Elicited::Accepted(content),
                    Ok(_) => {
                        let _ = writeln!(self.err, "not a JSON object");
                        continue;
                    }
                    Err(e) => {
                        let _ = writeln!(self.err, "not JSON: {e}");
                        continue;
                    }
                },
            };
            match question.check(&answer) {
                Ok(()) => return waiting.reply(answer),
                Err(why) => {
                    let _ = writeln!(self.err, "{why}");
                }
            }
        }
    }

    /// The run's end: the rest of the answer, and the exit code it says.
    fn end(
        &mut self,
        ended: Result<RunResult, RunError>,
        timed_out: bool,
        max_time: Option<Duration>,
    ) -> Result<(), Failure> {
        self.end_call_line();
        self.end_text_line();
        let result = match ended {
            Ok(result) => result,
            Err(error) => {
                if self.json {
                    let line = json!({ "event": "failed", "error": error.to_string() });
                    write_line(self.out, &line.to_string())?;
                }
                if timed_out {
                    let seconds = max_time.map_or(0, |t| t.as_secs());
                    return Err(Failure {
                        code: 5,
                        message: format!(
                            "the run passed --max-time ({seconds} s) and was cancelled"
                        ),
                    });
                }
                // The error says its failure; the failure's causes follow.
                let mut message = error.to_string();
                let failure = std::error::Error::source(&error);
                let mut cause = failure.and_then(std::error::Error::source);
                while let Some(next) = cause {
                    message.push_str(&format!(": {next}"));
                    cause = next.source();
                }
                return Err(Failure { code: 1, message });
            }
        };
        if self.json {
            let line = json!({
                "event": "finished",
                "stop": stop_name(&result.stop),
                "text": result.text,
                "usage": result.usage,
            });
            write_line(self.out, &line.to_string())?;
        }
        match &result.stop {
            StopReason::MaxSteps { steps } => Err(Failure {
                code: 3,
                message: format!("the run stopped at --max-steps ({steps})"),
            }),
            StopReason::ToolCallLimit { .. } | StopReason::TokenBudget { .. } => Err(Failure {
                code: 3,
                message: format!("the run stopped at a limit: {}", stop_name(&result.stop)),
            }),
            StopReason::Truncated { reason } => Err(Failure {
                code: 3,
                message: format!("the answer was cut at the model's output limit ({reason})"),
            }),
            StopReason::Declined { reason } => Err(Failure {
                code: 4,
                message: format!("the model declined to answer ({reason})"),
            }),
            _ => Ok(()),
        }
    }
}

/// A line of input without its line end; `None` at the end of input.
fn read_line(input: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// A result's text on one line, at most [`SHOWN_RESULT_CHARS`] characters of it.
fn shortened(text: &str) -> String {
    let one_line = text.replace('\n', " ");
    let count = one_line.chars().count();
    if count <= SHOWN_RESULT_CHARS {
        return one_line;
    }
    let kept: String = one_line.chars().take(SHOWN_RESULT_CHARS).collect();
    format!("{kept}... ({count} characters)")
}

/// An event as a JSON line of `--json`; `None` for the events it leaves out.
fn event_json(event: &RunEvent) -> Option<Value> {
    Some(match event {
        RunEvent::TextDelta { step, text } => {
            json!({ "event": "text", "step": step, "text": text })
        }
        RunEvent::ReasoningDelta { step, text } => {
            json!({ "event": "reasoning", "step": step, "text": text })
        }
        RunEvent::ToolCallDelta { step, delta } => json!({
            "event": "call_delta", "step": step, "index": delta.index, "id": delta.id,
            "name": delta.name, "arguments": delta.arguments,
        }),
        RunEvent::ToolCallStarted { step, call } => json!({
            "event": "call", "step": step, "id": call.id, "name": call.name,
            "arguments": call.arguments,
        }),
        RunEvent::ToolResult { step, record } => {
            let (is_error, text) = match &record.result {
                Ok(output) => (output.is_error, output.to_text()),
                Err(error) => (true, error.to_model_text()),
            };
            json!({
                "event": "result", "step": step, "id": record.call.id, "name": record.call.name,
                "is_error": is_error, "text": text,
            })
        }
        RunEvent::Usage { step, usage } => {
            json!({ "event": "usage", "step": step, "usage": usage })
        }
        _ => return None,
    })
}

fn stop_name(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::Finished => "finished",
        StopReason::MaxSteps { .. } => "max_steps",
        StopReason::ToolCalled { .. } => "tool_called",
        StopReason::TokenBudget { .. } => "token_budget",
        StopReason::Predicate => "predicate",
        StopReason::ToolCallLimit { .. } => "tool_call_limit",
        StopReason::Terminated { .. } => "terminated",
        StopReason::Interrupted => "interrupted",
        StopReason::Truncated { .. } => "truncated",
        StopReason::Declined { .. } => "declined",
        _ => "other",
    }
}

fn verdict_name(decision: &Decision) -> &'static str {
    match decision.verdict {
        ApprovalVerdict::Approve | ApprovalVerdict::ApproveForSession => "approved",
        ApprovalVerdict::ApproveWith(_) => "approved_with_edits",
        ApprovalVerdict::Reject(_) => "refused",
        ApprovalVerdict::Reply(_) => "replied",
        _ => "answered",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_named_api_colon_model_and_a_bad_name_says_what_is_expected() {
        assert!(model("openai:gpt-4o-mini", Some("http://127.0.0.1:1/v1")).is_ok());
        assert!(model("bedrock:anthropic.claude-3-haiku", None).is_ok());
        for bad in ["gpt-4o", "openai:", "mistral:large"] {
            let Err(failure) = model(bad, None) else {
                panic!("{bad} accepted")
            };
            assert_eq!(failure.code, 2);
            assert!(
                failure.message.contains("openai, openai-responses"),
                "{}",
                failure.message
            );
        }
    }

    #[test]
    fn a_long_result_is_shown_on_one_line_and_shortened() {
        assert_eq!(shortened("a\nb"), "a b");
        let long = "x".repeat(1_000);
        let shown = shortened(&long);
        assert!(shown.ends_with("... (1000 characters)") && shown.len() < 400);
    }
}
