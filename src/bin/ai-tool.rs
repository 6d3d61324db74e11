//! `ai-tool`: list, call and validate tools from the command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    match ai_tool::Executor::builder().build() {
        Ok(executor) => ai_tool::cli::run(executor),
        Err(e) => {
            let text = e.to_string();
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            eprintln!("error: {}", lines.join(" "));
            ExitCode::from(2)
        }
    }
}
