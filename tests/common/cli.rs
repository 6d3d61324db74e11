//! The `ai-tool` command line, run in the test's process through `cli::run_with`.

use ai_tool::ExecutorBuilder;

/// Runs `ai-tool ARGS...` with `tools`: the exit code, standard output and standard error.
pub fn run(tools: impl Into<ExecutorBuilder>, args: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut argv = vec!["ai-tool"];
    argv.extend_from_slice(args);
    let code = ai_tool::cli::run_with(argv, tools, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}
