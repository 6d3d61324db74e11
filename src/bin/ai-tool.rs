//! `ai-tool`: list, call and validate tools from the command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    ai_tool::cli::run(ai_tool::Executor::builder())
}
