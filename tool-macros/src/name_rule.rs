//! The macro checks names with its own copy of the portable rule ([`valid::check_name`],
//! [`valid::check_prefix`]), since a proc-macro crate does not depend on `tool-core`. These tests
//! hold that copy to the one table, `tool-core/src/name.rs`, compiled in here as it is.

use crate::valid;

#[path = "../../tool-core/src/name.rs"]
#[allow(dead_code)]
mod table;

/// Names at the edges of the rule: every first and later character class, the length limit,
/// and characters that look allowed but are not.
fn names() -> Vec<String> {
    let mut names: Vec<String> = [
        "",
        "a",
        "Z",
        "_",
        "-",
        "9",
        "get_weather",
        "get-weather-2",
        "_private",
        "2fast",
        "files.read",
        "a b",
        "a/b",
        "é",
        "aé",
        "café",
        "a\u{0}",
        "tab\t",
        "ünïcode",
        "users_v2",
    ]
    .map(str::to_owned)
    .to_vec();
    for len in [62, 63, 64, 65, 128] {
        names.push("x".repeat(len));
        names.push(format!("_{}", "9".repeat(len - 1)));
    }
    for c in (0u8..128).map(char::from).chain(['é', 'ß', '٣', '１']) {
        names.push(c.to_string());
        names.push(format!("a{c}"));
        names.push(format!("{c}a"));
    }
    names
}

#[test]
fn the_macros_name_rule_is_the_portable_rule_of_the_table() {
    for name in names() {
        assert_eq!(
            valid::check_name(&name).is_ok(),
            table::PORTABLE.accepts(&name),
            "{name:?}"
        );
    }
}

#[test]
fn a_prefix_is_accepted_when_prefix_underscore_name_can_be() {
    for prefix in names() {
        let can_start_a_name =
            !prefix.is_empty() && table::PORTABLE.accepts(&format!("{prefix}_x"));
        assert_eq!(
            valid::check_prefix(&prefix).is_ok(),
            can_start_a_name,
            "{prefix:?}"
        );
    }
}
