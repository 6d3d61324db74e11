//! `execute` with arbitrary text as the arguments: the first byte picks the tool, the rest is
//! the text. Whatever the text, the call ends in an output or a refusal (never a panic of the
//! executor), and the text's verdict is the verdict on the same JSON as a value, by `execute`
//! and by `validate`. Text that is not JSON goes through the agent loop's JSON repair too.
#![no_main]

#[path = "../common/mod.rs"]
mod common;

use ai_tool::ToolErrorKind;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let tool = common::TOOLS[pick as usize % common::TOOLS.len()];
    let exec = common::executor();
    let from_text = common::block_on(exec.execute(tool, text));
    common::check_result(tool, &from_text);
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        // The agent loop's repair mends what it says it mends, into JSON, or gives up.
        if let Some((mended, fixes)) = ai_tool::repair::repair_json(text) {
            assert!(
                !fixes.is_empty(),
                "{text:?} mended by nothing into {mended}"
            );
        }
        // Not JSON: refused, naming the JSON error.
        if let Err(err) = &from_text {
            assert!(
                matches!(
                    err.kind(),
                    ToolErrorKind::InvalidArguments
                        | ToolErrorKind::UnknownTool
                        | ToolErrorKind::ArgumentsTooLarge
                ),
                "{err:?}"
            );
        }
        assert!(
            from_text.is_err() || text.trim().is_empty(),
            "{tool}: {text:?} ran"
        );
        return;
    };
    let from_value = common::block_on(exec.execute(tool, &value));
    common::check_result(tool, &from_value);
    let validated = exec.validate(tool, &value);
    if text.len() <= 4096 {
        assert_eq!(
            from_text
                .as_ref()
                .map(|o| o.to_text())
                .map_err(|e| e.kind()),
            from_value
                .as_ref()
                .map(|o| o.to_text())
                .map_err(|e| e.kind()),
            "{tool}: {text:?}"
        );
    }
    match (&validated, &from_value) {
        (Ok(()), Ok(_)) => {}
        (Ok(()), Err(e)) if e.kind() == ToolErrorKind::NotExecutable => {}
        (Err(v), Err(e)) => assert_eq!(v.to_string(), e.to_string(), "{tool}: {value}"),
        (v, e) => panic!("{tool}: validate says {v:?}, execute {e:?}, for {value}"),
    }
});
