//! The `ai-tool` command line, also callable from your own binary.
pub fn todo() {}
