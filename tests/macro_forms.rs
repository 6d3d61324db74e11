//! Method forms the macro takes as written: lifetimes the call infers, a tool compiled out by
//! `#[cfg]` or made one by `#[cfg_attr]`, `self: &Self`, types passed through `macro_rules!`,
//! parameters in camel case, a doc comment's indentation, an `Option` of a type that is not
//! `Serialize`.

mod common;

use ai_tool::prelude::*;
use serde_json::json;

use common::tools::serving;

pub struct Kv;

/// A tool method whose parameter type comes through a `macro_rules!` `$t:ty`, as generated
/// code writes them: the macro sees the type in an invisible group.
macro_rules! shout_tool {
    ($text:ty) => {
        #[ai_tools]
        impl Loud {
            /// Shouts the text.
            #[ai_tool]
            fn shout(&self, text: $text) -> String {
                text.to_uppercase()
            }
        }
    };
}

pub struct Loud;
shout_tool!(&str);

#[ai_tools]
impl Kv {
    /// Reads a key.
    #[ai_tool]
    fn get<'a>(&'a self, key: &'a str) -> String {
        key.to_uppercase()
    }

    /// Gives the service's name, borrowed for a named lifetime.
    #[ai_tool]
    #[allow(clippy::needless_lifetimes)] // named on purpose: the form under test
    fn name<'a>(&'a self) -> &'a str {
        "kv"
    }

    /// Only in a build that never is.
    #[cfg(any())]
    #[ai_tool]
    fn gone(&self) -> u32 {
        1
    }

    /// Takes names in camel case.
    #[ai_tool]
    #[allow(non_snake_case)]
    fn camel(&self, userId: u64, #[arg(default = 2)] pageSize: u32) -> u64 {
        userId + u64::from(pageSize)
    }

    /// Takes `self` written out.
    #[ai_tool]
    #[allow(clippy::needless_arbitrary_self_type)] // written out on purpose: the form under test
    fn spelled(self: &Self) -> u32 {
        3
    }

    /// A tool in every build.
    #[cfg_attr(all(), ai_tool(name = "always"))]
    fn always_when(&self) -> u32 {
        4
    }

    /// A tool in no build, a method still.
    #[cfg_attr(any(), ai_tool)]
    fn never(&self) -> u32 {
        5
    }

    /// A tool in every build, beside another attribute of the same `cfg_attr`.
    #[cfg_attr(all(), ai_tool, allow(clippy::unused_self))]
    fn also(&self) -> u32 {
        6
    }

    /// Shows code:
    ///
    ///     let x = 1;
    #[ai_tool]
    fn indented(&self) -> u32 {
        0
    }

    /// Reserves a day, when it is free.
    #[ai_tool(max_retries = 2)]
    fn reserve(&self, day: u32) -> Result<String, ai_tool::ToolError> {
        match day {
            1 => Ok("reserved".into()),
            _ => Err(ai_tool::ToolError::retry(
                "reserve",
                format!("day {day} is taken"),
            )),
        }
    }

    /// Lists the keys, in an order when one is given; served as an MCP task.
    #[ai_tool(max_result_bytes = 20_000, task)]
    fn keys(&self, order: Option<Order>) -> String {
        format!("{order:?}")
    }

    /// Counts the keys, for code the model runs; loaded when a search finds it.
    #[ai_tool(
        defer_loading,
        callers = "code",
        icon = "https://example.com/count.svg",
        task = "required"
    )]
    fn count(&self) -> usize {
        2
    }
}

/// A service whose tools are declared as one namespace.
pub struct Trips;

/// Plans trips: the weather and the flights.
#[ai_tools(namespace = "trips")]
impl Trips {
    /// Tomorrow's weather in a city.
    #[ai_tool]
    fn forecast(&self, city: String) -> String {
        format!("rain in {city}")
    }
}

#[test]
fn an_impls_namespace_is_described_by_its_doc_comment() {
    let exec = serving(Trips);
    let forecast = exec.spec("forecast").unwrap();
    assert_eq!(
        forecast.metadata.namespace,
        Some(ai_tool::Namespace {
            name: "trips".into(),
            description: "Plans trips: the weather and the flights.".into(),
        })
    );
    assert_eq!(exec.spec("letters").unwrap().metadata.namespace, None);
    let declared = exec.declarations(Format::OpenAiResponses, &DeclareOptions::default());
    let group = declared
        .tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "namespace");
    assert_eq!(group.unwrap()["tools"][0]["name"], "forecast");
}

/// A parameter type as argument types usually are: read, never written (not `Serialize`).
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Asc,
    Desc,
}

/// Returns borrows for `'static` inside a type.
#[ai_tool]
fn letters() -> Vec<&'static str> {
    vec!["a", "b"]
}

fn executor() -> Executor {
    serving(Kv)
}

#[tokio::test]
async fn a_method_with_lifetimes_is_called_as_written() {
    let out = executor().execute("get", json!({ "key": "a" })).await;
    assert_eq!(out.unwrap().to_text(), "A");
}

#[tokio::test]
async fn a_borrowed_return_with_a_named_lifetime_is_text() {
    let out = executor().execute("name", json!({})).await;
    assert_eq!(out.unwrap().to_text(), "kv");
}

#[tokio::test]
async fn a_tools_own_tool_error_is_passed_on_as_it_is() {
    let exec = executor();
    assert_eq!(exec.spec("reserve").unwrap().metadata.max_retries, Some(2));
    let err = exec
        .execute("reserve", json!({ "day": 2 }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ai_tool::ToolErrorKind::Retry, "{err}");
    assert!(err.to_model_text().contains("day 2 is taken"), "{err}");
}

#[test]
fn defer_loading_and_callers_are_the_tools_own() {
    let exec = executor();
    let count = exec.spec("count").unwrap();
    assert!(count.metadata.defer_loading);
    assert_eq!(count.metadata.callers, ai_tool::Callers::Code);
    assert_eq!(
        count.metadata.icons,
        [ai_tool::Icon::new("https://example.com/count.svg")]
    );
    let get = exec.spec("get").unwrap();
    assert!(!get.metadata.defer_loading);
    assert_eq!(get.metadata.callers, ai_tool::Callers::Model);
    assert_eq!(get.metadata.task, ai_tool::TaskSupport::Forbidden);
    assert_eq!(count.metadata.task, ai_tool::TaskSupport::Required);
    let keys = exec.spec("keys").unwrap();
    assert_eq!(keys.metadata.task, ai_tool::TaskSupport::Optional);
}

#[test]
fn max_result_bytes_is_the_tools_own_cap() {
    let exec = executor();
    let keys = exec.spec("keys").unwrap();
    assert_eq!(keys.metadata.max_result_bytes, Some(20_000));
    assert_eq!(exec.spec("get").unwrap().metadata.max_result_bytes, None);
}

#[test]
fn a_tool_compiled_out_is_not_registered() {
    let exec = executor();
    let mut names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "also", "always", "camel", "count", "get", "indented", "keys", "letters", "name",
            "reserve", "spelled"
        ]
    );
    // A method the `cfg_attr` did not make a tool is still a method.
    assert_eq!(Kv.never(), 5);
}

#[tokio::test]
async fn self_written_out_and_cfg_attr_tools_are_called() {
    let exec = executor();
    assert_eq!(
        exec.execute("spelled", json!({})).await.unwrap().to_text(),
        "3"
    );
    assert_eq!(
        exec.execute("always", json!({})).await.unwrap().to_text(),
        "4"
    );
    assert_eq!(
        exec.execute("also", json!({})).await.unwrap().to_text(),
        "6"
    );
}

#[tokio::test]
async fn static_borrows_inside_a_returned_type_are_json() {
    let out = executor().execute("letters", json!({})).await.unwrap();
    assert_eq!(out.structured, Some(json!(["a", "b"])));
}

#[tokio::test]
async fn a_parameter_type_from_macro_rules_is_read_as_written() {
    let exec = serving(Loud);
    let out = exec.execute("shout", json!({ "text": "hi" })).await;
    assert_eq!(out.unwrap().to_text(), "HI");
}

#[tokio::test]
async fn camel_case_parameters_keep_their_names() {
    let exec = executor();
    let properties = &exec.spec("camel").unwrap().parameters["properties"];
    assert!(properties.get("userId").is_some(), "{properties}");
    let out = exec.execute("camel", json!({ "userId": 40 })).await;
    assert_eq!(out.unwrap().to_text(), "42");
}

#[test]
fn a_doc_comments_indentation_is_kept() {
    let exec = executor();
    let spec = exec.spec("indented").unwrap();
    assert_eq!(spec.description, "Shows code:\n\n    let x = 1;");
}

#[tokio::test]
async fn an_option_of_a_type_that_is_not_serialize_may_be_left_out() {
    let exec = executor();
    let spec = exec.spec("keys").unwrap();
    assert_eq!(spec.parameters.get("required"), None, "{}", spec.parameters);
    let left_out = exec.execute("keys", json!({})).await.unwrap();
    assert_eq!(left_out.to_text(), "None");
    let given = exec
        .execute("keys", json!({ "order": "desc" }))
        .await
        .unwrap();
    assert_eq!(given.to_text(), "Some(Desc)");
    let null = exec
        .execute("keys", json!({ "order": null }))
        .await
        .unwrap();
    assert_eq!(null.to_text(), "None");
}
