//! The router: selection rules, tolerant parsing, early stop, retries, prefilter and cache,
//! against a scripted scorer that answers per tool.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tool_core::ToolOutput;
use tool_model::{ChatModel, ModelError, ModelFuture, ModelRequest, ModelResponse, Usage};
use tool_router::{
    DeclaredTool, Route, Router, RouterBuildError, RouterRunError, ScoreSource, ToolMethod,
    ToolsFile, ToolsFileFormat,
};
use tool_runtime::{DynamicTool, Executor};

/// One scripted answer of the scorer.
#[derive(Clone)]
enum Answer {
    Text(String),
    Late(Duration, String),
    Fail,
}

fn score(score: u8) -> Answer {
    Answer::Text(json!({ "score": score }).to_string())
}

fn answer(value: Value) -> Answer {
    Answer::Text(value.to_string())
}

/// A model that answers each tool's evaluation from that tool's own queue (the tool is known
/// by the response format's name, `TOOL_answer`), and records every request.
#[derive(Default)]
struct Scorer {
    answers: Mutex<HashMap<String, Vec<Answer>>>,
    requests: Mutex<Vec<ModelRequest>>,
    count: AtomicUsize,
}

impl Scorer {
    fn new() -> Arc<Self> {
        Arc::new(Scorer::default())
    }

    fn on(self: &Arc<Self>, tool: &str, answers: impl IntoIterator<Item = Answer>) -> Arc<Self> {
        self.answers
            .lock()
            .unwrap()
            .entry(tool.to_owned())
            .or_default()
            .extend(answers);
        Arc::clone(self)
    }

    fn asked(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    fn requests_for(&self, tool: &str) -> Vec<ModelRequest> {
        let name = format!("{tool}_answer");
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.response_format.as_ref().is_some_and(|f| f.name == name))
            .cloned()
            .collect()
    }
}

impl ChatModel for Scorer {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.requests.lock().unwrap().push(request.clone());
        let tool = request
            .response_format
            .as_ref()
            .map(|f| f.name.trim_end_matches("_answer").to_owned())
            .unwrap_or_default();
        let next = {
            let mut answers = self.answers.lock().unwrap();
            let queue = answers.entry(tool.clone()).or_default();
            // The last answer repeats.
            if queue.len() > 1 {
                Some(queue.remove(0))
            } else {
                queue.first().cloned()
            }
        };
        Box::pin(async move {
            let usage = Usage {
                requests: 1,
                input_tokens: 10,
                output_tokens: 2,
                ..Usage::default()
            };
            match next {
                Some(Answer::Text(text)) => Ok(ModelResponse::answer(text).with_usage(usage)),
                Some(Answer::Late(delay, text)) => {
                    tokio::time::sleep(delay).await;
                    Ok(ModelResponse::answer(text).with_usage(usage))
                }
                Some(Answer::Fail) => Err(ModelError::Other("overloaded".into())),
                None => Err(ModelError::Other(format!(
                    "no answer scripted for `{tool}`"
                ))),
            }
        })
    }
}

fn tool(name: &str, schema_type: &str) -> DeclaredTool {
    DeclaredTool::new(
        name,
        schema_type,
        format!("Is `{name}` right for: {{request.query}} ({{request.type}})?"),
    )
}

fn tools_file(tools: impl IntoIterator<Item = DeclaredTool>) -> ToolsFile {
    ToolsFile {
        tools: tools.into_iter().collect(),
        ..ToolsFile::default()
    }
}

/// A handler that echoes its arguments, with this schema.
fn echo(name: &str, parameters: Value) -> DynamicTool {
    let tool_name = name.to_owned();
    DynamicTool::new(name, "Echoes its arguments", parameters, move |args, _| {
        let tool_name = tool_name.clone();
        async move { Ok(ToolOutput::text(format!("{tool_name} {args}"))) }
    })
}

fn open() -> Value {
    json!({ "type": "object" })
}

fn recipe_details_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "item_name": { "type": "string", "minLength": 1 },
            "servings": { "type": "integer", "minimum": 1 }
        },
        "required": ["item_name"],
        "additionalProperties": false
    })
}

fn executor(tools: impl IntoIterator<Item = DynamicTool>) -> Executor {
    Executor::builder()
        .registered_tools(false)
        .tools(tools)
        .build()
        .unwrap()
}

fn routed_name(route: &Route) -> Option<&str> {
    route.routed().map(|r| r.tool.as_str())
}

fn score_of(route: &Route, tool: &str) -> (u8, ScoreSource) {
    let candidate = route
        .candidates()
        .iter()
        .find(|c| c.tool == tool)
        .unwrap_or_else(|| panic!("no candidate `{tool}` in {:?}", route.candidates()));
    (candidate.score, candidate.source)
}

#[tokio::test]
async fn the_best_score_at_or_above_the_threshold_wins() {
    let scorer = Scorer::new()
        .on("search", [score(60)])
        .on("details", [score(80)])
        .on("compare", [score(75)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("search", "Thing"),
            tool("details", "Thing"),
            tool("compare", "Thing"),
        ]))
        .build()
        .unwrap();
    let route = router.route("what is in a carbonara?", "Recipe").await;
    let routed = route.routed().expect("a tool");
    assert_eq!(
        (routed.tool.as_str(), routed.score, routed.fallback),
        ("details", 80, false)
    );
    assert_eq!(route.candidates().len(), 3);
    assert_eq!(route.usage().requests, 3);
    assert_eq!(route.usage().input_tokens, 30);

    let strict = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("search", "Thing"),
            tool("details", "Thing"),
        ]))
        .threshold(85)
        .build()
        .unwrap();
    let route = strict.route("what is in a carbonara?", "Recipe").await;
    assert!(matches!(route, Route::NoMatch(_)), "{route:?}");
    assert_eq!(score_of(&route, "details"), (80, ScoreSource::Model));
}

#[tokio::test]
async fn below_the_threshold_the_fallback_takes_the_query() {
    let scorer = Scorer::new()
        .on(
            "search",
            [answer(json!({ "score": 40, "search_query": "pasta" }))],
        )
        .on("details", [score(30)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("search", "Thing"),
            tool("details", "Thing"),
        ]))
        .fallback("search")
        .build()
        .unwrap();
    let route = router.route("pasta", "Thing").await;
    let routed = route.routed().expect("the fallback");
    assert_eq!(
        (routed.tool.as_str(), routed.fallback, routed.score),
        ("search", true, 40)
    );
    assert_eq!(routed.params["search_query"], "pasta");

    let err = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([tool("details", "Thing")]))
        .fallback("search")
        .build()
        .unwrap_err();
    assert_eq!(err, RouterBuildError::UnknownFallback("search".into()));
}

#[tokio::test]
async fn a_subtype_tool_overrides_the_parents_tool_of_the_same_name() {
    let mut recipe_search = tool("search", "Recipe");
    recipe_search.prompt = "Recipe search for {request.query}?".into();
    let scorer = Scorer::new()
        .on("search", [score(90)])
        .on("details", [score(10)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("search", "Item"),
            tool("details", "Thing"),
            recipe_search,
            tool("showtimes", "Movie"),
        ]))
        .build()
        .unwrap();
    let names = |t: &str| -> Vec<(String, String)> {
        router
            .candidates(t)
            .iter()
            .map(|c| (c.name.clone(), c.schema_type.clone()))
            .collect()
    };
    assert_eq!(
        names("Recipe"),
        [
            ("details".into(), "Thing".into()),
            ("search".into(), "Recipe".into())
        ]
    );
    assert_eq!(names("Movie").len(), 3);
    assert_eq!(
        names("Spaceship"),
        [
            ("search".into(), "Item".into()),
            ("details".into(), "Thing".into())
        ]
    );

    let route = router.route("tiramisu", "Recipe").await;
    assert_eq!(route.routed().unwrap().schema_type, "Recipe");
    let asked = scorer.requests_for("search");
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].messages,
        vec![tool_model::Message::user("Recipe search for tiramisu?")]
    );
}

#[tokio::test]
async fn ties_go_to_the_tool_declared_first() {
    let scorer = Scorer::new()
        .on("a", [score(50)])
        .on("b", [score(90)])
        .on("c", [score(90)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("a", "Thing"),
            tool("b", "Thing"),
            tool("c", "Thing"),
        ]))
        .build()
        .unwrap();
    assert_eq!(routed_name(&router.route("q", "Thing").await), Some("b"));
    let reversed = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("c", "Thing"),
            tool("b", "Thing"),
            tool("a", "Thing"),
        ]))
        .build()
        .unwrap();
    assert_eq!(routed_name(&reversed.route("q", "Thing").await), Some("c"));
}

#[tokio::test]
async fn answers_are_read_tolerantly_and_a_failed_evaluation_never_fails_the_route() {
    let scorer = Scorer::new()
        .on(
            "fenced",
            [Answer::Text(
                "```json\n{\"score\": \"85\", \"q\": \"x\"}\n```".into(),
            )],
        )
        .on(
            "chatty",
            [Answer::Text("Score: {\"score\": 88.0} as asked".into())],
        )
        .on("high", [score(250)])
        .on("garbage", [Answer::Text("I am not sure.".into())])
        .on("noscore", [answer(json!({ "q": "x" }))])
        .on("down", [Answer::Fail]);
    let names = ["fenced", "chatty", "high", "garbage", "noscore", "down"];
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file(names.map(|n| tool(n, "Thing"))))
        .build()
        .unwrap();
    let route = router.route("q", "Thing").await;
    assert_eq!(routed_name(&route), Some("high"));
    assert_eq!(score_of(&route, "high").0, 100);
    assert_eq!(score_of(&route, "fenced").0, 85);
    assert_eq!(score_of(&route, "chatty").0, 88);
    let error = |name: &str| {
        route
            .candidates()
            .iter()
            .find(|c| c.tool == name)
            .and_then(|c| c.error.clone())
            .unwrap_or_default()
    };
    assert_eq!(score_of(&route, "garbage").0, 0);
    assert!(
        error("garbage").starts_with("no JSON object in the answer"),
        "{}",
        error("garbage")
    );
    assert_eq!(error("noscore"), "the answer has no score");
    assert_eq!(error("down"), "the model failed: overloaded");
    assert_eq!(error("fenced"), "");
}

#[tokio::test(start_paused = true)]
async fn early_stop_takes_the_first_tool_to_reach_the_mark() {
    let scorer = || {
        Scorer::new()
            .on(
                "slow_best",
                [Answer::Late(
                    Duration::from_secs(5),
                    json!({ "score": 99 }).to_string(),
                )],
            )
            .on(
                "fast_good",
                [Answer::Late(
                    Duration::from_millis(10),
                    json!({ "score": 92 }).to_string(),
                )],
            )
    };
    let tools = || tools_file([tool("slow_best", "Thing"), tool("fast_good", "Thing")]);
    let best_of_all = Router::builder(scorer())
        .tools_file(tools())
        .build()
        .unwrap();
    assert_eq!(
        routed_name(&best_of_all.route("q", "Thing").await),
        Some("slow_best")
    );

    let early = Router::builder(scorer())
        .tools_file(tools())
        .early_stop(90)
        .build()
        .unwrap();
    let route = early.route("q", "Thing").await;
    assert_eq!(routed_name(&route), Some("fast_good"));
    assert_eq!(score_of(&route, "slow_best"), (0, ScoreSource::EarlyStop));
}

#[tokio::test(start_paused = true)]
async fn an_evaluation_past_its_time_limit_scores_zero() {
    let scorer = Scorer::new()
        .on(
            "slow",
            [Answer::Late(
                Duration::from_secs(60),
                json!({ "score": 99 }).to_string(),
            )],
        )
        .on("quick", [score(80)]);
    let router = Router::builder(scorer)
        .tools_file(tools_file([tool("slow", "Thing"), tool("quick", "Thing")]))
        .evaluation_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let route = router.route("q", "Thing").await;
    assert_eq!(routed_name(&route), Some("quick"));
    let slow = route
        .candidates()
        .iter()
        .find(|c| c.tool == "slow")
        .unwrap();
    assert_eq!(slow.score, 0);
    assert_eq!(slow.error.as_deref(), Some("no answer within 2000 ms"));
}

#[tokio::test(start_paused = true)]
async fn evaluations_run_concurrently_up_to_the_cap() {
    let late = |s: u8| Answer::Late(Duration::from_secs(1), json!({ "score": s }).to_string());
    let scorer = Scorer::new()
        .on("a", [late(10)])
        .on("b", [late(20)])
        .on("c", [late(80)])
        .on("d", [late(30)]);
    let router = Router::builder(scorer)
        .tools_file(tools_file(["a", "b", "c", "d"].map(|n| tool(n, "Thing"))))
        .max_concurrency(2)
        .build()
        .unwrap();
    let start = tokio::time::Instant::now();
    let route = router.route("q", "Thing").await;
    assert_eq!(routed_name(&route), Some("c"));
    // Four one-second evaluations, two at a time: two rounds on the paused clock.
    assert_eq!(start.elapsed(), Duration::from_secs(2));
}

#[tokio::test]
async fn invalid_parameters_get_one_retry_with_the_errors() {
    let mut details = tool("details", "Recipe");
    details.return_struc = Some(
        json!({ "score": "0-100", "item_name": "the recipe", "servings": "how many", "details_requested": "what" })
            .as_object()
            .unwrap()
            .clone(),
    );
    let scorer = Scorer::new()
        .on("search", [score(60)])
        .on(
            "details",
            [
                answer(json!({ "score": 90, "item_name": "lasagna", "servings": 0 })),
                answer(json!({ "score": 90, "item_name": "lasagna", "servings": 4, "details_requested": "time" })),
            ],
        );
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([tool("search", "Thing"), details]))
        .executor(executor([
            echo("search", open()),
            echo("details", recipe_details_schema()),
        ]))
        .build()
        .unwrap();
    let route = router.route("lasagna for four: how long?", "Recipe").await;
    let routed = route.routed().expect("details, after a retry");
    assert_eq!(routed.tool, "details");
    // Only what the handler takes: `details_requested` is not one of its parameters.
    assert_eq!(
        Value::Object(routed.params.clone()),
        json!({ "item_name": "lasagna", "servings": 4 })
    );
    let asked = scorer.requests_for("details");
    assert_eq!(asked.len(), 2);
    let tool_model::Message::User { text } = asked[1].messages.last().unwrap() else {
        panic!("the retry ends with the errors, as the user");
    };
    assert!(text.contains("/servings"), "{text}");
    // The answer's schema types the fields by the handler's parameters.
    let schema = &asked[0].response_format.as_ref().unwrap().schema;
    assert_eq!(schema["properties"]["servings"]["type"], "integer");
    assert_eq!(schema["properties"]["details_requested"]["type"], "string");
    assert_eq!(asked[0].generation.temperature, Some(0.0));
}

#[tokio::test]
async fn parameters_still_invalid_after_the_retry_fall_to_the_next_best() {
    let scorer = Scorer::new()
        .on("details", [answer(json!({ "score": 95, "item_name": "" }))])
        .on(
            "compare",
            [answer(json!({ "score": 80, "first": "a", "second": "b" }))],
        )
        .on("search", [score(10)]);
    let compare_schema = json!({
        "type": "object",
        "properties": { "first": { "type": "string" }, "second": { "type": "string" } },
        "required": ["first", "second"]
    });
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("search", "Thing"),
            tool("details", "Thing"),
            tool("compare", "Thing"),
        ]))
        .executor(executor([
            echo("search", open()),
            echo("details", recipe_details_schema()),
            echo("compare", compare_schema),
        ]))
        .build()
        .unwrap();
    let ran = router.run("a or b?", "Thing").await.unwrap();
    assert_eq!(ran.routed.tool, "compare");
    assert_eq!(
        ran.output.to_text(),
        r#"compare {"first":"a","second":"b"}"#
    );
    let details = ran
        .routed
        .candidates
        .iter()
        .find(|c| c.tool == "details")
        .unwrap();
    assert!(
        details
            .error
            .as_deref()
            .unwrap_or_default()
            .starts_with("invalid parameters after one retry"),
        "{details:?}"
    );
    assert_eq!(scorer.requests_for("details").len(), 2);
}

#[tokio::test]
async fn a_lone_candidate_without_parameters_skips_the_model() {
    let scorer = Scorer::new();
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([tool("search", "Thing")]))
        .executor(executor([echo("search", open())]))
        .build()
        .unwrap();
    let ran = router.run("anything", "Recipe").await.unwrap();
    assert_eq!(
        (ran.routed.tool.as_str(), ran.routed.score),
        ("search", 100)
    );
    assert_eq!(ran.routed.candidates[0].source, ScoreSource::LoneCandidate);
    assert_eq!(scorer.asked(), 0);
}

#[tokio::test]
async fn the_cache_reuses_an_evaluation_of_the_same_query_and_tool() {
    let scorer = Scorer::new().on("a", [score(80)]).on("b", [score(20)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([tool("a", "Thing"), tool("b", "Thing")]))
        .cache(2)
        .build()
        .unwrap();
    let first = router.route("same query", "Thing").await;
    assert_eq!(score_of(&first, "a"), (80, ScoreSource::Model));
    assert_eq!(scorer.asked(), 2);
    let again = router.route("same query", "Thing").await;
    assert_eq!(routed_name(&again), Some("a"));
    assert_eq!(score_of(&again, "a"), (80, ScoreSource::Cache));
    assert_eq!(again.usage().requests, 0);
    assert_eq!(scorer.asked(), 2);
    // Another query is evaluated, and, the cache holding two, pushes the first ones out.
    router.route("other query", "Thing").await;
    assert_eq!(scorer.asked(), 4);
    let third = router.route("same query", "Thing").await;
    assert_eq!(score_of(&third, "a").1, ScoreSource::Model);
    assert_eq!(scorer.asked(), 6);
}

#[cfg(feature = "retrieval")]
#[tokio::test]
async fn the_prefilter_scores_only_the_top_k_by_retrieval() {
    let scorer = Scorer::new()
        .on("pairing", [score(90)])
        .on("substitution", [score(50)])
        .on("nutrition", [score(50)]);
    let tools = || {
        tools_file([
            tool("substitution", "Recipe").with_example("replace eggs in a cake"),
            tool("nutrition", "Recipe").with_example("calories of a pizza"),
            tool("pairing", "Recipe").with_example("which wine goes with lasagna"),
        ])
    };
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools())
        .prefilter(2)
        .build()
        .unwrap();
    let route = router.route("a wine to go with my lasagna", "Recipe").await;
    assert_eq!(routed_name(&route), Some("pairing"));
    assert_eq!(score_of(&route, "pairing"), (90, ScoreSource::Model));
    let left_out = route
        .candidates()
        .iter()
        .filter(|c| c.source == ScoreSource::Prefiltered)
        .count();
    assert_eq!(left_out, 1);
    assert_eq!(scorer.asked(), 2);

    // Down to one candidate, the prefilter's pick is still scored.
    let one = Router::builder(Arc::clone(&scorer))
        .tools_file(tools())
        .prefilter(1)
        .build()
        .unwrap();
    let route = one.route("a wine to go with my lasagna", "Recipe").await;
    assert_eq!(routed_name(&route), Some("pairing"));
    assert_eq!(score_of(&route, "pairing"), (90, ScoreSource::Model));
    assert_eq!(scorer.asked(), 3);
}

/// A query that shares no word with any tool ranks nothing, and the prefilter tops up in
/// file order: that pick is a guess, scored and held to the threshold, not a lone
/// candidate chosen at 100.
#[cfg(feature = "retrieval")]
#[tokio::test]
async fn a_lone_candidate_left_by_the_prefilter_is_scored_against_the_threshold() {
    let scorer = Scorer::new()
        .on("substitution", [score(10)])
        .on("pairing", [score(90)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("substitution", "Recipe").with_example("replace eggs in a cake"),
            tool("pairing", "Recipe").with_example("which wine goes with lasagna"),
        ]))
        .prefilter(1)
        .build()
        .unwrap();
    let route = router.route("zzz qqq", "Recipe").await;
    assert_eq!(routed_name(&route), None, "{:?}", route.candidates());
    assert_eq!(score_of(&route, "substitution"), (10, ScoreSource::Model));
    assert_eq!(score_of(&route, "pairing").1, ScoreSource::Prefiltered);
    assert_eq!(scorer.asked(), 1);
}

/// The prefilter ranks on the query the prompts see: the decontextualized one when there is
/// one, since the raw follow-up may share no word with the tool it is about.
#[cfg(feature = "retrieval")]
#[tokio::test]
async fn the_prefilter_ranks_on_the_decontextualized_query() {
    let scorer = Scorer::new()
        .on("substitution", [score(10)])
        .on("pairing", [score(90)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("substitution", "Recipe").with_example("replace eggs in a cake"),
            tool("pairing", "Recipe").with_example("which wine goes with lasagna"),
        ]))
        .prefilter(1)
        .build()
        .unwrap();
    let request = tool_router::RouteRequest::new("and salmon?", "Recipe")
        .with_previous_queries(["a wine for lasagna"])
        .with_decontextualized_query("a wine to go with salmon");
    let route = router.route_request(&request).await;
    assert_eq!(
        routed_name(&route),
        Some("pairing"),
        "{:?}",
        route.candidates()
    );
    assert_eq!(score_of(&route, "pairing"), (90, ScoreSource::Model));
    assert_eq!(score_of(&route, "substitution").1, ScoreSource::Prefiltered);
    let asked = scorer.requests_for("pairing");
    assert_eq!(asked.len(), 1);
    assert_eq!(scorer.asked(), 1);
}

#[test]
fn every_enabled_handler_must_be_an_executor_tool() {
    let scorer = Scorer::new();
    let mut substitution = tool("substitution", "Recipe").with_handler("recipes.substitute");
    substitution.origin.element = "<Tool name=\"substitution\">".into();
    let mut disabled = tool("ghost", "Recipe");
    disabled.enabled = false;
    let err = Router::builder(scorer)
        .tools_file(tools_file([
            tool("search", "Thing"),
            substitution,
            disabled,
        ]))
        .executor(executor([
            echo("search", open()),
            echo("recipes.substitution", open()),
        ]))
        .build()
        .unwrap_err();
    let RouterBuildError::MissingHandler {
        tool,
        handler,
        suggestions,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        (tool.as_str(), handler.as_str()),
        ("substitution", "recipes.substitute")
    );
    assert_eq!(suggestions, &["recipes.substitution"]);
    assert!(
        err.to_string()
            .contains("did you mean `recipes.substitution`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_disabled_tool_is_never_offered_and_run_without_executor_is_an_error() {
    let mut disabled = tool("details", "Thing");
    disabled.enabled = false;
    let scorer = Scorer::new().on("search", [score(10)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([tool("search", "Thing"), disabled]))
        .build()
        .unwrap();
    assert_eq!(router.candidates("Thing").len(), 1);
    assert!(matches!(
        router.run("q", "Thing").await,
        Err(RouterRunError::NoExecutor)
    ));
}

const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Tools>
  <Site ref="recipes.example">
    <Thing>
      <Tool name="search" enabled="true">
        <method>builtin</method>
        <handler>recipes.search</handler>
        <example>vegetarian pasta</example>
        <prompt>
          Query: {request.query}.
          Score the search tool.
        </prompt>
        <returnStruc>
          { "score": "integer between 0 and 100", "search_query": "what to search" }
        </returnStruc>
      </Tool>
    </Thing>
    <Dessert parent="Recipe">
      <Tool name="details" enabled="false">
        <method>code</method>
        <argument name="item_name">the dessert</argument>
        <prompt>Details of {request.query}?</prompt>
        <colour>blue</colour>
      </Tool>
    </Dessert>
  </Site>
</Tools>
"#;

const TOML: &str = r#"
site = "recipes.example"

[types]
Dessert = "Recipe"

[[tools]]
name = "search"
type = "Thing"
method = "builtin"
handler = "recipes.search"
examples = ["vegetarian pasta"]
prompt = """
Query: {request.query}.
Score the search tool.
"""
returnStruc = { score = "integer between 0 and 100", search_query = "what to search" }

[[tools]]
name = "details"
type = "Dessert"
enabled = false
method = "code"
arguments = [{ name = "item_name", description = "the dessert" }]
prompt = "Details of {request.query}?"
colour = "blue"
"#;

#[test]
fn xml_toml_and_json_say_the_same_thing() {
    let xml = ToolsFile::parse(XML, ToolsFileFormat::Xml, "tools.xml").unwrap();
    let toml = ToolsFile::parse(TOML, ToolsFileFormat::Toml, "tools.toml").unwrap();
    let json_text = serde_json::to_string(&xml).unwrap();
    let json = ToolsFile::parse(&json_text, ToolsFileFormat::Json, "tools.json").unwrap();
    for other in [&toml, &json] {
        assert_eq!(other.site, xml.site);
        assert_eq!(other.types, xml.types);
        assert_eq!(other.tools.len(), 2);
        for (a, b) in other.tools.iter().zip(&xml.tools) {
            let (mut a, mut b) = (a.clone(), b.clone());
            a.origin = Default::default();
            b.origin = Default::default();
            assert_eq!(a, b);
        }
    }
    assert_eq!(xml.site.as_deref(), Some("recipes.example"));
    assert_eq!(xml.types["Dessert"], "Recipe");
    let search = &xml.tools[0];
    assert_eq!(
        search.prompt,
        "Query: {request.query}.\nScore the search tool."
    );
    assert_eq!(search.handler_name(), "recipes.search");
    assert_eq!(search.origin.line, Some(5));
    assert!(!xml.tools[1].enabled);
    // The unknown element is a warning, in XML and TOML alike.
    assert_eq!(xml.warnings.len(), 1);
    assert_eq!(
        xml.warnings[0].to_string(),
        "tools.xml:23: <colour>: unknown element <colour> in tool `details`, ignored"
    );
    assert_eq!(toml.warnings.len(), 1);
    assert!(
        toml.warnings[0]
            .to_string()
            .contains("unknown field `colour`"),
        "{}",
        toml.warnings[0]
    );
}

fn xml_error(text: &str) -> String {
    ToolsFile::parse(text, ToolsFileFormat::Xml, "tools.xml")
        .unwrap_err()
        .to_string()
}

#[test]
fn malformed_files_are_errors_naming_the_file_line_and_element() {
    assert!(
        xml_error("<Tools>\n  <Thing>\n    <Tool name=\"a\">\n  </Thing>\n</Tools>")
            .starts_with("tools.xml:4:"),
        "{}",
        xml_error("<Tools>\n  <Thing>\n    <Tool name=\"a\">\n  </Thing>\n</Tools>")
    );
    assert_eq!(
        xml_error("<Tools>\n<Thing>\n<Tool name=\"a\" enabled=\"maybe\"><prompt>p</prompt></Tool>\n</Thing>\n</Tools>"),
        "tools.xml:3: <Tool name=\"a\">: `enabled` is \"maybe\": write \"true\" or \"false\""
    );
    assert_eq!(
        xml_error("<Tools>\n<Thing>\n<Tool><prompt>p</prompt></Tool>\n</Thing>\n</Tools>"),
        "tools.xml:3: <Tool>: a <Tool> needs a `name` attribute"
    );
    assert_eq!(
        xml_error("<Thing>\n<Tool name=\"a\">\n<prompt>p</prompt>\n<returnStruc>\n{\"score\": 1,}\n</returnStruc>\n</Tool>\n</Thing>"),
        "tools.xml:5: <returnStruc>: <returnStruc> is not JSON: trailing comma at line 1 column 13"
    );
    assert_eq!(
        xml_error("<Thing>\n<Tool name=\"a\"></Tool>\n</Thing>"),
        "tools.xml:2: <Tool name=\"a\">: tool `a` has no prompt: the router scores a tool with its prompt"
    );
    assert!(xml_error("<Thing>\n<Tool name=\"a\"><prompt>p</prompt></Tool>\n<Tool name=\"a\"><prompt>q</prompt></Tool>\n</Thing>")
        .starts_with("tools.xml:3: <Tool name=\"a\">: tool `a` of type `Thing` is declared twice (first at tools.xml:2"));
    let toml = ToolsFile::parse(
        "[[tools]]\nname = \"a\"\nprompt = \n",
        ToolsFileFormat::Toml,
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(toml.starts_with("t.toml:3:"), "{toml}");
    let json = ToolsFile::parse(
        "{\"tools\": [{\"name\": \"a\", \"type\": \"Thing\"}]}",
        ToolsFileFormat::Json,
        "t.json",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        json,
        "t.json:1: tools[0] (`a`): tool `a` has no prompt: the router scores a tool with its prompt"
    );
    let json = ToolsFile::parse(
        "{\"tools\": [{\"name\": \"a\", \"type\": \"Thing\", \"enabled\": \"yes\"}]}",
        ToolsFileFormat::Json,
        "t.json",
    )
    .unwrap_err()
    .to_string();
    assert!(
        json.starts_with(
            "t.json:1: tools[0] (`a`): invalid type: string \"yes\", expected a boolean"
        ),
        "{json}"
    );
}

#[test]
fn the_example_file_reads_without_warnings() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tools.xml");
    let declared = ToolsFile::from_path(path).unwrap();
    assert!(declared.warnings.is_empty(), "{:?}", declared.warnings);
    let names: Vec<&str> = declared.enabled().map(|t| t.name.as_str()).collect();
    for name in [
        "search",
        "details",
        "compare",
        "ensemble",
        "substitution",
        "accompaniment",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
}

#[tokio::test]
async fn the_files_site_and_the_conversation_fill_the_prompts() {
    let mut ask = tool("search", "Thing");
    ask.prompt =
        "{request.site}: {request.query} | {request.rawQuery} | {request.previousQueries}".into();
    let scorer = Scorer::new()
        .on("search", [score(80)])
        .on("details", [score(10)]);
    let mut declared = tools_file([ask, tool("details", "Thing")]);
    declared.site = Some("recipes.example".into());
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(declared)
        .build()
        .unwrap();
    let request =
        tool_router::RouteRequest::new("and vegan?", "Recipe").with_previous_queries(["brownies"]);
    let route = router.route_request(&request).await;
    assert_eq!(routed_name(&route), Some("search"));
    assert_eq!(
        scorer.requests_for("search")[0].messages,
        vec![tool_model::Message::user(
            "recipes.example: and vegan? previous queries: [\"brownies\"] | and vegan? | [\"brownies\"]"
        )]
    );
}

#[test]
fn toml_and_json_entries_are_named_with_their_line() {
    let toml = "site = \"s\"\n\n[[tools]]\nname = \"a\"\ntype = \"Thing\"\nprompt = \"p\"\n\n[[tools]]\nname = \"b\"\ntype = \"Thing\"\n";
    let err = ToolsFile::parse(toml, ToolsFileFormat::Toml, "t.toml").unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.toml:8: tools[1] (`b`): tool `b` has no prompt: the router scores a tool with its prompt"
    );
    let json = "{\n  \"site\": \"tools\",\n  \"tools\": [\n    { \"name\": \"a\", \"type\": \"Thing\", \"prompt\": \"p [x] {y}, \\\" z\" },\n    {\n      \"name\": \"b\", \"type\": \"Thing\"\n    }\n  ]\n}";
    let err = ToolsFile::parse(json, ToolsFileFormat::Json, "t.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.json:5: tools[1] (`b`): tool `b` has no prompt: the router scores a tool with its prompt"
    );
}

/// Checked when this compiles: the router is `Send + Sync` and its futures are `Send`, so a
/// server can share one across tasks on a multi-threaded runtime.
#[test]
fn a_router_is_shared_across_tasks_and_its_futures_are_send() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: T) {}
    let router = Router::builder(Scorer::new())
        .tools_file(tools_file([tool("a", "Thing")]))
        .build()
        .unwrap();
    send_sync(&router);
    send(router.route("q", "Thing"));
    send(router.run("q", "Thing"));
}

#[test]
fn types_a_file_or_the_builder_adds_collect_their_parents_tools() {
    let mut declared = tools_file([tool("details", "Recipe"), tool("showtimes", "Movie")]);
    declared.types.insert("Dessert".into(), "Recipe".into());
    let router = Router::builder(Scorer::new())
        .tools_file(declared)
        .subtype("Sequel", "Movie")
        .build()
        .unwrap();
    let names = |t: &str| -> Vec<String> {
        router
            .candidates(t)
            .iter()
            .map(|c| c.name.clone())
            .collect()
    };
    assert_eq!(names("Dessert"), ["details"]);
    assert_eq!(names("Sequel"), ["showtimes"]);
    assert!(names("Thing").is_empty());
    assert_eq!(router.types().lineage("Dessert")[1], "Recipe");
}

#[test]
fn item_and_thing_are_one_type_for_duplicates() {
    let err = Router::builder(Scorer::new())
        .tools_file(tools_file([
            tool("search", "Item"),
            tool("search", "Thing"),
        ]))
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("tool `search` of type `Thing` is declared twice"),
        "{err}"
    );
}

#[test]
fn the_tools_and_site_wrappers_are_optional() {
    let bare = "<Recipe>\n  <Tool name=\"a\" colour=\"red\"><prompt>p</prompt></Tool>\n</Recipe>";
    let declared = ToolsFile::parse(bare, ToolsFileFormat::Xml, "t.xml").unwrap();
    assert_eq!(declared.tools[0].schema_type, "Recipe");
    assert_eq!(
        declared.warnings[0].to_string(),
        "t.xml:2: <Tool name=\"a\">: unknown attribute `colour`, ignored"
    );
    let site = "<Site ref=\"s\"><Thing><Tool name=\"a\"><prompt>p</prompt></Tool></Thing></Site>";
    let declared = ToolsFile::parse(site, ToolsFileFormat::Xml, "t.xml").unwrap();
    assert_eq!(declared.site.as_deref(), Some("s"));
    assert_eq!(declared.tools[0].schema_type, "Thing");
    assert!(declared.warnings.is_empty());
}

/// NLWeb's current `tools.xml`: sites by `id`, a `default` one, `extension` tools, a second
/// `<Item>` block, a `<!DOCTYPE>`, an empty `<returnStruc>`.
const SITES_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE Tools>
<Tools>
  <Site id="default">
    <Item>
      <Tool name="search" enabled="true">
        <method>builtin</method>
        <prompt>Search for {request.query}?</prompt>
        <returnStruc>  </returnStruc>
      </Tool>
      <Tool name="details" enabled="true">
        <method>extension</method>
        <handler>methods.item_details.ItemDetailsHandler</handler>
        <prompt>Details of {request.query}?</prompt>
      </Tool>
    </Item>
    <Item>
      <Tool name="ensemble"><method>code</method><prompt>A set for {request.query}?</prompt></Tool>
    </Item>
  </Site>
  <Site id="conv_history">
    <Item>
      <Tool name="conversation_search"><prompt>Always score 100.</prompt></Tool>
      <Tool name="search" enabled="false"><prompt>old</prompt></Tool>
      <Tool name="search"><prompt>Search the history for {request.query}?</prompt></Tool>
    </Item>
  </Site>
</Tools>"#;

#[tokio::test]
async fn each_site_is_offered_its_own_tools_and_an_unknown_site_the_defaults() {
    let declared = ToolsFile::parse(SITES_XML, ToolsFileFormat::Xml, "t.xml").unwrap();
    assert!(declared.warnings.is_empty(), "{:?}", declared.warnings);
    assert_eq!(declared.tools[1].method, Some(ToolMethod::Extension));
    assert_eq!(declared.tools[0].return_struc, None);
    assert_eq!(
        declared.site, None,
        "`default` is no site to fill prompts with"
    );
    let router = Router::builder(Scorer::new())
        .tools_file(declared)
        .build()
        .unwrap();
    let names = |site: Option<&str>| -> Vec<String> {
        let candidates = router.candidates_on("Thing", site);
        candidates
            .iter()
            .map(|t| format!("{}@{}", t.name, t.site.as_deref().unwrap_or("-")))
            .collect()
    };
    let defaults = ["search@default", "details@default", "ensemble@default"];
    assert_eq!(names(None), defaults);
    assert_eq!(names(Some("elsewhere")), defaults);
    assert_eq!(
        names(Some("conv_history")),
        ["conversation_search@conv_history", "search@conv_history"]
    );
}

#[test]
fn a_tool_outside_any_site_is_offered_on_every_site_and_a_sites_own_overrides_it() {
    let xml = r#"<Tools>
  <Thing><Tool name="search"><prompt>everywhere</prompt></Tool></Thing>
  <Site id="shop"><Thing>
    <Tool name="search"><prompt>the shop's</prompt></Tool>
    <Tool name="cart"><prompt>cart</prompt></Tool>
  </Thing></Site>
</Tools>"#;
    let declared = ToolsFile::parse(xml, ToolsFileFormat::Xml, "t.xml").unwrap();
    // The one site is the router's own: a request naming no site is the shop's.
    assert_eq!(declared.site.as_deref(), Some("shop"));
    let router = Router::builder(Scorer::new())
        .tools_file(declared)
        .build()
        .unwrap();
    let prompts = |site: Option<&str>| -> Vec<String> {
        let candidates = router.candidates_on("Thing", site);
        candidates.iter().map(|t| t.prompt.clone()).collect()
    };
    assert_eq!(prompts(None), ["the shop's", "cart"]);
    assert_eq!(prompts(Some("shop")), ["the shop's", "cart"]);
}

#[test]
fn an_unknown_method_or_root_is_a_warning_and_a_file_without_tools_says_so() {
    let read = |xml: &str| ToolsFile::parse(xml, ToolsFileFormat::Xml, "t.xml").unwrap();
    let shell =
        read("<Thing>\n<Tool name=\"a\"><method>shell</method><prompt>p</prompt></Tool>\n</Thing>");
    assert_eq!(shell.tools[0].method, None);
    assert_eq!(
        shell.warnings[0].to_string(),
        "t.xml:2: <method>: unknown method \"shell\" (builtin, code, extension or url), ignored"
    );
    // NLWeb reads any root as the wrapper.
    let root = read("<root><Item><Tool name=\"a\"><prompt>p</prompt></Tool></Item></root>");
    assert_eq!(root.tools[0].schema_type, "Item");
    assert!(root.warnings.is_empty(), "{:?}", root.warnings);
    let misplaced = read("<Tools><Tool name=\"a\"><prompt>p</prompt></Tool></Tools>");
    assert_eq!(misplaced.tools[0].schema_type, "Tools");
    let empty = read("<Tools><Site id=\"x\"/></Tools>");
    assert!(empty.tools.is_empty());
    assert!(
        empty.warnings[0].to_string().contains("no <Tool> found"),
        "{}",
        empty.warnings[0]
    );
}

#[test]
fn an_early_stop_mark_below_the_threshold_is_refused() {
    let err = Router::builder(Scorer::new())
        .tools_file(tools_file([tool("a", "Thing")]))
        .threshold(75)
        .early_stop(60)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("below the threshold"), "{err}");
}

#[tokio::test]
async fn a_failed_evaluation_never_wins_even_alone_or_at_threshold_zero() {
    // The type's only tool, whose parameters the model was asked for and did not give.
    let scorer = Scorer::new().on("details", [Answer::Fail]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([tool("details", "Thing")]))
        .executor(executor([echo("details", recipe_details_schema())]))
        .build()
        .unwrap();
    let route = router.route("the lasagna", "Thing").await;
    assert_eq!(routed_name(&route), None);
    assert_eq!(score_of(&route, "details"), (0, ScoreSource::LoneCandidate));
    assert!(!route.candidates()[0].answered);
    // Threshold 0: a failure scores 0, and 0 reaches it, but it did not answer.
    let scorer = Scorer::new()
        .on("a", [Answer::Fail])
        .on("b", [Answer::Fail]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([tool("a", "Thing"), tool("b", "Thing")]))
        .threshold(0)
        .build()
        .unwrap();
    assert_eq!(routed_name(&router.route("q", "Thing").await), None);
}

#[tokio::test]
async fn the_cache_keeps_the_parameters_that_worked() {
    let scorer = Scorer::new()
        .on(
            "details",
            [
                answer(json!({ "score": 90, "item_name": "" })),
                answer(json!({ "score": 90, "item_name": "lasagna" })),
            ],
        )
        .on("search", [score(10)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            tool("details", "Thing"),
            tool("search", "Thing"),
        ]))
        .executor(executor([
            echo("details", recipe_details_schema()),
            echo("search", open()),
        ]))
        .cache(8)
        .build()
        .unwrap();
    let first = router.route("the lasagna", "Thing").await;
    assert_eq!(first.routed().unwrap().params["item_name"], "lasagna");
    let asked = scorer.asked();
    let again = router.route("the lasagna", "Thing").await;
    assert_eq!(again.routed().unwrap().params["item_name"], "lasagna");
    assert_eq!(scorer.asked(), asked, "the cached answer needed no retry");
}

#[test]
fn files_of_different_sites_offer_every_tool_to_a_request_naming_none() {
    let read = |text: &str, format, file| ToolsFile::parse(text, format, file).unwrap();
    let a = read(
        "<Site ref=\"a\"><Thing><Tool name=\"shop\"><prompt>p</prompt></Tool></Thing></Site>",
        ToolsFileFormat::Xml,
        "a.xml",
    );
    let b = read(
        "site = \"b\"\n[[tools]]\nname = \"blog\"\ntype = \"Thing\"\nprompt = \"p\"\n",
        ToolsFileFormat::Toml,
        "b.toml",
    );
    assert_eq!(b.tools[0].site.as_deref(), Some("b"));
    let router = Router::builder(Scorer::new())
        .tools_file(a)
        .tools_file(b)
        .build()
        .unwrap();
    let names = |site: Option<&str>| -> Vec<String> {
        let candidates = router.candidates_on("Thing", site);
        candidates.iter().map(|t| t.name.clone()).collect()
    };
    assert_eq!(names(None), ["shop", "blog"]);
    assert_eq!(names(Some("elsewhere")), ["shop", "blog"]);
    assert_eq!(names(Some("a")), ["shop"]);
    assert_eq!(names(Some("b")), ["blog"]);
}

#[tokio::test]
async fn a_lone_candidates_corrected_parameters_are_not_cached_as_a_score() {
    // `details` is Thing's only tool; on a Recipe query it meets `recipe_search`.
    let scorer = Scorer::new()
        .on(
            "details",
            [
                answer(json!({ "item_name": "" })),
                answer(json!({ "item_name": "lasagna" })),
                answer(json!({ "score": 10, "item_name": "lasagna" })),
            ],
        )
        .on("recipe_search", [score(60)]);
    let router = Router::builder(Arc::clone(&scorer))
        .tools_file(tools_file([
            DeclaredTool::new("details", "Thing", "Details of {request.query}?"),
            DeclaredTool::new("recipe_search", "Recipe", "Find {request.query}?"),
        ]))
        .executor(executor([
            echo("details", recipe_details_schema()),
            echo("recipe_search", open()),
        ]))
        .threshold(50)
        .cache(8)
        .build()
        .unwrap();
    let alone = router.route("the lasagna", "Thing").await;
    assert_eq!(
        score_of(&alone, "details"),
        (100, ScoreSource::LoneCandidate)
    );
    // Among two, it is scored by the model, not taken from the lone route's 100.
    let among = router.route("the lasagna", "Recipe").await;
    assert_eq!(score_of(&among, "details"), (10, ScoreSource::Model));
    assert_eq!(routed_name(&among), Some("recipe_search"));
}

/// The router asks nobody before it runs a handler: one marked `requires_approval` keeps the
/// router from being built, unless it is told the query is the approval.
#[test]
fn a_handler_requiring_approval_is_refused_unless_the_router_is_told() {
    let text = r#"<Tools><Thing><Tool name="refund"><handler>pay</handler><prompt>Refund?</prompt></Tool></Thing></Tools>"#;
    let declared = || ToolsFile::parse(text, ToolsFileFormat::Xml, "t.xml").unwrap();
    let pay = tool_runtime::DynamicTool::new(
        "pay",
        "Pays",
        serde_json::json!({ "type": "object", "properties": {} }),
        |_, _| async { Ok(tool_core::ToolOutput::text("paid")) },
    )
    .with_metadata(tool_core::ToolMetadata {
        requires_approval: true,
        ..tool_core::ToolMetadata::default()
    });
    let exec = tool_runtime::Executor::builder()
        .registered_tools(false)
        .tool(pay)
        .build()
        .unwrap();
    let model = || std::sync::Arc::new(tool_model::ScriptedModel::new());
    let refused = Router::builder(model())
        .tools_file(declared())
        .executor(exec.clone())
        .build()
        .unwrap_err();
    assert!(
        matches!(refused, RouterBuildError::RequiresApproval { .. }),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .contains("run_handlers_that_require_approval"),
        "{refused}"
    );
    Router::builder(model())
        .tools_file(declared())
        .executor(exec)
        .run_handlers_that_require_approval()
        .build()
        .unwrap();
}
