//! Tools as the builder keeps them until `build()`: what `.tool(..)` takes ([`IntoTool`]) and
//! the [`NewTool`] it becomes, checked into the executor's entries.

use std::time::Duration;

use tool_core::name::NameRule;
use tool_core::schema::SchemaLimits;
use tool_core::ToolSpec;

use super::build_error::{source_of, BuildProblem};
use super::{Callable, Entry};
use crate::arguments::ArgumentValidator;
use crate::dynamic::DynamicTool;
use crate::registration::{Invoke, Service};
use crate::tool::{Tool, TypedTool};

/// What [`ExecutorBuilder::tool`](crate::ExecutorBuilder::tool) takes: a hand-written [`Tool`] or a [`DynamicTool`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool the executor can add",
    label = "`.tool(..)` takes a hand-written tool or a `DynamicTool`",
    note = "implement `Tool` for `{Self}`, or make a `DynamicTool::new(name, description, schema, closure)`"
)]
pub trait IntoTool: sealed::IntoNewTool {}

impl<T: Tool> IntoTool for T {}
impl IntoTool for DynamicTool {}

/// The tool as the builder keeps it; `file` and `line` are where it was added.
pub(super) fn into_new_tool(tool: impl IntoTool, file: &'static str, line: u32) -> NewTool {
    sealed::IntoNewTool::into_new_tool(tool, file, line)
}

mod sealed {
    use super::NewTool;

    /// The conversion behind [`IntoTool`](super::IntoTool), kept out of the public surface.
    pub trait IntoNewTool {
        /// The tool as the builder keeps it; `file` and `line` are where it was added.
        fn into_new_tool(self, file: &'static str, line: u32) -> NewTool;
    }

    impl<T: super::Tool> IntoNewTool for T {
        fn into_new_tool(self, file: &'static str, line: u32) -> NewTool {
            NewTool::Typed(super::TypedTool::new(self, file, line))
        }
    }

    impl IntoNewTool for super::DynamicTool {
        fn into_new_tool(self, _file: &'static str, _line: u32) -> NewTool {
            NewTool::Dynamic(self)
        }
    }
}

/// A tool added on the builder, as it is kept until `build()`.
pub enum NewTool {
    /// A closure or a declaration: names in MCP's wider alphabet, the Full stage.
    Dynamic(DynamicTool),
    /// A hand-written tool: names as `#[ai_tool]`'s, called as a macro tool is.
    Typed(TypedTool),
}

impl NewTool {
    pub(super) fn spec_mut(&mut self) -> &mut ToolSpec {
        match self {
            NewTool::Dynamic(tool) => &mut tool.spec,
            NewTool::Typed(tool) => &mut tool.spec,
        }
    }

    /// The executor's entry for the tool, or the problems that keep it out: a name its rule
    /// refuses, a schema that cannot be used, or a spec that breaks `ToolSpec::check`.
    pub(super) fn into_entry(
        self,
        limits: &SchemaLimits,
        problems: &mut Vec<BuildProblem>,
    ) -> Option<Entry> {
        match self {
            NewTool::Dynamic(DynamicTool { spec, invoke }) => {
                let callable = invoke.map_or(Callable::Declared, Callable::Dynamic);
                checked_entry(spec, tool_core::name::WIDE, callable, limits, problems)
            }
            NewTool::Typed(tool) => {
                let spec = tool.spec;
                if let Some(problem) = tool.schema_error {
                    problems.push(BuildProblem::BadSchema {
                        name: spec.name.clone(),
                        defined_in: source_of(&spec),
                        problem,
                    });
                    return None;
                }
                let callable = Callable::Registered {
                    invoke: Invoke::Async(tool.invoke),
                    service: Some(Service::new(tool.value)),
                    external: None,
                };
                checked_entry(spec, tool_core::name::PORTABLE, callable, limits, problems)
            }
        }
    }
}

fn checked_entry(
    spec: ToolSpec,
    names: NameRule,
    callable: Callable,
    limits: &SchemaLimits,
    problems: &mut Vec<BuildProblem>,
) -> Option<Entry> {
    if let Err(e) = names.check(&spec.name) {
        problems.push(BuildProblem::BadName {
            defined_in: source_of(&spec),
            problem: e,
        });
        return None;
    }
    let schema = match ArgumentValidator::compile(&spec.parameters, limits) {
        Ok(schema) => schema,
        Err(problem) => {
            problems.push(BuildProblem::BadSchema {
                name: spec.name.clone(),
                defined_in: source_of(&spec),
                problem,
            });
            // A schema refused for its depth may be deeper than dropping it recursively allows.
            tool_core::nesting::dismantle(spec.parameters);
            return None;
        }
    };
    let found = spec.problems();
    if !found.is_empty() {
        let defined_in = source_of(&spec);
        problems.extend(found.into_iter().map(|problem| BuildProblem::BadSpec {
            name: spec.name.clone(),
            defined_in: defined_in.clone(),
            problem,
        }));
        return None;
    }
    // A dynamic tool's structured results are checked against its output schema; a typed
    // tool's follow from its Rust type. (Results given from outside are checked by
    // `Executor::check_output`, which compiles the schema then.)
    let output = match (&callable, &spec.output_schema) {
        (Callable::Dynamic(_), Some(output)) => match ArgumentValidator::compile(output, limits) {
            Ok(check) => Some(check),
            Err(problem) => {
                problems.push(BuildProblem::BadOutputSchema {
                    name: spec.name.clone(),
                    defined_in: source_of(&spec),
                    problem,
                });
                return None;
            }
        },
        _ => None,
    };
    Some(Entry {
        name: spec.name.as_str().into(),
        timeout: spec.metadata.timeout_ms.map(Duration::from_millis),
        callable,
        schema,
        output,
        spec,
    })
}
