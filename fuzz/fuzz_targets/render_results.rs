//! `render_results` over arbitrary calls and outcomes (text, JSON, attachments of every kind, marked errors, every
//! kind of `ToolError`), with aliases from real declarations: every format renders JSON that
//! serializes, and never panics.
#![no_main]

#[path = "../common/mod.rs"]
mod common;

use std::time::Duration;

use ai_tool::prelude::*;
use ai_tool::provider::{self, CallResult};
use ai_tool::{Content, Violation};
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn output(u: &mut Unstructured<'_>) -> arbitrary::Result<ToolOutput> {
    let mut out = match u.int_in_range(0..=3)? {
        0 => ToolOutput::text(u.arbitrary::<String>()?),
        1 => ToolOutput::json(common::value(u, 4)?),
        2 => ToolOutput::error(u.arbitrary::<String>()?),
        _ => ToolOutput::empty(),
    };
    for _ in 0..u.int_in_range(0..=3)? {
        out = out.with_content(attachment(u)?);
    }
    Ok(out)
}

/// An attachment of any kind, with arbitrary data, media types, names and URIs (base64 that
/// does not decode, media types with parameters, names of any characters).
fn attachment(u: &mut Unstructured<'_>) -> arbitrary::Result<Content> {
    let mime_type: String = match u.int_in_range(0..=3)? {
        0 => "application/pdf".into(),
        1 => "text/plain; charset=utf-8".into(),
        2 => "image/png".into(),
        _ => u.arbitrary()?,
    };
    Ok(match u.int_in_range(0..=6)? {
        0 => Content::image(u.arbitrary::<String>()?, mime_type),
        1 => Content::audio(u.arbitrary::<String>()?, mime_type),
        2 => Content::file(u.arbitrary::<String>()?, mime_type, u.arbitrary::<String>()?),
        3 => Content::file_url(u.arbitrary::<String>()?, mime_type),
        4 => Content::ResourceLink {
            uri: u.arbitrary()?,
            name: u.arbitrary()?,
            title: u.arbitrary()?,
            description: u.arbitrary()?,
            mime_type: u.arbitrary()?,
        },
        5 => Content::text_resource(u.arbitrary::<String>()?, u.arbitrary::<String>()?),
        _ => Content::blob_resource(u.arbitrary::<String>()?, mime_type, u.arbitrary::<String>()?),
    })
}

fn error(u: &mut Unstructured<'_>, tool: &str) -> arbitrary::Result<ToolError> {
    let tool = tool.to_owned();
    Ok(match u.int_in_range(0..=8)? {
        0 => ToolError::UnknownTool {
            name: tool,
            suggestions: u.arbitrary()?,
        },
        1 => ToolError::InvalidArguments {
            tool,
            violations: (0..u.int_in_range(0..=30)?)
                .map(|_| {
                    Ok(Violation {
                        pointer: u.arbitrary()?,
                        message: u.arbitrary()?,
                    })
                })
                .collect::<arbitrary::Result<_>>()?,
        },
        2 => ToolError::ArgumentsTooLarge {
            tool,
            size: u.arbitrary()?,
            limit: u.arbitrary()?,
        },
        3 => ToolError::failed(tool, u.arbitrary::<String>()?),
        4 => ToolError::Panicked {
            tool,
            message: u.arbitrary()?,
        },
        5 => ToolError::TimedOut {
            tool,
            after: Duration::from_millis(u.arbitrary()?),
        },
        6 => ToolError::Cancelled { tool },
        7 => ToolError::retry(tool, u.arbitrary::<String>()?),
        _ => ToolError::NotExecutable { tool },
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut results = Vec::new();
    while results.len() < 8 && u.ratio(3, 4).unwrap_or(false) {
        let Ok(name) = u.arbitrary::<String>() else {
            break;
        };
        let name = if u.ratio(1, 2).unwrap_or(false) {
            common::TOOLS[name.len() % common::TOOLS.len()].to_owned()
        } else {
            name
        };
        let id: Option<String> = u.arbitrary().unwrap_or(None);
        let arguments = common::value(&mut u, 3).unwrap_or(Value::Null);
        let result = if u.ratio(1, 2).unwrap_or(false) {
            output(&mut u).map(Ok)
        } else {
            error(&mut u, &name).map(Err)
        };
        let Ok(result) = result else { break };
        results.push(CallResult {
            call: ToolCall {
                id,
                name,
                arguments,
            },
            result,
        });
    }
    for format in Format::ALL {
        for strict in [false, true] {
            let aliases = common::aliases(format, strict);
            let rendered = provider::render_results(format, &results, aliases);
            let _ = serde_json::to_string(&rendered).expect("results serialize");
        }
    }
});
