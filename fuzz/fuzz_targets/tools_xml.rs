//! The router's tools file reader (`tool_router::ToolsFile::parse`) on
//! arbitrary text: NLWeb's `tools.xml`, or the same content as TOML or JSON, the first byte
//! picking which. What must hold: no panic; an error that names the file (and, for a syntax
//! error, a line and column inside the text), or a tools file a router builds from (with the
//! schema.org hierarchy and the file's own types), whose candidates for each declared type
//! are tools it declared.
#![no_main]

use ai_tool::agent::ScriptedModel;
use ai_tool::router::{Router, ToolsFile, ToolsFileError, ToolsFileFormat};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz/tools.decl";

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let format = match pick % 3 {
        0 => ToolsFileFormat::Xml,
        1 => ToolsFileFormat::Toml,
        _ => ToolsFileFormat::Json,
    };
    let declared = match ToolsFile::parse(text, format, FILE) {
        Ok(declared) => declared,
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with(FILE),
                "the error names no file: {message}"
            );
            if let ToolsFileError::Syntax { line, column, .. } = &error {
                let lines = text.split('\n').count();
                assert!(
                    (1..=lines).contains(line) && *column >= 1,
                    "line {line}, column {column} outside a text of {lines} lines: {message}"
                );
            }
            return;
        }
    };
    for tool in &declared.tools {
        assert!(
            !tool.name.trim().is_empty(),
            "a tool without a name was accepted"
        );
        assert_eq!(tool.origin.file.as_deref(), Some(FILE), "{}", tool.origin);
        let _ = serde_json::to_string(tool).expect("a declared tool serializes");
    }
    for warning in &declared.warnings {
        assert!(warning.to_string().starts_with(FILE), "{warning}");
    }
    let types: Vec<String> = declared
        .tools
        .iter()
        .map(|t| t.schema_type.clone())
        .collect();
    let enabled = declared.enabled().count();
    let router = Router::builder(ScriptedModel::new())
        .tools_file(declared)
        .build()
        .unwrap_or_else(|e| panic!("a tools file that was read does not build a router: {e}"));
    assert_eq!(router.tools().count(), enabled);
    for schema_type in &types {
        for candidate in router.candidates(schema_type) {
            assert!(router.tools().any(|t| t.name == candidate.name));
        }
        let _ = router.types().lineage(schema_type);
    }
});
