//! Forms a user of rmcp's `#[tool]` or of serde might write, checked as the docs describe them.

mod common;

use ai_tool::prelude::*;
use serde_json::json;

use common::tools::serving;

pub struct Hunt;

/// An alias of `Option`, as crates write them.
pub type Maybe<T> = Option<T>;

#[ai_tools]
impl Hunt {
    /// Takes a `mut` parameter.
    #[ai_tool]
    fn mutable(&self, mut count: u32) -> u32 {
        count += 1;
        count
    }

    /// Has a where clause the call meets.
    #[ai_tool]
    fn bounded(&self) -> u32
    where
        Self: Sized,
    {
        7
    }

    /// Takes a parameter named as generated code names its locals.
    #[ai_tool]
    #[allow(clippy::used_underscore_binding)]
    fn locals(&self, __ai_args: u32, __ai_ctx: u32, __ai_value: u32) -> u32 {
        __ai_args + __ai_ctx + __ai_value
    }

    /// Answers borrowed text, asynchronously.
    #[ai_tool]
    async fn borrowed(&self) -> &str {
        "borrowed"
    }

    /// Takes an optional value through an alias.
    #[ai_tool]
    fn aliased(&self, value: Maybe<u32>) -> String {
        format!("{value:?}")
    }

    /// Takes raw identifiers with a default.
    #[ai_tool]
    fn raw(&self, #[arg(default = 3)] r#type: u32) -> u32 {
        r#type
    }
}

fn executor() -> Executor {
    serving(Hunt)
}

#[tokio::test]
async fn a_mut_parameter_is_an_argument() {
    let out = executor().execute("mutable", json!({ "count": 1 })).await;
    assert_eq!(out.unwrap().to_text(), "2");
}

#[tokio::test]
async fn a_where_clause_the_call_meets_is_accepted() {
    let out = executor().execute("bounded", json!({})).await;
    assert_eq!(out.unwrap().to_text(), "7");
}

#[tokio::test]
async fn parameters_named_like_generated_locals_are_arguments() {
    let out = executor()
        .execute(
            "locals",
            json!({ "__ai_args": 1, "__ai_ctx": 2, "__ai_value": 3 }),
        )
        .await;
    assert_eq!(out.unwrap().to_text(), "6");
}

#[tokio::test]
async fn an_async_method_may_return_borrowed_text() {
    let out = executor().execute("borrowed", json!({})).await;
    assert_eq!(out.unwrap().to_text(), "borrowed");
}

#[tokio::test]
async fn an_option_alias_is_as_the_schema_says() {
    let exec = executor();
    let spec = exec.spec("aliased").unwrap();
    let required = spec.parameters.get("required").cloned();
    let missing = exec.execute("aliased", json!({})).await;
    let is_required = required.is_some_and(|r| r.as_array().unwrap().contains(&json!("value")));
    assert_eq!(
        is_required,
        missing.is_err(),
        "schema {} vs call {missing:?}",
        spec.parameters
    );
}

#[tokio::test]
async fn a_raw_identifier_with_a_default() {
    let exec = executor();
    let out = exec.execute("raw", json!({})).await;
    assert_eq!(out.unwrap().to_text(), "3");
    let out = exec.execute("raw", json!({ "type": 4 })).await;
    assert_eq!(out.unwrap().to_text(), "4");
}

pub struct Second;

/// A tool whose name and description come through `macro_rules!`, as generated code writes
/// them: the description as an `expr` fragment.
macro_rules! counted_tool {
    ($name:ident, $doc:expr) => {
        #[doc = $doc]
        #[ai_tool]
        fn $name() -> u32 {
            1
        }
    };
}

counted_tool!(from_macro, "Counts one.");

#[ai_tools]
impl Second {
    const PAGE: u32 = 20;

    /// Pages, by default by the impl's constant.
    #[ai_tool]
    fn paged(&self, #[arg(default = Self::PAGE)] size: u32) -> u32 {
        size
    }

    /// Answers a `Cow` for `'static`.
    #[ai_tool]
    fn label(&self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("label")
    }
}

#[tokio::test]
async fn a_doc_comment_written_through_macro_rules_is_the_description() {
    let exec = serving(Second);
    assert_eq!(exec.spec("from_macro").unwrap().description, "Counts one.");
}

#[tokio::test]
async fn more_forms() {
    let exec = serving(Second);
    let out = exec.execute("paged", json!({})).await;
    assert_eq!(out.unwrap().to_text(), "20");
    let out = exec.execute("label", json!({})).await;
    assert_eq!(out.unwrap().to_text(), "label");
}

pub struct Third;

/// An impl whose self type comes through a `macro_rules!` `$t:ty`.
macro_rules! tools_for {
    ($service:ty) => {
        #[ai_tools(prefix = "third")]
        impl $service {
            /// Greets, by default the world, asynchronously, with the context.
            #[ai_tool]
            async fn greet(
                &self,
                ctx: &ToolContext,
                #[arg(default = "world")] who: &str,
                tags: &[String],
            ) -> String {
                format!("{} {who} {}", ctx.tool_name(), tags.len())
            }
        }
    };
}

tools_for!(Third);

#[tokio::test]
async fn an_impl_through_macro_rules_with_borrowed_defaults() {
    let exec = serving(Third);
    let out = exec.execute("third_greet", json!({ "tags": ["a"] })).await;
    assert_eq!(out.unwrap().to_text(), "third_greet world 1");
}
