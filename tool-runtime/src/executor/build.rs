use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tool_core::catalog::CatalogLimits;
use tool_core::schema::SchemaLimits;
use tool_core::{CatalogEntry, TextInput, ToolMetadata, ToolSource, ToolSpec};

use super::added::AddedTool;
use super::build_error::{source_of, BuildError, BuildProblem};
use super::new_tool::{into_new_tool, IntoTool, NewTool};
use super::{Callable, Entry, Executor, Inner, NameIndex};
use crate::arguments::{ArgumentLimits, ArgumentValidator};
use crate::dynamic::DynamicTool;
use crate::registration::{
    ConverterRegistration, Location, Service, StaticTextInput, ToolRegistration,
};
use crate::Services;

/// The default cap on the size of one call's arguments: 1 MiB.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1 << 20;

/// Which tools a builder setting applies to, by spec.
type SpecFilter = dyn Fn(&ToolSpec) -> bool + Send + Sync;
/// Which free tools are exposed, by name and module path.
type NameFilter = dyn Fn(&str, &str) -> bool + Send + Sync;

/// Builds an [`Executor`]: which services to call tools on, which extra tools to add, and the
/// protection defaults.
pub struct ExecutorBuilder {
    services: Services,
    registered: bool,
    /// The tools added with `.tool(..)`, `.tools(..)` and `.catalog(..)`, in order.
    added: Vec<NewTool>,
    catalog_files: Vec<PathBuf>,
    default_timeout: Option<Duration>,
    max_argument_bytes: usize,
    max_argument_depth: usize,
    require_all_services: bool,
    schema_limits: SchemaLimits,
    catalog_line_bytes: usize,
    max_blocking_calls: usize,
    /// Marks tools selectable at build.
    selectable: Option<Box<SpecFilter>>,
    /// Which free `#[ai_tool]` functions are exposed, by name and module path.
    free_tools: Option<Box<NameFilter>>,
}

impl Default for ExecutorBuilder {
    fn default() -> Self {
        ExecutorBuilder {
            services: Services::default(),
            registered: true,
            added: Vec::new(),
            catalog_files: Vec::new(),
            default_timeout: None,
            max_argument_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            max_argument_depth: crate::arguments::NESTING_LIMIT,
            require_all_services: false,
            schema_limits: SchemaLimits::default(),
            catalog_line_bytes: CatalogLimits::default().line_bytes,
            max_blocking_calls: super::DEFAULT_MAX_BLOCKING_CALLS,
            selectable: None,
            free_tools: None,
        }
    }
}

impl ExecutorBuilder {
    /// Adds a service: the value whose `#[ai_tool]` methods are tools (their `&self`). Without
    /// it those tools are not exposed (or, with [`require_all_services`], `build()` fails).
    ///
    /// Why two names for one store: [`ExecutorBuilder::provide`] adds a value the same way, and
    /// both are found by type, by tools and by [`ToolContext::service`](crate::ToolContext::service).
    /// The names say at the call site what the value is for: `service` for an object whose methods
    /// are tools, `provide` for something tools use (a pool, a client, configuration).
    ///
    /// [`require_all_services`]: ExecutorBuilder::require_all_services
    pub fn service<S: std::any::Any + Send + Sync>(mut self, service: Arc<S>) -> Self {
        self.services.insert(service);
        self
    }

    /// Provides a value that tools use and reach through
    /// [`ToolContext::service`](crate::ToolContext::service): a database pool, a client,
    /// configuration. Stored as [`ExecutorBuilder::service`] stores a service (one value per
    /// type, found by type); the other name says that no tools are expected from its methods.
    pub fn provide<T: std::any::Any + Send + Sync>(self, value: Arc<T>) -> Self {
        self.service(value)
    }

    /// Adds a tool: a hand-written [`Tool`](crate::Tool) or a [`DynamicTool`].
    ///
    /// A hand-written tool's name follows `#[ai_tool]`'s rule, a dynamic tool's MCP's wider
    /// one; both are checked at `build()`, with the schema and the description. A hand-written
    /// tool's source, in build errors, is the file and line of this call.
    #[track_caller]
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        let at = std::panic::Location::caller();
        self.added.push(into_new_tool(tool, at.file(), at.line()));
        self
    }

    /// Adds a tool with metadata set in code, as `#[ai_tool(..)]` sets it: the closure is
    /// given the tool ([`AddedTool`]) and returns it with its title, category, hints...
    ///
    /// ```
    /// # use tool_runtime::{DynamicTool, Executor, ToolOutput};
    /// # let upper = DynamicTool::new("upper", "Upper-cases", serde_json::json!({"type": "object"}), |_, _| async { Ok(ToolOutput::empty()) });
    /// let builder = Executor::builder()
    ///     .tool_with(upper, |tool| tool.title("Upper case").category("Text").read_only())
    ///     .default_timeout(std::time::Duration::from_secs(5));
    /// ```
    #[track_caller]
    pub fn tool_with(
        mut self,
        tool: impl IntoTool,
        metadata: impl FnOnce(AddedTool) -> AddedTool,
    ) -> Self {
        let at = std::panic::Location::caller();
        let added = metadata(AddedTool::new(into_new_tool(tool, at.file(), at.line())));
        self.added.push(added.into_new_tool());
        self
    }

    /// Adds tools defined at run time.
    pub fn tools(mut self, tools: impl IntoIterator<Item = DynamicTool>) -> Self {
        self.added.extend(tools.into_iter().map(NewTool::Dynamic));
        self
    }

    /// Adds the tools of a [`Toolset`](crate::Toolset): combined, filtered, renamed and
    /// wrapped as it was shaped.
    pub fn toolset(self, toolset: crate::Toolset) -> Self {
        self.tools(toolset.into_tools())
    }

    /// Adds declared tools read from a catalog: they can be listed and validated against, not
    /// executed.
    pub fn catalog(self, entries: impl IntoIterator<Item = CatalogEntry>) -> Self {
        self.tools(entries.into_iter().map(|e| DynamicTool::declared(e.spec)))
    }

    /// Adds the tools of a JSON Lines catalog file, read at `build()`.
    pub fn catalog_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.catalog_files.push(path.into());
        self
    }

    /// Which free `#[ai_tool]` functions (not methods) this executor exposes, by their name and
    /// their module's path (`my_app::tools`): by default every one linked into the binary,
    /// whichever crate defined it. Methods are exposed only for the services given with
    /// [`ExecutorBuilder::service`]. An executor that serves others should say which:
    ///
    /// ```
    /// # use tool_runtime::Executor;
    /// let exec = Executor::builder()
    ///     .free_tools_where(|_name, module| module.starts_with("my_app::tools"))
    ///     .build()?;
    /// # Ok::<(), tool_runtime::BuildError>(())
    /// ```
    ///
    /// The build says what it found where (a `tracing` event at `info`: each module and its
    /// tools).
    pub fn free_tools_where(
        mut self,
        which: impl Fn(&str, &str) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.free_tools = Some(Box::new(which));
        self
    }

    /// Exposes no free `#[ai_tool]` function: only the methods of the services given, and the
    /// tools added by hand.
    pub fn no_free_tools(self) -> Self {
        self.free_tools_where(|_, _| false)
    }

    /// Whether to include the tools registered with `#[ai_tool]` in this binary (default: yes).
    pub fn registered_tools(mut self, include: bool) -> Self {
        self.registered = include;
        self
    }

    /// The time limit for calls of tools that set none themselves. A sync tool under a time
    /// limit (this one or its own `timeout`) runs on tokio's blocking pool, within
    /// [`ExecutorBuilder::max_blocking_calls`]; one under none runs in place.
    pub fn default_timeout(mut self, limit: Duration) -> Self {
        self.default_timeout = Some(limit);
        self
    }

    /// How many calls of sync tools may hold a thread of tokio's blocking pool at once (default
    /// [`DEFAULT_MAX_BLOCKING_CALLS`](super::DEFAULT_MAX_BLOCKING_CALLS), 64; at least 1);
    /// further ones wait for a slot, within their time limit. A sync call that outlives its
    /// limit keeps its thread and its slot until it returns
    /// ([`Executor::metrics`](super::Executor::metrics) counts them), so stuck tools take at
    /// most this many of the pool's 512 threads, never the threads DNS lookups and file reads
    /// need.
    pub fn max_blocking_calls(mut self, calls: usize) -> Self {
        self.max_blocking_calls = calls;
        self
    }

    /// The largest arguments accepted, in bytes of JSON (default 1 MiB).
    pub fn max_argument_bytes(mut self, limit: usize) -> Self {
        self.max_argument_bytes = limit;
        self
    }

    /// How deeply arguments may nest arrays and objects, the arguments object counting as one:
    /// fewer than `levels` (default and most 128, as `serde_json` reads text; a larger value acts
    /// as 128). Deeper arguments are `InvalidArguments` naming the limit, from text and from a
    /// value alike, before any tool code runs.
    pub fn max_argument_depth(mut self, levels: usize) -> Self {
        self.max_argument_depth = levels;
        self
    }

    /// Limits on every tool's arguments schema, checked before it is compiled: how deep it
    /// nests and how large it is with its refs followed (default [`SchemaLimits::default`]). A
    /// schema over them is a [`BuildProblem::BadSchema`] naming the limit.
    pub fn schema_limits(mut self, limits: SchemaLimits) -> Self {
        self.schema_limits = limits;
        self
    }

    /// The longest line a catalog file read at `build()` may have, in bytes (default 1 MiB,
    /// [`tool_core::catalog::DEFAULT_CATALOG_LINE_BYTES`]).
    pub fn catalog_line_bytes(mut self, limit: usize) -> Self {
        self.catalog_line_bytes = limit;
        self
    }

    /// Makes a registered tool whose service was not provided a build error, rather than
    /// leaving the tool out.
    pub fn require_all_services(mut self) -> Self {
        self.require_all_services = true;
        self
    }

    /// Marks the tools `which` names selectable: a retriever ranks them, and an agent offers
    /// them only when picked (by the retriever or by name). A tool is otherwise a system tool,
    /// always offered, unless it says `#[ai_tool(selectable)]` (catalog tools are selectable).
    /// For an application with many tools:
    ///
    /// ```
    /// # use tool_runtime::Executor;
    /// let exec = Executor::builder()
    ///     .selectable_where(|spec| spec.name != "search_tools")
    ///     .build()?;
    /// # Ok::<(), tool_runtime::BuildError>(())
    /// ```
    pub fn selectable_where(
        mut self,
        which: impl Fn(&ToolSpec) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.selectable = Some(Box::new(which));
        self
    }

    /// Checks everything and builds the executor: schemas generated and compiled, names
    /// indexed, converters matched to their tools.
    pub fn build(self) -> Result<Executor, BuildError> {
        let mut problems = Vec::new();
        let mut entries = Vec::new();
        if self.registered {
            entries.extend(self.registered_entries(&mut problems));
        }
        let mut added = self.added;
        for file in &self.catalog_files {
            let limits = CatalogLimits {
                line_bytes: self.catalog_line_bytes,
                schema: self.schema_limits,
            };
            match tool_core::catalog::read_path_within(file, Default::default(), &limits) {
                Ok(found) => added.extend(
                    found
                        .into_iter()
                        .map(|e| NewTool::Dynamic(DynamicTool::declared(e.spec))),
                ),
                Err(e) => problems.push(e.into()),
            }
        }
        entries.extend(
            added
                .into_iter()
                .filter_map(|tool| tool.into_entry(&self.schema_limits, &mut problems)),
        );
        if let Some(which) = &self.selectable {
            for entry in &mut entries {
                if which(&entry.spec) {
                    entry.spec.metadata.selectable = true;
                }
            }
        }

        let mut index = NameIndex::with_capacity_and_hasher(entries.len(), Default::default());
        for (i, entry) in entries.iter().enumerate() {
            // Only the tools this executor exposes share its namespace: a tool whose service
            // was not provided (say, one a dependency defines) takes no name.
            match index.entry(Arc::clone(&entry.name)) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                }
                std::collections::hash_map::Entry::Occupied(first) => {
                    problems.push(BuildProblem::DuplicateTool {
                        name: entry.spec.name.clone(),
                        first: source_of(&entries[*first.get()].spec),
                        second: source_of(&entry.spec),
                    });
                }
            }
        }
        if !problems.is_empty() {
            return Err(BuildError { problems });
        }
        Ok(Executor {
            inner: Arc::new(Inner {
                entries,
                index,
                services: Arc::new(self.services),
                default_timeout: self.default_timeout,
                schema_limits: self.schema_limits,
                argument_limits: ArgumentLimits::new(
                    self.max_argument_bytes,
                    self.max_argument_depth,
                ),
                blocking: super::blocking::BlockingSlots::new(self.max_blocking_calls),
            }),
        })
    }

    fn registered_entries(&self, problems: &mut Vec<BuildProblem>) -> Vec<Entry> {
        let converters = converters_by_tool(problems);
        let mut registrations: Vec<&ToolRegistration> =
            inventory::iter::<ToolRegistration>().collect();
        registrations.sort_by_key(|r| (r.name, r.location.file, r.location.line));
        // Two registered tools may share a name: only the exposed ones are checked, in `build`.
        // A converter names a tool defined somewhere in the binary, exposed or not.
        for (name, converter) in &converters {
            if !registrations.iter().any(|r| r.name == *name) {
                problems.push(BuildProblem::ConverterForUnknownTool {
                    name: (*name).into(),
                    converter: converter.location.to_string(),
                });
            }
        }
        let exposed = |reg: &&ToolRegistration| match (&reg.service, &self.free_tools) {
            (None, Some(which)) => which(reg.name, reg.location.module),
            _ => true,
        };
        let entries: Vec<Entry> = registrations
            .into_iter()
            .filter(exposed)
            .filter_map(|reg| {
                self.registered_entry(reg, converters.get(reg.name).copied(), problems)
            })
            .collect();
        say_what_was_found(&entries);
        entries
    }

    fn registered_entry(
        &self,
        reg: &ToolRegistration,
        converter: Option<&ConverterRegistration>,
        problems: &mut Vec<BuildProblem>,
    ) -> Option<Entry> {
        let service = match reg.service {
            None => None,
            Some(ty) => match self.services.get_dyn((ty.id)()) {
                Some(service) => Some(Service::new(Arc::clone(service))),
                None => {
                    if self.require_all_services {
                        problems.push(BuildProblem::MissingService {
                            name: reg.name.into(),
                            defined_in: source_of_location(&reg.location),
                            service: (ty.name)(),
                        });
                    }
                    return None;
                }
            },
        };
        // Checked only for a tool that is exposed: another service's tool of the same name may
        // return another type.
        if let Some(converter) = converter {
            check_converter(reg, converter, problems);
        }
        // A text tool's schema is its text's (`TextInput::schema`): the macro's struct has its
        // one string under the same name, and a regular expression adds the `pattern`.
        let text_input = reg.metadata.text_input.map(StaticTextInput::to_text_input);
        let compiled = (reg.schema)()
            .map(|schema| text_input.as_ref().map_or(schema, TextInput::schema))
            .and_then(|s| ArgumentValidator::compile(&s, &self.schema_limits).map(|c| (s, c)));
        let (parameters, schema) = match compiled {
            Ok(compiled) => compiled,
            Err(problem) => {
                problems.push(BuildProblem::BadSchema {
                    name: reg.name.into(),
                    defined_in: source_of_location(&reg.location),
                    problem,
                });
                return None;
            }
        };
        let mut spec = registered_spec(reg, parameters);
        // A converter decides what the result is: the value's schema no longer describes it.
        if !reg.has_converter && converter.is_none() {
            spec.output_schema = (reg.output_schema)();
        }
        let found = spec.problems();
        if !found.is_empty() {
            let defined_in = source_of_location(&reg.location);
            problems.extend(found.into_iter().map(|problem| BuildProblem::BadSpec {
                name: spec.name.clone(),
                defined_in: defined_in.clone(),
                problem,
            }));
            return None;
        }
        Some(Entry {
            spec,
            name: reg.name.into(),
            schema,
            output: None,
            callable: Callable::Registered {
                invoke: reg.invoke,
                service,
                external: converter.map(|c| c.convert),
            },
            timeout: reg.metadata.timeout_ms.map(Duration::from_millis),
        })
    }
}

/// The converters registered with `#[ai_tool_converter]`, by tool; a second one for a tool is a
/// problem.
fn converters_by_tool(
    problems: &mut Vec<BuildProblem>,
) -> HashMap<&'static str, &'static ConverterRegistration> {
    let mut by_tool: HashMap<&'static str, &'static ConverterRegistration> = HashMap::new();
    let mut all: Vec<&'static ConverterRegistration> =
        inventory::iter::<ConverterRegistration>().collect();
    all.sort_by_key(|c| (c.tool, c.location.file, c.location.line));
    for converter in all {
        if let Some(first) = by_tool.get(converter.tool) {
            problems.push(BuildProblem::ConverterConflict {
                name: converter.tool.into(),
                first: first.location.to_string(),
                second: converter.location.to_string(),
            });
        } else {
            by_tool.insert(converter.tool, converter);
        }
    }
    by_tool
}

fn check_converter(
    reg: &ToolRegistration,
    converter: &ConverterRegistration,
    problems: &mut Vec<BuildProblem>,
) {
    if reg.has_converter {
        problems.push(BuildProblem::ConverterConflict {
            name: reg.name.into(),
            first: format!("the `convert = ..` of {}", reg.location),
            second: converter.location.to_string(),
        });
        return;
    }
    let Some(output) = reg.output else { return };
    if (output.id)() != (converter.input.id)() {
        problems.push(BuildProblem::ConverterTypeMismatch {
            name: reg.name.into(),
            defined_in: source_of_location(&reg.location),
            converter: converter.location.to_string(),
            expected: (converter.input.name)(),
            found: (output.name)(),
        });
    }
}

fn registered_spec(reg: &ToolRegistration, parameters: serde_json::Value) -> ToolSpec {
    let m = &reg.metadata;
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
    ToolSpec {
        name: reg.name.into(),
        description: reg.description.into(),
        parameters,
        output_schema: None,
        metadata: ToolMetadata {
            title: m.title.map(Into::into),
            category: m.category.map(Into::into),
            purposes: strings(m.purposes),
            selectable: m.selectable,
            keywords: strings(m.keywords),
            examples: strings(m.examples),
            input_examples: Vec::new(),
            hints: m.hints,
            timeout_ms: m.timeout_ms,
            max_result_bytes: m.max_result_bytes,
            max_retries: m.max_retries,
            requires_approval: m.requires_approval,
            strict: m.strict,
            source: Some(source_of_location(&reg.location)),
            defer_loading: m.defer_loading,
            searches_tools: false,
            text_input: m.text_input.map(StaticTextInput::to_text_input),
            callers: m.callers,
            task: m.task,
            namespace: m.namespace.map(|(name, description)| tool_core::Namespace {
                name: name.into(),
                description: description.into(),
            }),
            icons: m.icon.map(tool_core::Icon::new).into_iter().collect(),
        },
    }
}

/// A `tracing` event naming each module that gave tools, and the tools.
fn say_what_was_found(entries: &[Entry]) {
    if !tracing::enabled!(tracing::Level::INFO) {
        return;
    }
    let mut by_module: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for entry in entries {
        if let Some(ToolSource::Macro { module, .. }) = &entry.spec.metadata.source {
            by_module.entry(module).or_default().push(&entry.spec.name);
        }
    }
    let found: Vec<String> = by_module
        .iter()
        .map(|(module, names)| format!("{module}: {}", names.join(", ")))
        .collect();
    tracing::info!(
        tools = entries.len(),
        "#[ai_tool] tools exposed, by module: {}",
        found.join("; ")
    );
}

fn source_of_location(location: &Location) -> ToolSource {
    ToolSource::Macro {
        module: location.module.into(),
        file: location.file.into(),
        line: location.line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_errors_debug_form_is_its_readable_text() {
        let err = BuildError {
            problems: vec![BuildProblem::DuplicateTool {
                name: "lookup".into(),
                first: ToolSource::Macro {
                    module: "billing".into(),
                    file: "src/billing.rs".into(),
                    line: 10,
                },
                second: ToolSource::Catalog {
                    file: "tools.jsonl".into(),
                    line: 19,
                },
            }],
        };
        let debug = format!("{err:?}");
        assert_eq!(debug, err.to_string());
        assert!(debug.starts_with("cannot build the executor:\n- two tools are named `lookup`"));
    }

    #[tokio::test]
    async fn a_builder_like_an_executor_keeps_its_limits_and_none_of_its_tools() {
        use crate::DynamicTool;
        use tool_core::{ToolErrorKind, ToolOutput};

        let echo = |name: &str| {
            let schema = serde_json::json!({ "type": "object" });
            DynamicTool::new(name, "Echoes", schema, |_, _| async {
                Ok(ToolOutput::text("ok"))
            })
        };
        let first = ExecutorBuilder::default()
            .registered_tools(false)
            .tool(echo("first"))
            .max_argument_bytes(64)
            .max_argument_depth(3)
            .default_timeout(Duration::from_secs(7))
            .schema_limits(SchemaLimits {
                depth: 5,
                ..SchemaLimits::default()
            })
            .build()
            .expect("builds");
        let later = first
            .builder_like()
            .tool(echo("later"))
            .build()
            .expect("builds");
        assert!(later.spec("first").is_none(), "no tool of the first");
        let long = serde_json::json!({ "text": "x".repeat(100) });
        let err = later.execute("later", long).await.unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::ArgumentsTooLarge, "{err}");
        let deep = serde_json::json!({ "a": { "b": { "c": 1 } } });
        let err = later.execute("later", deep).await.unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
        assert_eq!(later.inner.default_timeout, Some(Duration::from_secs(7)));
        assert_eq!(later.inner.schema_limits.depth, 5);
    }
}
