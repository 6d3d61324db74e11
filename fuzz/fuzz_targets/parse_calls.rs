//! A provider's response as arbitrary JSON text, read as every API's: `parse_calls` (with
//! aliases and strict encodings from real declarations) and `parse_hosted_results` answer calls
//! or a `ParseError`, never a panic; the calls found execute and render.
#![no_main]

#[path = "../common/mod.rs"]
mod common;

use ai_tool::prelude::*;
use ai_tool::provider::{self, ResponseLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let exec = common::executor();
    for format in Format::ALL {
        let Ok(response) = provider::read_response(format, text, &ResponseLimits::default()) else {
            continue;
        };
        for strict in [false, true] {
            let aliases = common::aliases(format, strict);
            let _ = provider::parse_hosted_results(format, &response);
            let Ok(calls) = provider::parse_calls(format, &response, aliases) else {
                continue;
            };
            let results = common::block_on(exec.execute_calls(&calls));
            for result in &results {
                common::check_result(&result.call.name, &result.result);
            }
            let rendered = provider::render_results(format, &results, aliases);
            let _ = serde_json::to_string(&rendered).expect("results serialize");
        }
    }
});
