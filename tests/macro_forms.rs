//! Method forms the macro takes as written: lifetimes the call infers, a tool compiled out by
//! `#[cfg]`, parameters in camel case, a doc comment's indentation.

use ai_tool::prelude::*;
use serde_json::json;

pub struct Kv;

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

    /// Shows code:
    ///
    ///     let x = 1;
    #[ai_tool]
    fn indented(&self) -> u32 {
        0
    }
}

fn executor() -> Executor {
    Executor::builder()
        .service(std::sync::Arc::new(Kv))
        .build()
        .expect("the tools build")
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

#[test]
fn a_tool_compiled_out_is_not_registered() {
    let exec = executor();
    let mut names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["camel", "get", "indented", "name"]);
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
