//! Declared tools and LLM-scored routing: the recipe site of `examples/tools.xml`, whose tools
//! are methods of `RecipeService`. The query (the first argument) is routed to one tool, which
//! runs with the parameters the model extracted. It prints every candidate's score, then the
//! winner and its output.
//!
//! With `OPENAI_BASE_URL` set (with its `/v1`), the model is that OpenAI-compatible endpoint
//! (`OPENAI_API_KEY` if it needs a key, `AI_TOOL_MODEL` for the model's name); otherwise a
//! scripted model answers, for the default query.
//!
//! Run with `cargo run --features agent --example router -- "Which wine goes with a mushroom risotto?"`.

use std::path::Path;
use std::sync::Arc;

use ai_tool::agent::{ChatModel, ModelResponse, OpenAiChatModel, ScriptedModel};
use ai_tool::prelude::*;
use ai_tool::router::{Router, RouterRunError, ToolsFile};
use serde_json::json;

/// The recipe site's service: each method is the handler of a declared tool.
pub struct RecipeService;

#[ai_tools]
impl RecipeService {
    /// Finds recipes matching a search query.
    #[ai_tool(read_only)]
    fn search_recipes(&self, search_query: String) -> String {
        format!("3 recipes for \"{search_query}\": ...")
    }

    /// Tells about one recipe.
    #[ai_tool(read_only)]
    fn recipe_details(&self, item_name: String, details_requested: Option<String>) -> String {
        let what = details_requested.unwrap_or_else(|| "everything".into());
        format!("{item_name}: {what} ...")
    }

    /// Compares two recipes.
    #[ai_tool(read_only)]
    fn compare_recipes(
        &self,
        item1: String,
        item2: String,
        details_requested: Option<String>,
    ) -> String {
        let on = details_requested.unwrap_or_else(|| "everything".into());
        format!("{item1} vs {item2}, on {on}: ...")
    }

    /// Plans a meal of several dishes.
    #[ai_tool(read_only)]
    fn plan_meal(&self, occasion: String, courses: Option<String>) -> String {
        format!("{occasion}: {} ...", courses.unwrap_or_default())
    }

    /// Suggests ingredient substitutions.
    #[ai_tool(read_only)]
    fn substitute_ingredient(
        &self,
        recipe_name: Option<String>,
        dietary_need: Option<String>,
        unavailable_ingredient: Option<String>,
    ) -> String {
        let parts = [recipe_name, dietary_need, unavailable_ingredient];
        format!("substitutions for {:?}: ...", parts)
    }

    /// Finds what goes well with a dish.
    #[ai_tool(read_only)]
    fn pair_with(&self, search_query: String, main_item: String) -> String {
        format!("a {search_query} for {main_item}: a dry Riesling")
    }
}

/// The model: an OpenAI-compatible endpoint when `OPENAI_BASE_URL` is set, else a script that
/// scores the candidates in the order they are asked (one at a time, see `main`).
fn model() -> Arc<dyn ChatModel> {
    match std::env::var("OPENAI_BASE_URL") {
        Ok(base_url) => {
            let name = std::env::var("AI_TOOL_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
            Arc::new(OpenAiChatModel::new(name).with_base_url(&base_url))
        }
        Err(_) => {
            let scores = [
                json!({ "score": 35, "search_query": "wine for eggplant lasagna" }),
                json!({ "score": 20, "item_name": "eggplant lasagna" }),
                json!({ "score": 5 }),
                json!({ "score": 30, "occasion": "dinner" }),
                json!({ "score": 5 }),
                json!({ "score": 92, "search_query": "wine", "main_item": "eggplant lasagna" }),
            ];
            let mut script = ScriptedModel::new();
            for score in scores {
                script = script.then(ModelResponse::answer(score.to_string()));
            }
            Arc::new(script)
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let query = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Which wine goes with an eggplant lasagna?".into());
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tools.xml");
    let exec = Executor::builder()
        .service(Arc::new(RecipeService))
        .build()?;

    let declared = ToolsFile::from_path(&file)?;
    let scripted = std::env::var("OPENAI_BASE_URL").is_err();
    let router = Router::builder(model())
        .tools_file(declared) // every enabled tool's handler must be an executor tool
        .executor(exec)
        .fallback("search") // below the threshold (75), the search tool takes the query
        .max_concurrency(if scripted { 1 } else { 8 })
        .build()?;
    let (routed, output) = match router.run(&query, "Recipe").await {
        Ok(ran) => (ran.routed, ran.output.to_text()),
        Err(RouterRunError::Tool { routed, error }) => (*routed, error.to_string()),
        Err(other) => return Err(other.into()),
    };
    for candidate in &routed.candidates {
        let error = candidate.error.as_deref().unwrap_or_default();
        println!("{:>3}  {:<14} {error}", candidate.score, candidate.tool);
    }
    println!(
        "== {} ({}) with {}",
        routed.tool,
        routed.handler,
        json!(routed.params)
    );
    println!("{output}");
    println!(
        "({} requests, {} tokens in)",
        routed.usage.requests, routed.usage.input_tokens
    );
    Ok(())
}
