//! Recipe: 5 tools out of 2,000 for each user message (docs/recipes/five-of-2000.md). A shop's
//! service and 1,997 back-office tools in one executor; a BM25 retriever picks the few that
//! fit each message, the agent loop offers those and the system tools, and
//! `provider::declare` declares the same subset for a loop of your own.
//!
//! The model is recipe_agent's: OpenAI's with `OPENAI_API_KEY`, a compatible server with
//! `OPENAI_BASE_URL`, else a script. No model files are needed: BM25 is lexical.
//!
//! Run with `cargo run --features openai --example recipe_retrieval`.

use std::sync::Arc;

use ai_tool::agent::{Agent, ChatModel, ModelResponse, OpenAiChatModel, RunOptions, ScriptedModel};
use ai_tool::prelude::*;
use ai_tool::provider;
use ai_tool::retrieval::{RetrieveOptions, Retriever};
use serde_json::json;

/// The service you already have: a shop's orders.
pub struct Shop;

#[ai_tools]
impl Shop {
    /// Finds an order by its number (such as A-1042).
    #[ai_tool(read_only, selectable, keywords = ["purchase"])]
    fn find_order(&self, order: String) -> String {
        format!("{order}: a bike lamp, 39.90 EUR")
    }

    /// Says where an order's parcel is.
    #[ai_tool(read_only, selectable, keywords = ["delivery", "shipping"])]
    fn track_parcel(&self, order: String) -> String {
        format!("{order}: delivered on 2026-05-04")
    }

    /// Hands the conversation to a person of the support team. Not selectable: a system
    /// tool, offered with every message.
    #[ai_tool]
    fn talk_to_a_person(&self, summary: String) -> String {
        format!("a person will answer about: {summary}")
    }
}

/// The back office's 1,997 operations (as many as an MCP gateway or an API import brings),
/// made here from names: `backoffice_archive_invoice_eu`, ...
fn back_office() -> Vec<DynamicTool> {
    let actions = [
        ("create", "Creates"),
        ("update", "Updates"),
        ("archive", "Archives"),
        ("delete", "Deletes"),
        ("list", "Lists"),
        ("export", "Exports"),
        ("import", "Imports"),
        ("approve", "Approves"),
        ("reject", "Rejects"),
        ("print", "Prints"),
        ("email", "Emails"),
        ("schedule", "Schedules"),
        ("duplicate", "Duplicates"),
        ("merge", "Merges"),
        ("audit", "Audits"),
        ("lock", "Locks"),
        ("unlock", "Unlocks"),
        ("translate", "Translates"),
        ("tag", "Tags"),
        ("count", "Counts"),
    ];
    let things = [
        "invoice",
        "customer",
        "supplier",
        "warehouse",
        "product",
        "price list",
        "discount",
        "gift card",
        "return label",
        "stock count",
        "purchase order",
        "employee",
        "shift",
        "payslip",
        "tax report",
        "bank transfer",
        "newsletter",
        "review",
        "coupon",
        "store",
        "delivery route",
        "bike repair",
        "spare part",
        "rental",
        "insurance claim",
    ];
    let regions = ["eu", "us", "uk", "asia"];
    let schema = json!({
        "type": "object",
        "properties": { "id": { "type": "string" } },
        "required": ["id"]
    });
    let mut tools = Vec::new();
    for (action, verb) in actions {
        for thing in things {
            for region in regions {
                let name = format!("backoffice_{action}_{}_{region}", thing.replace(' ', "_"));
                let description =
                    format!("{verb} a {thing} of the {} shop.", region.to_uppercase());
                let done = format!("{name}: done");
                tools.push(DynamicTool::new(
                    name,
                    description,
                    schema.clone(),
                    move |_, _| {
                        let done = done.clone();
                        async move { Ok(ToolOutput::text(done)) }
                    },
                ));
            }
        }
    }
    tools.truncate(1_997);
    tools
}

/// OpenAI's Chat Completions, or a compatible server; a script when neither is configured.
fn model() -> Arc<dyn ChatModel> {
    let base_url = std::env::var("OPENAI_BASE_URL").ok();
    if std::env::var_os("OPENAI_API_KEY").is_none() && base_url.is_none() {
        let call = ToolCall::new("call_1", "track_parcel", json!({ "order": "A-1042" }));
        return Arc::new(
            ScriptedModel::new()
                .then(ModelResponse::calling([call]))
                .then(ModelResponse::answer(
                    "Your parcel was delivered on 2026-05-04.",
                )),
        );
    }
    let name = std::env::var("AI_TOOL_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    let mut model = OpenAiChatModel::new(name);
    if let Some(base_url) = base_url {
        model = model.with_base_url(&base_url);
    }
    Arc::new(model)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exec = Executor::builder()
        .service(Arc::new(Shop))
        .tools(back_office())
        .selectable_where(|spec| spec.name.starts_with("backoffice_"))
        .build()?;
    println!("{} tools", exec.tools().count());

    // BM25 over the selectable tools: no model files. Built once, asked for each message.
    let retriever = Arc::new(Retriever::lexical(exec.tools()));
    let options = RetrieveOptions {
        match_count: 5,
        ..Default::default()
    };
    let messages = [
        "Where is the parcel of my order A-1042?",
        "[find_order] A-1042, and print its invoice",
    ];
    for message in messages {
        println!("\n{message}");
        for tool in retriever.retrieve(message, &options).await? {
            println!("  {:?} {} {:.2}", tool.reason, tool.name, tool.score);
        }
    }

    // A loop of your own: declare the subset in the model's format.
    let found = retriever.retrieve(messages[0], &options).await?;
    let specs = found.iter().filter_map(|tool| exec.spec(&tool.name));
    let declared = provider::declare(specs, Format::OpenAiChat, &DeclareOptions::default());
    let all = exec.declarations(Format::OpenAiChat, &DeclareOptions::default());
    println!(
        "\ndeclared for OpenAI: {} bytes for these {}, {} bytes for all {}",
        declared.tools.to_string().len(),
        found.len(),
        all.tools.to_string().len(),
        exec.tools().count()
    );

    // The agent loop: it asks the retriever for each run's input, and offers what it picks
    // with the system tools. A call of a tool that was not offered is refused.
    let agent = Agent::builder(model())
        .executor(exec)
        .retriever(Arc::clone(&retriever), options)
        .instructions("You are Lyon Bikes' support. Use the tools; answer in one sentence.")
        .build();
    let run = RunOptions::default();
    let offered = agent.offered_tools(messages[0], &run).await?;
    println!(
        "offered: {}",
        offered.names().collect::<Vec<_>>().join(", ")
    );
    let result = agent.run(messages[0], &run).await?;
    println!("answer: {}", result.text);
    Ok(())
}
