//! Names, descriptions, metadata and which tools are exposed.

use super::*;

#[test]
fn lists_every_tool_in_name_order() {
    let exec = executor();
    let names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "add",
            "check",
            "do_something",
            "get_demo",
            "get_other",
            "greet",
            "motto",
            "search"
        ]
    );
}

#[test]
fn description_comes_from_attribute_or_doc_comment() {
    let exec = executor();
    assert_eq!(
        spec(&exec, "do_something").description,
        "has input but no return"
    );
    assert_eq!(spec(&exec, "check").description, "Checks a complex input.");
    assert_eq!(spec(&exec, "add").description, "Adds two numbers");
}

#[test]
fn metadata_from_the_attribute_is_in_the_spec() {
    let exec = executor();
    let m = &spec(&exec, "greet").metadata;
    assert_eq!(m.title.as_deref(), Some("Greeter"));
    assert_eq!(m.category.as_deref(), Some("social"));
    assert_eq!(m.purposes, ["greeting", "politeness"]);
    assert!(m.selectable);
    assert_eq!(m.keywords, ["hello", "welcome"]);
    assert_eq!(m.examples, ["say hi to Ann"]);
    assert_eq!(m.hints.read_only, Some(true));
    assert_eq!(m.hints.idempotent, Some(true));
    assert_eq!(m.hints.destructive, Some(false));
    assert_eq!(m.hints.open_world, Some(false));
    assert!(m.requires_approval);
    assert!(!spec(&exec, "add").metadata.requires_approval);
    assert_eq!(m.strict, Some(false));
    assert_eq!(spec(&exec, "add").metadata.strict, None);
    assert!(
        !spec(&exec, "add").metadata.selectable,
        "tools are system tools unless selectable"
    );
    match &m.source {
        Some(ai_tool::ToolSource::Macro { file, line, .. }) => {
            assert!(
                file.ends_with("demo_service/main.rs") && *line > 100,
                "{file}:{line}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_tool_whose_service_is_not_provided_is_not_exposed() {
    let exec = Executor::builder().build().unwrap();
    let names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add"]);
}

#[test]
fn require_all_services_names_the_tool_and_the_missing_service() {
    let err = Executor::builder()
        .require_all_services()
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tool `check`") && err.contains("DemoService"),
        "{err}"
    );
    assert!(err.contains("demo_service/main.rs"), "{err}");
}

#[test]
fn a_tools_own_strict_setting_wins_over_the_declarations_options() {
    let exec = executor();
    // `greet` says `strict = false`: never strict, and no note, as it was not asked.
    let asked = DeclareOptions {
        strict: true,
        ..DeclareOptions::default()
    };
    let declared = exec.declarations(Format::OpenAiChat, &asked);
    let strict = |name: &str| {
        let tools = declared.tools.as_array().unwrap();
        let tool = tools.iter().find(|t| t["function"]["name"] == name);
        tool.unwrap()["function"]["strict"].clone()
    };
    assert_eq!(
        (strict("greet"), strict("add")),
        (json!(false), json!(true))
    );
    assert!(
        !declared.notes.iter().any(|n| n.contains("`greet`")),
        "{:?}",
        declared.notes
    );

    // The other way round: a tool that asks for strict mode gets it without the options.
    let tool = common::tools::noop(
        "lookup",
        "Looks a word up",
        json!({ "type": "object", "properties": { "word": { "type": "string" } }, "required": ["word"] }),
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool_with(tool, |tool| tool.strict(true))
        .build()
        .unwrap();
    let declared = exec.declarations(Format::Anthropic, &DeclareOptions::default());
    assert_eq!(
        declared.tools[0]["strict"],
        json!(true),
        "{}",
        declared.tools
    );
}
