//! Reading a tools file: the format from the file's extension, XML by [`super::xml`], TOML and
//! JSON by one schema (the fields of [`DeclaredTool`]), then the checks every format shares.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::declared::{DeclaredTool, Origin, ToolsFile, ToolsFileWarning};
use crate::error::ToolsFileError;
use crate::hierarchy::canonical;
use crate::limits::ToolsFileLimits;
use crate::lines::Lines;
use crate::xml;

/// Refuses `size` bytes past `limits.bytes`.
fn too_large(file: &str, size: usize, limits: &ToolsFileLimits) -> Result<(), ToolsFileError> {
    if size > limits.bytes {
        return Err(ToolsFileError::TooLarge {
            file: file.to_owned(),
            what: "bytes",
            limit: limits.bytes,
            setting: "ToolsFileLimits::bytes",
        });
    }
    Ok(())
}

/// The syntax of a tools file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsFileFormat {
    /// NLWeb's `tools.xml`.
    Xml,
    /// The same content as TOML: `site`, `[types]`, `[[tools]]`.
    Toml,
    /// The same content as JSON: `{"site", "types", "tools": [..]}`.
    Json,
}

impl ToolsFileFormat {
    /// The format a file's extension names (`.xml`, `.toml`, `.json`).
    pub fn of_path(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "xml" => Some(ToolsFileFormat::Xml),
            "toml" => Some(ToolsFileFormat::Toml),
            "json" => Some(ToolsFileFormat::Json),
            _ => None,
        }
    }
}

impl ToolsFile {
    /// Reads a tools file, in the format its extension names, within the default
    /// [`ToolsFileLimits`].
    ///
    /// ```no_run
    /// use tool_router::ToolsFile;
    ///
    /// let declared = ToolsFile::from_path("examples/tools.xml")?;
    /// for warning in &declared.warnings {
    ///     eprintln!("warning: {warning}");
    /// }
    /// # Ok::<(), tool_router::ToolsFileError>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ToolsFileError> {
        Self::from_path_within(path, &ToolsFileLimits::default())
    }

    /// [`ToolsFile::from_path`] within other limits. A file larger than
    /// `limits.bytes` is refused before it is read whole.
    pub fn from_path_within(
        path: impl AsRef<Path>,
        limits: &ToolsFileLimits,
    ) -> Result<Self, ToolsFileError> {
        use std::io::Read;
        let path = path.as_ref();
        let file = path.display().to_string();
        let format = ToolsFileFormat::of_path(path)
            .ok_or_else(|| ToolsFileError::UnknownFormat { file: file.clone() })?;
        let read_error = |e: std::io::Error| ToolsFileError::Read {
            file: file.clone(),
            message: e.to_string(),
        };
        let opened = std::fs::File::open(path).map_err(read_error)?;
        // At most one byte past the cap: enough to tell a file too large, whatever its
        // metadata says (a pipe or /proc file has none).
        let cap = u64::try_from(limits.bytes).unwrap_or(u64::MAX);
        let mut bytes = Vec::new();
        opened
            .take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(read_error)?;
        too_large(&file, bytes.len(), limits)?;
        let text = String::from_utf8(bytes).map_err(|e| ToolsFileError::Read {
            file: file.clone(),
            message: format!("not UTF-8 text: {e}"),
        })?;
        Self::parse_within(&text, format, &file, limits)
    }

    /// Reads a tools file from text, within the default [`ToolsFileLimits`]; `file` names
    /// it in messages.
    pub fn parse(text: &str, format: ToolsFileFormat, file: &str) -> Result<Self, ToolsFileError> {
        Self::parse_within(text, format, file, &ToolsFileLimits::default())
    }

    /// [`ToolsFile::parse`] within other limits.
    pub fn parse_within(
        text: &str,
        format: ToolsFileFormat,
        file: &str,
        limits: &ToolsFileLimits,
    ) -> Result<Self, ToolsFileError> {
        too_large(file, text.len(), limits)?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let declared = match format {
            ToolsFileFormat::Xml => xml::read(text, file, limits)?,
            ToolsFileFormat::Toml => {
                let table: toml::Table = toml::from_str(text).map_err(|e| {
                    let (line, column) = e
                        .span()
                        .map_or((1, 1), |span| Lines::new(text).line_and_column(span.start));
                    ToolsFileError::Syntax {
                        file: file.to_owned(),
                        syntax: "TOML",
                        line,
                        column,
                        message: e.message().to_owned(),
                    }
                })?;
                let value = serde_json::to_value(table).map_err(|e| ToolsFileError::Syntax {
                    file: file.to_owned(),
                    syntax: "TOML",
                    line: 1,
                    column: 1,
                    message: e.to_string(),
                })?;
                from_value(value, file, &toml_tool_lines(text))?
            }
            ToolsFileFormat::Json => {
                let value: Value =
                    serde_json::from_str(text).map_err(|e| ToolsFileError::Syntax {
                        file: file.to_owned(),
                        syntax: "JSON",
                        // serde_json says column 0 for an error at a line's end (a newline
                        // inside a string), and line 0 for none; the reader's count from 1.
                        line: e.line().max(1),
                        column: e.column().max(1),
                        message: e.to_string(),
                    })?;
                from_value(value, file, &json_tool_lines(text))?
            }
        };
        check(&declared)?;
        Ok(declared)
    }

    /// The tools the router may offer: the enabled ones.
    pub fn enabled(&self) -> impl Iterator<Item = &DeclaredTool> {
        self.tools.iter().filter(|t| t.enabled)
    }
}

const FILE_FIELDS: &[&str] = &["site", "types", "tools"];
const TOOL_FIELDS: &[&str] = &[
    "name",
    "type",
    "enabled",
    "site",
    "method",
    "path",
    "handler",
    "arguments",
    "examples",
    "prompt",
    "returnStruc",
];

/// A tools file from a TOML or JSON document, as a JSON value.
/// The line each entry of `tools` starts on, in a TOML document.
fn toml_tool_lines(text: &str) -> Vec<usize> {
    #[derive(serde::Deserialize)]
    struct Tools {
        #[serde(default)]
        tools: Vec<toml::Spanned<toml::Value>>,
    }
    let lines = Lines::new(text);
    toml::from_str::<Tools>(text)
        .map(|t| {
            t.tools
                .iter()
                .map(|entry| lines.line(entry.span().start))
                .collect()
        })
        .unwrap_or_default()
}

/// The line each entry of the top-level `tools` array starts on, in a JSON document.
fn json_tool_lines(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let (mut depth, mut line) = (0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    let mut last_key = String::new();
    let mut key_start = None;
    // Inside the top-level `tools` array (depth 2), waiting for an entry to start.
    let mut in_tools = false;
    let mut expect_entry = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            line += 1;
        }
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    if let Some(start) = key_start.take() {
                        last_key = text[start..i].to_owned();
                    }
                }
                _ => {}
            }
            continue;
        }
        if expect_entry && !b.is_ascii_whitespace() && b != b']' {
            lines.push(line);
            expect_entry = false;
        }
        match b {
            b'"' => {
                in_string = true;
                key_start = (depth == 1).then_some(i + 1);
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 2 && b == b'[' && last_key == "tools" {
                    in_tools = true;
                    expect_entry = true;
                }
            }
            b'}' | b']' => {
                if depth == 2 {
                    in_tools = false;
                }
                depth = depth.saturating_sub(1);
            }
            b',' if in_tools && depth == 2 => expect_entry = true,
            _ => {}
        }
    }
    lines
}

fn from_value(value: Value, file: &str, lines: &[usize]) -> Result<ToolsFile, ToolsFileError> {
    let at = |element: String| Origin {
        file: Some(file.to_owned()),
        line: None,
        element,
    };
    let Value::Object(mut root) = value else {
        return Err(ToolsFileError::invalid(
            &at("the document".into()),
            "the document must be an object with `tools` (and optionally `site` and `types`)",
        ));
    };
    let mut out = ToolsFile::default();
    for key in root.keys().filter(|k| !FILE_FIELDS.contains(&k.as_str())) {
        out.warnings.push(ToolsFileWarning {
            origin: at(format!("`{key}`")),
            message: format!("unknown field `{key}`, ignored"),
        });
    }
    match root.remove("site") {
        None | Some(Value::Null) => {}
        Some(Value::String(site)) => out.site = Some(site),
        Some(_) => {
            return Err(ToolsFileError::invalid(
                &at("`site`".into()),
                "`site` must be a string",
            ))
        }
    }
    if let Some(types) = root.remove("types") {
        out.types = serde_json::from_value(types).map_err(|e| {
            ToolsFileError::invalid(
                &at("`types`".into()),
                format!("`types` must map each type to its parent type's name: {e}"),
            )
        })?;
    }
    let tools = match root.remove("tools") {
        None => Vec::new(),
        Some(Value::Array(tools)) => tools,
        Some(_) => {
            return Err(ToolsFileError::invalid(
                &at("`tools`".into()),
                "`tools` must be an array of tools",
            ))
        }
    };
    for (index, entry) in tools.into_iter().enumerate() {
        let name = entry.get("name").and_then(Value::as_str).map(str::to_owned);
        let element = match &name {
            Some(name) => format!("tools[{index}] (`{name}`)"),
            None => format!("tools[{index}]"),
        };
        let mut origin = at(element);
        origin.line = lines.get(index).copied();
        let Value::Object(fields) = entry else {
            return Err(ToolsFileError::invalid(&origin, "a tool must be an object"));
        };
        warn_unknown(&fields, &origin, &mut out.warnings);
        let mut tool: DeclaredTool = serde_json::from_value(Value::Object(fields))
            .map_err(|e| ToolsFileError::invalid(&origin, e.to_string()))?;
        tool.prompt = xml::dedent(&tool.prompt);
        tool.origin = origin;
        // The file's `site` is each tool's, as a `<Site>` around them all is in XML.
        if tool.site.is_none() {
            tool.site = out.site.clone();
        }
        out.tools.push(tool);
    }
    Ok(out)
}

fn warn_unknown(
    fields: &Map<String, Value>,
    origin: &Origin,
    warnings: &mut Vec<ToolsFileWarning>,
) {
    for key in fields.keys().filter(|k| !TOOL_FIELDS.contains(&k.as_str())) {
        warnings.push(ToolsFileWarning {
            origin: origin.clone(),
            message: format!("unknown field `{key}`, ignored"),
        });
    }
}

/// The checks every format shares: names, prompts, and one enabled tool per (site,
/// type, name) (a disabled one may stand beside the one in use).
pub(crate) fn check(declared: &ToolsFile) -> Result<(), ToolsFileError> {
    let mut seen: HashMap<(Option<&str>, &str, &str), &Origin> = HashMap::new();
    for tool in &declared.tools {
        if tool.name.trim().is_empty() {
            return Err(ToolsFileError::invalid(&tool.origin, "a tool needs a name"));
        }
        if tool.schema_type.trim().is_empty() {
            return Err(ToolsFileError::invalid(
                &tool.origin,
                format!(
                    "tool `{}` needs a `type` (a schema.org type such as Thing or Recipe)",
                    tool.name
                ),
            ));
        }
        if tool.enabled && tool.prompt.trim().is_empty() {
            return Err(ToolsFileError::invalid(
                &tool.origin,
                format!(
                    "tool `{}` has no prompt: the router scores a tool with its prompt",
                    tool.name
                ),
            ));
        }
        if !tool.enabled {
            continue;
        }
        let key = (
            tool.site.as_deref(),
            canonical(&tool.schema_type),
            tool.name.as_str(),
        );
        if let Some(first) = seen.insert(key, &tool.origin) {
            let site = match &tool.site {
                Some(site) => format!(" on site `{site}`"),
                None => String::new(),
            };
            return Err(ToolsFileError::invalid(
                &tool.origin,
                format!(
                    "tool `{}` of type `{}`{site} is declared twice (first at {first})",
                    tool.name, tool.schema_type
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `tools_xml` fuzz target: a newline inside a string was reported at column 0.
    #[test]
    fn a_json_syntax_error_at_a_line_end_is_at_column_1_or_more() {
        let text = "{\"tools\": [\n{\"name\": \"a\nb\"}]}";
        let err = ToolsFile::parse(text, ToolsFileFormat::Json, "t.json").unwrap_err();
        match &err {
            ToolsFileError::Syntax { line, column, .. } => {
                assert_eq!((*line, *column), (3, 1), "{err}")
            }
            other => panic!("not a syntax error: {other:?}"),
        }
        assert!(
            err.to_string().starts_with("t.json:3:1: malformed JSON"),
            "{err}"
        );
    }

    #[test]
    fn a_file_past_the_node_cap_is_refused_naming_the_setting() {
        let tools: String = (0..100)
            .map(|i| format!("<Tool name=\"t{i}\"><prompt>p</prompt></Tool>"))
            .collect();
        let text = format!("<Tools><Thing>{tools}</Thing></Tools>");
        let limits = ToolsFileLimits::default().with_nodes(50);
        let err =
            ToolsFile::parse_within(&text, ToolsFileFormat::Xml, "t.xml", &limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.xml: more than 50 XML nodes: refused (ToolsFileLimits::nodes sets the limit)"
        );
        let declared = ToolsFile::parse(&text, ToolsFileFormat::Xml, "t.xml").unwrap();
        assert_eq!(declared.tools.len(), 100);
        let small = ToolsFileLimits::default().with_bytes(10);
        let err = ToolsFile::parse_within("{}", ToolsFileFormat::Json, "t.json", &small);
        assert!(err.is_ok(), "{err:?}");
        let err =
            ToolsFile::parse_within(&text, ToolsFileFormat::Json, "t.json", &small).unwrap_err();
        assert!(err.to_string().contains("more than 10 bytes"), "{err}");
    }
}
