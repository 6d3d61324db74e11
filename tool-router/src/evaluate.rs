//! One route: score the candidates (concurrently, with a cap and a time limit each, from the
//! cache when it can), then choose by the selection rules, validating the winner's parameters
//! with one retry.

use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::answer::read_answer;
use crate::cache::Cached;
use crate::prompt::RouteRequest;
use crate::route::{CandidateScore, NoMatch, Route, Routed, ScoreSource};
use crate::Router;
use tool_model::message::{Message, Usage};
use tool_model::{ModelError, ModelRequest};

/// What the scoring requests are told, before the tool's prompt.
const INSTRUCTIONS: &str = "You decide how well one tool fits a user's query. Answer with one \
JSON object and nothing else: `score`, an integer from 0 to 100, and the other fields asked \
for, taken from the query (leave out what the query does not say).";

/// One candidate during a route.
struct Slot {
    tool: usize,
    prompt: String,
    score: u8,
    params: Map<String, Value>,
    raw: Option<String>,
    error: Option<String>,
    source: ScoreSource,
    /// Whether the selection already tried it.
    tried: bool,
}

/// One evaluation's result.
struct Evaluation {
    score: u8,
    params: Map<String, Value>,
    raw: Option<String>,
    error: Option<String>,
    usage: Usage,
}

impl Router {
    /// Routes `request`, its prompts filled, among the tools offered on `site`.
    pub(super) async fn route_filled(&self, request: &RouteRequest, site: Option<&str>) -> Route {
        let mut usage = Usage::default();
        let positions = self.candidate_positions(&request.schema_type, site);
        let mut slots: Vec<Slot> = positions
            .iter()
            .map(|&tool| Slot {
                tool,
                prompt: request.fill(&self.tools[tool].tool.prompt),
                score: 0,
                params: Map::new(),
                raw: None,
                error: None,
                source: ScoreSource::Model,
                tried: false,
            })
            .collect();
        #[cfg(feature = "retrieval")]
        if let Some(prefilter) = &self.prefilter {
            // Ranked on what the prompts are filled with: "and with fish?" shares no word with
            // the tool the conversation is about; its decontextualized form does.
            let query = request
                .decontextualized_query
                .as_deref()
                .unwrap_or(&request.query);
            let kept = prefilter.keep(query, &positions).await;
            for slot in &mut slots {
                if !kept.contains(&slot.tool) {
                    slot.source = ScoreSource::Prefiltered;
                }
            }
        }
        let live: Vec<usize> = (0..slots.len())
            .filter(|&i| slots[i].source != ScoreSource::Prefiltered)
            .collect();
        // The type's only tool needs no score; one the prefilter kept out of several is a
        // guess of the retriever (or of file order, when nothing ranked) and is scored
        // against the threshold like any other.
        match live[..] {
            [lone] if slots.len() == 1 => self.lone_candidate(&mut slots[lone], &mut usage).await,
            _ => self.score_all(&mut slots, &live, &mut usage).await,
        }
        self.select(slots, usage).await
    }

    /// The type's only candidate: chosen without scoring; asked for its parameters only when
    /// its answer has some. When that request fails (no answer), it scores 0 and is not
    /// chosen: its parameters are unknown.
    async fn lone_candidate(&self, slot: &mut Slot, usage: &mut Usage) {
        slot.source = ScoreSource::LoneCandidate;
        slot.score = 100;
        if self.tools[slot.tool].asks_for_parameters {
            let evaluation = self.evaluate(slot.tool, &slot.prompt, None).await;
            *usage += evaluation.usage;
            if evaluation.raw.is_none() {
                slot.score = 0;
            }
            slot.params = evaluation.params;
            slot.raw = evaluation.raw;
            slot.error = evaluation.error;
        }
    }

    /// Scores the live slots: from the cache, then the rest concurrently.
    async fn score_all(&self, slots: &mut [Slot], live: &[usize], usage: &mut Usage) {
        let mut to_ask: Vec<usize> = Vec::new();
        let mut stopped = false;
        for &i in live {
            let cached = self
                .cache
                .as_ref()
                .and_then(|c| c.get(slots[i].tool, &slots[i].prompt));
            match cached {
                Some(cached) if !stopped => {
                    let slot = &mut slots[i];
                    slot.score = cached.score;
                    slot.params = cached.params;
                    slot.raw = Some(cached.raw);
                    slot.source = ScoreSource::Cache;
                    stopped = self
                        .settings
                        .early_stop
                        .is_some_and(|mark| slot.score >= mark);
                }
                _ => to_ask.push(i),
            }
        }
        if stopped {
            for i in to_ask {
                slots[i].source = ScoreSource::EarlyStop;
            }
            return;
        }
        let asks: Vec<(usize, usize, String)> = to_ask
            .iter()
            .map(|&i| (i, slots[i].tool, slots[i].prompt.clone()))
            .collect();
        let jobs = asks
            .into_iter()
            .map(|(i, tool, prompt)| async move { (i, self.evaluate(tool, &prompt, None).await) });
        let mut running =
            futures_util::stream::iter(jobs).buffer_unordered(self.settings.max_concurrency);
        let mut done: Vec<usize> = Vec::new();
        while let Some((i, evaluation)) = running.next().await {
            done.push(i);
            *usage += evaluation.usage;
            let slot = &mut slots[i];
            if evaluation.error.is_none() {
                if let (Some(cache), Some(raw)) = (&self.cache, &evaluation.raw) {
                    cache.insert(
                        slot.tool,
                        slot.prompt.clone(),
                        Cached {
                            score: evaluation.score,
                            params: evaluation.params.clone(),
                            raw: raw.clone(),
                        },
                    );
                }
            }
            tracing::debug!(
                tool = %self.tools[slot.tool].tool.name,
                score = evaluation.score,
                error = evaluation.error.as_deref().unwrap_or_default(),
                "evaluated"
            );
            slot.score = evaluation.score;
            slot.params = evaluation.params;
            slot.raw = evaluation.raw;
            slot.error = evaluation.error;
            let reached = self
                .settings
                .early_stop
                .is_some_and(|mark| slot.error.is_none() && slot.score >= mark);
            if reached {
                break;
            }
        }
        // Dropping the stream cancels the evaluations still running.
        drop(running);
        for i in to_ask.into_iter().filter(|i| !done.contains(i)) {
            slots[i].source = ScoreSource::EarlyStop;
        }
    }

    /// Asks the model to score one tool; with `retry`, the previous answer and what was wrong
    /// with its parameters.
    async fn evaluate(&self, tool: usize, prompt: &str, retry: Option<(&str, &str)>) -> Evaluation {
        let prepared = &self.tools[tool];
        let mut messages = vec![Message::user(prompt)];
        if let Some((previous, problems)) = retry {
            messages.push(Message::assistant(previous));
            messages.push(Message::user(format!(
                "Those parameters cannot be used:\n{problems}\nAnswer again, with the same score and corrected parameters."
            )));
        }
        let fields = prepared
            .format
            .schema
            .get("properties")
            .map(Value::to_string)
            .unwrap_or_default();
        let mut request = ModelRequest::new(messages);
        request.instructions = Some(format!("{INSTRUCTIONS}\nThe fields: {fields}"));
        request.response_format = Some(prepared.format.clone());
        request.generation.temperature = Some(0.0);
        let limit = self.settings.evaluation_timeout;
        let answer = match tool_model::timer::timeout(limit, self.model.respond(&request)) {
            Ok(timed) => timed.await,
            Err(why) => Ok(Err(ModelError::Setup(why))),
        };
        let fail = |error: String| Evaluation {
            score: 0,
            params: Map::new(),
            raw: None,
            error: Some(error),
            usage: Usage::default(),
        };
        match answer {
            Err(_) => fail(format!("no answer within {} ms", limit.as_millis())),
            Ok(Err(error)) => fail(format!("the model failed: {error}")),
            Ok(Ok(response)) => {
                let mut usage = response.usage;
                usage.requests = usage.requests.max(1);
                let raw = response.text.unwrap_or_default();
                let read = read_answer(&raw);
                Evaluation {
                    score: read.score,
                    params: read.params,
                    raw: Some(raw),
                    error: read.problem,
                    usage,
                }
            }
        }
    }

    /// The selection rules: the best score at or above the threshold (ties by file
    /// order) whose parameters are valid, with one retry each; then the fallback; else no match.
    async fn select(&self, mut slots: Vec<Slot>, mut usage: Usage) -> Route {
        let threshold = self.settings.threshold;
        let mut order: Vec<usize> = (0..slots.len())
            .filter(|&i| {
                let slot = &slots[i];
                match slot.source {
                    ScoreSource::LoneCandidate => slot.score > 0,
                    // A failed evaluation scores 0, which a threshold of 0 would let win.
                    ScoreSource::Model | ScoreSource::Cache => {
                        slot.error.is_none() && slot.score >= threshold
                    }
                    ScoreSource::EarlyStop | ScoreSource::Prefiltered => false,
                }
            })
            .collect();
        // Stable: equal scores keep file order.
        order.sort_by_key(|&i| std::cmp::Reverse(slots[i].score));
        let fallback = self.settings.fallback.as_deref().and_then(|name| {
            (0..slots.len()).find(|&i| self.tools[slots[i].tool].tool.name == name)
        });
        let tries = order
            .into_iter()
            .map(|i| (i, false))
            .chain(fallback.map(|i| (i, true)));
        for (i, is_fallback) in tries {
            if slots[i].tried {
                continue;
            }
            slots[i].tried = true;
            if let Some(params) = self.accept(&mut slots[i], &mut usage).await {
                let slot = &slots[i];
                let tool = &self.tools[slot.tool].tool;
                return Route::Tool(Routed {
                    tool: tool.name.clone(),
                    schema_type: tool.schema_type.clone(),
                    handler: tool.handler_name().to_owned(),
                    score: slot.score,
                    params,
                    fallback: is_fallback,
                    candidates: self.scores(&slots),
                    usage,
                });
            }
        }
        Route::NoMatch(NoMatch {
            candidates: self.scores(&slots),
            usage,
        })
    }

    /// The handler's arguments from the slot's parameters, when they are valid (after one
    /// retry with the errors); `None` with the error recorded when they stay invalid.
    async fn accept(&self, slot: &mut Slot, usage: &mut Usage) -> Option<Map<String, Value>> {
        let Some(executor) = &self.executor else {
            return Some(self.arguments(slot.tool, &slot.params));
        };
        let handler = self.tools[slot.tool].tool.handler_name();
        let arguments = self.arguments(slot.tool, &slot.params);
        let problems = match executor.validate(handler, Value::Object(arguments.clone())) {
            Ok(()) => return Some(arguments),
            Err(error) => error.to_model_text(),
        };
        let previous = slot
            .raw
            .clone()
            .unwrap_or_else(|| Value::Object(slot.params.clone()).to_string());
        let retry = self
            .evaluate(slot.tool, &slot.prompt, Some((&previous, &problems)))
            .await;
        *usage += retry.usage;
        if retry.error.is_none() {
            let arguments = self.arguments(slot.tool, &retry.params);
            match executor.validate(handler, Value::Object(arguments.clone())) {
                Ok(()) => {
                    slot.params = retry.params;
                    self.recache(slot, retry.raw);
                    return Some(arguments);
                }
                Err(error) => {
                    slot.error = Some(format!(
                        "invalid parameters after one retry: {}",
                        one_line(&error.to_model_text())
                    ));
                    return None;
                }
            }
        }
        slot.error = Some(format!(
            "invalid parameters ({}), and the retry failed: {}",
            one_line(&problems),
            retry.error.unwrap_or_default()
        ));
        None
    }

    /// Keeps a slot's corrected parameters in the cache, in place of those the handler
    /// refused: a cached answer is used as it is, so it must be the one that worked.
    /// A lone candidate's score is not the model's: it is not cached.
    fn recache(&self, slot: &Slot, raw: Option<String>) {
        let (Some(cache), Some(raw)) = (&self.cache, raw) else {
            return;
        };
        if slot.source == ScoreSource::LoneCandidate {
            return;
        }
        let cached = Cached {
            score: slot.score,
            params: slot.params.clone(),
            raw,
        };
        cache.insert(slot.tool, slot.prompt.clone(), cached);
    }

    /// The parameters the handler takes: those its schema lists (when it lists any).
    fn arguments(&self, tool: usize, params: &Map<String, Value>) -> Map<String, Value> {
        match &self.tools[tool].keep {
            Some(names) => params
                .iter()
                .filter(|(name, _)| names.contains(name))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            None => params.clone(),
        }
    }

    fn scores(&self, slots: &[Slot]) -> Vec<CandidateScore> {
        slots
            .iter()
            .map(|slot| {
                let tool = &self.tools[slot.tool].tool;
                CandidateScore {
                    tool: tool.name.clone(),
                    schema_type: tool.schema_type.clone(),
                    score: slot.score,
                    params: slot.params.clone(),
                    error: slot.error.clone(),
                    source: slot.source,
                    answered: slot.raw.is_some(),
                }
            })
            .collect()
    }
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
