//! Tool names are one namespace per executor, not per binary: two services' tools may share a
//! name as long as one executor does not expose both, and `#[ai_tools(prefix = "..")]` names a
//! service's tools apart when both are wanted.
//! (A binary of its own, since registration is global to the binary.)

use std::sync::Arc;

use ai_tool::prelude::*;
use ai_tool::BuildProblem;
use serde::Serialize;
use serde_json::json;

#[derive(Debug, Serialize)]
pub struct User {
    id: u32,
}

#[derive(Debug, Serialize)]
pub struct Order {
    id: u32,
    total: u32,
}

pub struct Users;

#[ai_tools]
impl Users {
    /// Gets a user.
    #[ai_tool]
    fn get(&self, id: u32) -> User {
        User { id }
    }
}

pub struct Orders;

#[ai_tools]
impl Orders {
    /// Gets an order.
    #[ai_tool]
    fn get(&self, id: u32) -> Order {
        Order { id, total: 10 }
    }
}

// For `Users::get`: `Orders::get` returns another type, which matters only where it is exposed.
#[ai_tool_converter("get")]
fn user_text(user: User) -> ToolOutput {
    ToolOutput::text(format!("user #{}", user.id))
}

pub struct Billing;

#[ai_tools(prefix = "billing")]
impl Billing {
    /// Gets an invoice's amount.
    #[ai_tool]
    fn get(&self, id: u32) -> u32 {
        id * 100
    }

    /// Lists the invoices.
    #[ai_tool(name = "list_all")]
    fn list(&self) -> Vec<u32> {
        vec![1, 2]
    }
}

#[ai_tool_converter("billing_get")]
fn amount_text(amount: u32) -> ToolOutput {
    ToolOutput::text(format!("{amount} cents"))
}

fn names(exec: &Executor) -> Vec<&str> {
    exec.tools().map(|t| t.name.as_str()).collect()
}

#[tokio::test]
async fn a_name_shared_with_a_service_not_provided_is_no_conflict() {
    let exec = Executor::builder()
        .service(Arc::new(Users))
        .build()
        .expect("only `Users::get` is exposed");
    assert_eq!(names(&exec), ["get"]);
    let out = exec.execute("get", json!({ "id": 7 })).await.unwrap();
    assert_eq!(out.to_text(), "user #7");
}

#[test]
fn nothing_provided_exposes_no_service_tool_and_builds() {
    let exec = Executor::builder().build().unwrap();
    assert!(names(&exec).is_empty());
}

#[tokio::test]
async fn a_dynamic_tool_may_take_the_name_of_a_tool_not_exposed() {
    let dynamic = DynamicTool::new(
        "get",
        "Gets something at run time.",
        json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        |_, _| async { Ok(ToolOutput::text("dynamic")) },
    );
    let exec = Executor::builder().tool(dynamic).build().unwrap();
    let out = exec.execute("get", json!({})).await.unwrap();
    assert_eq!(out.to_text(), "dynamic");
}

#[test]
fn two_exposed_tools_with_one_name_are_a_build_error_naming_both() {
    let err = Executor::builder()
        .service(Arc::new(Users))
        .service(Arc::new(Orders))
        .build()
        .unwrap_err();
    let duplicates: Vec<String> = err
        .problems
        .iter()
        .filter(|p| matches!(p, BuildProblem::DuplicateTool { .. }))
        .map(ToString::to_string)
        .collect();
    assert_eq!(duplicates.len(), 1, "{err}");
    assert!(duplicates[0].contains("two tools are named `get`"), "{err}");
    assert!(
        duplicates[0].contains("namespaces.rs:30") && duplicates[0].contains("namespaces.rs:41"),
        "{err}"
    );
}

#[tokio::test]
async fn a_prefix_names_the_tools_of_its_impl_block_apart() {
    let exec = Executor::builder()
        .service(Arc::new(Users))
        .service(Arc::new(Billing))
        .build()
        .expect("`get` and `billing_get` are two names");
    assert_eq!(names(&exec), ["billing_get", "billing_list_all", "get"]);
    let out = exec
        .execute("billing_get", json!({ "id": 3 }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "300 cents", "the converter finds its tool");
    let out = exec.execute("billing_list_all", json!({})).await.unwrap();
    assert_eq!(out.structured, Some(json!([1, 2])));
    assert_eq!(
        exec.execute("get", json!({ "id": 1 }))
            .await
            .unwrap()
            .to_text(),
        "user #1"
    );
}
