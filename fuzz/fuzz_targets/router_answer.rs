//! The router's reading of a model's evaluation answer (`read_router_answer`): arbitrary text,
//! as a model may answer. What must hold: no panic; a score from 0 to 100; a score above 0 only
//! when the answer was read (no problem); no parameter named `score` or holding `null`.
#![no_main]

use ai_tool::router::fuzzing::read_router_answer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (score, params, problem) = read_router_answer(&text);
    assert!(score <= 100, "score {score}");
    if problem.is_some() {
        assert_eq!(score, 0, "a score with a problem: {problem:?}");
    }
    assert!(!params.contains_key("score"), "{params:?}");
    assert!(params.values().all(|v| !v.is_null()), "{params:?}");
});
