//! Catalog files: JSON Lines, one function declaration a line.
//!
//! A line is either `{"name","description","parameters"?,...}` or the wrapped form
//! `{"type":"function","function":{...}}`. Blank lines are skipped. Optional fields that
//! retrieval uses (`title`, `keywords`, `examples`, `category`, `selectable`) are read when
//! present; catalog tools are selectable unless the line says `"selectable": false`.
//! `"requires_approval": true` marks a tool whose calls a person approves (in the agent loop);
//! `"defer_loading": true` one declared for loading on demand where the API has tool search.
//! `"strict": true` (OpenAI's own field) asks strict mode for the tool whatever the declaring
//! options say; `false`, which OpenAI's declarations write for every tool that is not strict,
//! leaves it to the options.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::name;
use crate::schema::SchemaLimits;
use crate::spec::{ToolMetadata, ToolSource, ToolSpec};

/// The default of [`CatalogLimits::line_bytes`]: 1 MiB.
pub const DEFAULT_CATALOG_LINE_BYTES: usize = 1 << 20;

/// Limits on what a catalog may hold, each named in the error that refuses a line over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogLimits {
    /// The longest a line may be, in bytes (default [`DEFAULT_CATALOG_LINE_BYTES`]). A longer
    /// line is refused before it is parsed.
    pub line_bytes: usize,
    /// What each tool's `parameters` schema may be.
    pub schema: SchemaLimits,
}

impl Default for CatalogLimits {
    fn default() -> Self {
        CatalogLimits {
            line_bytes: DEFAULT_CATALOG_LINE_BYTES,
            schema: SchemaLimits::default(),
        }
    }
}

/// One tool declared by a catalog line.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// The declaration as a spec; its schema is exactly the one written in the file.
    pub spec: ToolSpec,
}

/// A catalog that could not be read, naming the file and line.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a valid declaration.
    #[error("{file}:{line}: {message}")]
    Line {
        /// The file.
        file: PathBuf,
        /// The line, 1-based.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Line {
    Wrapped {
        #[serde(rename = "type")]
        kind: String,
        function: Declaration,
    },
    Plain(Declaration),
}

#[derive(Deserialize)]
struct Declaration {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    examples: Vec<String>,
    #[serde(default)]
    selectable: Option<bool>,
    #[serde(default)]
    requires_approval: bool,
    #[serde(default)]
    defer_loading: bool,
    #[serde(default)]
    strict: Option<bool>,
}

/// Which names a catalog may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameRule {
    /// MCP's alphabet: 1 to 128 of `A-Z a-z 0-9 _ - .` (for catalogs whose tools are declared
    /// to models).
    #[default]
    Wide,
    /// Any name without white space or control characters, up to 128 characters: names as
    /// labels only, as in an evaluation set.
    Label,
}

impl NameRule {
    /// The rule in [`name`]'s table.
    fn table(self) -> &'static name::NameRule {
        match self {
            NameRule::Wide => &name::WIDE,
            NameRule::Label => &name::LABEL,
        }
    }
}

/// Reads a catalog file.
pub fn read_path(path: &Path) -> Result<Vec<CatalogEntry>, CatalogError> {
    read_path_with(path, NameRule::Wide)
}

/// Reads a catalog file whose names follow `rule`.
pub fn read_path_with(path: &Path, rule: NameRule) -> Result<Vec<CatalogEntry>, CatalogError> {
    read_path_within(path, rule, &CatalogLimits::default())
}

/// Reads a catalog file whose names follow `rule`, within `limits`.
pub fn read_path_within(
    path: &Path,
    rule: NameRule,
    limits: &CatalogLimits,
) -> Result<Vec<CatalogEntry>, CatalogError> {
    let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Io {
        file: path.to_owned(),
        source,
    })?;
    parse_str_within(&text, path, rule, limits)
}

/// Parses catalog text; `file` names it in errors and sources.
pub fn parse_str(text: &str, file: &Path) -> Result<Vec<CatalogEntry>, CatalogError> {
    parse_str_with(text, file, NameRule::Wide)
}

/// Parses catalog text whose names follow `rule`. A UTF-8 byte order mark before the first line
/// (as some Windows editors write) is skipped.
pub fn parse_str_with(
    text: &str,
    file: &Path,
    rule: NameRule,
) -> Result<Vec<CatalogEntry>, CatalogError> {
    parse_str_within(text, file, rule, &CatalogLimits::default())
}

/// Parses catalog text whose names follow `rule`, within `limits`.
pub fn parse_str_within(
    text: &str,
    file: &Path,
    rule: NameRule,
    limits: &CatalogLimits,
) -> Result<Vec<CatalogEntry>, CatalogError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut entries = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let fail = |message: String| CatalogError::Line {
            file: file.to_owned(),
            line,
            message: bounded(message),
        };
        if raw.len() > limits.line_bytes {
            return Err(fail(format!(
                "the line is {} bytes long; CatalogLimits::line_bytes allows {}",
                raw.len(),
                limits.line_bytes
            )));
        }
        let value: Value = serde_json::from_str(raw).map_err(|e| fail(malformed(&e)))?;
        let declaration = match serde_json::from_value::<Line>(value) {
            Ok(Line::Wrapped { kind, function }) if kind == "function" => function,
            Ok(Line::Wrapped { kind, .. }) => {
                return Err(fail(format!("`type` is `{kind}`; only `function` is supported")))
            }
            Ok(Line::Plain(declaration)) => declaration,
            Err(_) => {
                return Err(fail(
                    "expected {\"name\",\"description\",\"parameters\"} or {\"type\":\"function\",\"function\":{..}}"
                        .into(),
                ))
            }
        };
        let spec =
            declaration_to_spec(declaration, file, line, rule, &limits.schema).map_err(fail)?;
        entries.push(CatalogEntry { spec });
    }
    Ok(entries)
}

/// A line that is not JSON, or nests deeper than JSON text may.
fn malformed(e: &serde_json::Error) -> String {
    if e.to_string().starts_with("recursion limit exceeded") {
        format!(
            "malformed JSON: the line nests {} or more levels deep, deeper than JSON text may ({e})",
            crate::nesting::DEFAULT_NESTING_LIMIT
        )
    } else {
        format!("malformed JSON: {e}")
    }
}

/// The most bytes of a line's error message kept: a message quoting a huge value from the line
/// (a schema's 50,000-member `required`, say) is cut, and says how much was left out.
const MESSAGE_BYTES: usize = 1_000;

fn bounded(mut message: String) -> String {
    if message.len() <= MESSAGE_BYTES {
        return message;
    }
    let mut end = MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let rest = message.len() - end;
    message.truncate(end);
    message.push_str(&format!("... ({rest} more bytes)"));
    message
}

fn declaration_to_spec(
    d: Declaration,
    file: &Path,
    line: usize,
    rule: NameRule,
    limits: &SchemaLimits,
) -> Result<ToolSpec, String> {
    rule.table().check(&d.name).map_err(|e| e.to_string())?;
    let parameters = match d.parameters {
        None => serde_json::json!({ "type": "object", "properties": {} }),
        Some(schema @ Value::Object(_)) => schema,
        Some(other) => {
            return Err(format!(
                "`parameters` of `{}` must be a JSON Schema object, not {}",
                d.name,
                crate::schema::json_kind(&other)
            ))
        }
    };
    crate::schema::check_is_schema_within(&parameters, limits)
        .map_err(|e| format!("`parameters` of `{}` is not a usable schema: {e}", d.name))?;
    let spec = ToolSpec {
        description: d.description.unwrap_or_default(),
        parameters,
        output_schema: None,
        metadata: ToolMetadata {
            title: d.title,
            category: d.category,
            keywords: d.keywords,
            examples: d.examples,
            // A catalog is there to be selected from.
            selectable: d.selectable.unwrap_or(true),
            requires_approval: d.requires_approval,
            defer_loading: d.defer_loading,
            // OpenAI's declarations write `"strict": false` for every tool that is not strict,
            // so a catalog made from them would pin them all: only `true` is read.
            strict: d.strict.filter(|strict| *strict),
            source: Some(ToolSource::Catalog {
                file: file.display().to_string(),
                line,
            }),
            ..ToolMetadata::default()
        },
        name: d.name,
    };
    spec.check()
        .map_err(|e| format!("tool `{}`: {e}", spec.name))?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<CatalogEntry>, CatalogError> {
        parse_str(text, Path::new("tools.jsonl"))
    }

    #[test]
    fn reads_plain_and_wrapped_lines_and_skips_blank_ones() {
        let text = r#"{"name":"a.b","description":"A","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}

{"type":"function","function":{"name":"c","description":"C"}}"#;
        let entries = parse(text).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].spec.name, "a.b");
        assert_eq!(entries[1].spec.name, "c");
        assert_eq!(
            entries[1].spec.metadata.source,
            Some(ToolSource::Catalog {
                file: "tools.jsonl".into(),
                line: 3
            })
        );
    }

    #[test]
    fn a_byte_order_mark_before_the_first_line_is_skipped() {
        let text =
            "\u{feff}{\"name\":\"a\",\"description\":\"A\",\"parameters\":{\"type\":\"object\"}}\n";
        let entries = parse(text).unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].spec.name, "a");
    }

    #[test]
    fn malformed_line_error_names_file_and_line() {
        let err = parse("{\"name\":\"a\",\"description\":\"A\"}\n{oops")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("tools.jsonl:2: malformed JSON"), "{err}");
    }

    #[test]
    fn label_names_allow_punctuation_but_not_spaces() {
        let text = r#"{"name":"PDF&URLTool","description":"x"}"#;
        assert!(parse(text).is_err());
        let entries = parse_str_with(text, Path::new("t.jsonl"), NameRule::Label).unwrap();
        assert_eq!(entries[0].spec.name, "PDF&URLTool");
        assert!(
            entries[0].spec.metadata.selectable,
            "catalog tools are selectable"
        );
        assert!(
            parse_str_with(r#"{"name":"a b"}"#, Path::new("t.jsonl"), NameRule::Label).is_err()
        );
    }

    #[test]
    fn a_root_schema_that_is_not_an_object_or_an_empty_description_is_a_line_error() {
        let err = parse("{\"name\":\"ok\",\"description\":\"Fine\"}\n{\"name\":\"s\",\"description\":\"Takes text\",\"parameters\":{\"type\":\"string\"}}")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "tools.jsonl:2: tool `s`: the arguments schema's root must be `\"type\": \"object\"` (arguments are always a JSON object), but its type is \"string\""
        );
        for line in [r#"{"name":"e","description":"  "}"#, r#"{"name":"e"}"#] {
            let err = parse(line).unwrap_err().to_string();
            assert_eq!(
                err,
                "tools.jsonl:1: tool `e`: the description is empty; say what the tool does, for the model"
            );
        }
        let err = parse(r#"{"name":"n","description":"N","parameters":{"properties":{}}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("but it has no `type`"), "{err}");
    }

    #[test]
    fn bad_name_and_bad_schema_are_line_errors() {
        let err = parse(r#"{"name":"a/b"}"#).unwrap_err().to_string();
        assert!(
            err.starts_with("tools.jsonl:1:") && err.contains('/'),
            "{err}"
        );
        let err = parse(r#"{"name":"a","parameters":{"type":"strnig"}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("tools.jsonl:1:") && err.contains("not a usable schema"),
            "{err}"
        );
        let err = parse(r#"{"name":"a","parameters":[1]}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be a JSON Schema object"), "{err}");
    }
}
