//! `execute` with arbitrary `serde_json::Value`s, borrowed and given away, sometimes nested past
//! the nesting limit: one verdict for `execute` (both ways) and `validate`, and never a panic of
//! the executor or a stack overflow.
#![no_main]

#[path = "../common/mod.rs"]
mod common;

use ai_tool::ToolErrorKind;
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(pick) = u.arbitrary::<u8>() else {
        return;
    };
    let tool = common::TOOLS[pick as usize % common::TOOLS.len()];
    let Ok(mut args) = common::object(&mut u, 5) else {
        return;
    };
    // Now and then, a value far past the nesting limit.
    if u.ratio(1, 16).unwrap_or(false) {
        let depth = u.int_in_range(100..=3000).unwrap_or(200);
        args.insert("any".into(), common::nested(depth));
    }
    let args = Value::Object(args);
    let exec = common::executor();
    let validated = exec.validate(tool, &args);
    let borrowed = common::block_on(exec.execute(tool, &args));
    common::check_result(tool, &borrowed);
    let given = common::block_on(exec.execute(tool, args));
    common::check_result(tool, &given);
    assert_eq!(
        borrowed
            .as_ref()
            .map(|o| o.to_text())
            .map_err(|e| e.to_string()),
        given
            .as_ref()
            .map(|o| o.to_text())
            .map_err(|e| e.to_string()),
        "{tool}"
    );
    match (&validated, &borrowed) {
        (Ok(()), Ok(_)) => {}
        (Ok(()), Err(e)) if e.kind() == ToolErrorKind::NotExecutable => {}
        (Err(v), Err(e)) => assert_eq!(v.to_string(), e.to_string(), "{tool}"),
        (v, e) => panic!("{tool}: validate says {v:?}, execute {e:?}"),
    }
});
