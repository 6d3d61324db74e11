//! Catalog text: the first line is read as a catalog line, the rest as a call's arguments. A
//! line that loads is compiled into an executor; its schema is canonicalized and put into every
//! provider profile, and a profile's output must pass that profile's checker; the executor is
//! asked to declare it in every format, strict and not, and to validate the arguments.
#![no_main]

use std::path::Path;

use ai_tool::prelude::*;
use ai_tool::{catalog, profile, schema};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (line, args) = text.split_once('\n').unwrap_or((text, "{}"));
    let Ok(entries) = catalog::parse_str(line, Path::new("fuzz.jsonl")) else {
        return;
    };
    for entry in &entries {
        let parameters = &entry.spec.parameters;
        if let Ok(canonical) = schema::canonical_arguments(parameters.clone()) {
            let _ = schema::check_is_schema(&canonical);
        }
        if let Ok(strict) = profile::openai_strict(parameters) {
            if let Err(findings) = profile::check_openai_strict(&strict) {
                panic!("openai-strict output fails its checker: {findings:?}\n{strict}");
            }
        }
        if let Ok(strict) = profile::anthropic_strict(parameters) {
            if let Err(findings) = profile::check_anthropic_strict(&strict) {
                panic!("anthropic-strict output fails its checker: {findings:?}\n{strict}");
            }
        }
        if let Ok(gemini) = profile::gemini(parameters) {
            if let Err(findings) = profile::check_gemini(&gemini) {
                panic!("gemini output fails its checker: {findings:?}\n{gemini}");
            }
        }
    }
    let Ok(exec) = Executor::builder()
        .registered_tools(false)
        .catalog(entries)
        .build()
    else {
        return;
    };
    for format in Format::ALL {
        for strict in [false, true] {
            let options = DeclareOptions {
                strict,
                ..DeclareOptions::default()
            };
            let declared = exec.declarations(format, &options);
            let _ = serde_json::to_string(&declared.tools).expect("declarations serialize");
        }
    }
    if let Ok(args) = serde_json::from_str::<Value>(args) {
        for spec in exec.tools() {
            let _ = exec.validate(&spec.name, &args);
        }
    }
});
