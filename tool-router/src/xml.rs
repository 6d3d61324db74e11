//! NLWeb's `tools.xml`, read as NLWeb writes it: type elements (`<Item>`, `<Recipe>`, ...),
//! optionally inside a root wrapper (`<Tools>`, or any other name) and `<Site id="..">`
//! (or `ref`, `name`), each holding `<Tool name enabled>` elements with `path`, `method`,
//! `handler`, `argument name=".."`, `example`, `prompt` and `returnStruc`. A tool inside a
//! `<Site>` is that site's ([`DeclaredTool::site`]).
//!
//! A type element may say `parent="Recipe"` to add itself to the type hierarchy (our
//! extension). Anything else the reader does not know is a warning, never a failure.

use roxmltree::{Document, Node};
use serde_json::{Map, Value};

use crate::declared::{
    DeclaredTool, Origin, ToolArgument, ToolMethod, ToolsFile, ToolsFileWarning, DEFAULT_SITE,
};
use crate::error::ToolsFileError;
use crate::limits::ToolsFileLimits;
use crate::lines::Lines;

/// `text` with its `<!DOCTYPE ..>` blanked out (spaces, line ends kept, so that positions stay)
/// when it declares nothing; `None` when it has none; an error when it has an internal subset.
fn without_bare_doctype(text: &str, file: &str) -> Result<Option<String>, ToolsFileError> {
    // A DOCTYPE stands in the prolog, before the root element: one later (in a comment, a
    // prompt's CDATA) is the parser's to read, as text or as an error.
    let prolog_end = text
        .char_indices()
        .find(|&(at, c)| {
            c == '<' && text[at + 1..].starts_with(|n: char| n.is_alphabetic() || n == '_')
        })
        .map_or(text.len(), |(at, _)| at);
    let Some(start) = text[..prolog_end].find("<!DOCTYPE") else {
        return Ok(None);
    };
    let mut quote = None;
    let mut end = None;
    for (at, c) in text[start..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => return Err(doctype_refused(text, file, start)),
            (None, '>') => {
                end = Some(start + at + 1);
                break;
            }
            _ => {}
        }
    }
    // An unclosed DOCTYPE: left for the parser to report.
    let Some(end) = end else { return Ok(None) };
    let mut blanked = String::with_capacity(text.len());
    blanked.push_str(&text[..start]);
    blanked.extend(
        text[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' }),
    );
    blanked.push_str(&text[end..]);
    Ok(Some(blanked))
}

/// A DOCTYPE that declares entities, refused at its line.
fn doctype_refused(text: &str, file: &str, at: usize) -> ToolsFileError {
    let at = text[at..].find("<!DOCTYPE").map_or(at, |i| at + i);
    let (line, column) = Lines::new(text).line_and_column(at);
    ToolsFileError::Syntax {
        file: file.to_owned(),
        syntax: "XML",
        line,
        column,
        message: "a <!DOCTYPE> that declares entities or elements is not accepted: tools.xml \
                  needs no DTD, and entities could expand without bound; remove the [...] part"
            .to_owned(),
    }
}

/// The tools file in `text`, an XML document; `file` names it in messages.
pub(crate) fn read(
    text: &str,
    file: &str,
    limits: &ToolsFileLimits,
) -> Result<ToolsFile, ToolsFileError> {
    // NLWeb's tools.xml starts with `<!DOCTYPE Tools>` and declares nothing in it. A DOCTYPE
    // that declares (an internal subset, `[...]`) could define entities that expand without
    // bound (two nested ones turn 100 KB into gigabytes): it is refused, naming its line. A
    // bare one is blanked out, so that the parser never reads a DTD at all.
    let blanked = without_bare_doctype(text, file)?;
    let text = blanked.as_deref().unwrap_or(text);
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: limits.nodes,
        ..roxmltree::ParsingOptions::default()
    };
    let document = Document::parse_with_options(text, options).map_err(|e| match e {
        roxmltree::Error::DtdDetected => doctype_refused(text, file, 0),
        roxmltree::Error::NodesLimitReached => ToolsFileError::TooLarge {
            file: file.to_owned(),
            what: "XML nodes",
            limit: usize::try_from(limits.nodes).unwrap_or(usize::MAX),
            setting: "ToolsFileLimits::nodes",
        },
        e => {
            let pos = e.pos();
            ToolsFileError::Syntax {
                file: file.to_owned(),
                syntax: "XML",
                line: pos.row as usize,
                column: pos.col as usize,
                message: e.to_string(),
            }
        }
    })?;
    let mut reader = Reader {
        lines: Lines::new(text),
        file,
        out: ToolsFile::default(),
        site: None,
        sites: Vec::new(),
    };
    let root = document.root_element();
    let holds_tools = elements(root).any(|child| child.tag_name().name() == "Tool");
    match root.tag_name().name() {
        "Site" => reader.site(root)?,
        // `<Recipe><Tool ..>..</Recipe>`: a file of one type.
        _ if holds_tools => reader.schema_type(root)?,
        // `<Tools>`, or another name: NLWeb reads any root as the wrapper.
        _ => {
            reader.unknown_attributes(root, &[]);
            for child in elements(root) {
                if child.tag_name().name() == "Site" {
                    reader.site(child)?;
                } else {
                    reader.schema_type(child)?;
                }
            }
        }
    }
    // The file's site, which a request naming none is for: its one site. A file of several
    // is NLWeb's, where such a request is the `default` site's.
    if let [site] = &reader.sites[..] {
        reader.out.site = (site != DEFAULT_SITE).then(|| site.clone());
    }
    if reader.out.tools.is_empty() {
        reader.warn(
            root,
            "no <Tool> found: tools go in a type element (<Item>, <Recipe>...), itself in \
             <Tools> or a <Site>"
                .into(),
        );
    }
    Ok(reader.out)
}

struct Reader<'a> {
    /// Every element's line is looked up here, once per element.
    lines: Lines<'a>,
    file: &'a str,
    out: ToolsFile,
    /// The `<Site>` being read, whose tools are its own.
    site: Option<String>,
    /// Every site the file names, in order.
    sites: Vec<String>,
}

fn elements<'a, 'input>(node: Node<'a, 'input>) -> impl Iterator<Item = Node<'a, 'input>> {
    node.children().filter(Node::is_element)
}

impl Reader<'_> {
    fn origin(&self, node: Node<'_, '_>, element: String) -> Origin {
        let line = self.lines.line(node.range().start);
        Origin {
            file: Some(self.file.to_owned()),
            line: Some(line),
            element,
        }
    }

    fn element_origin(&self, node: Node<'_, '_>) -> Origin {
        let name = node.tag_name().name();
        let element = match node.attribute("name") {
            Some(n) => format!("<{name} name=\"{n}\">"),
            None => format!("<{name}>"),
        };
        self.origin(node, element)
    }

    fn warn(&mut self, node: Node<'_, '_>, message: String) {
        let origin = self.element_origin(node);
        tracing::warn!(%origin, "{message}");
        self.out.warnings.push(ToolsFileWarning { origin, message });
    }

    fn unknown_attributes(&mut self, node: Node<'_, '_>, known: &[&str]) {
        let unknown: Vec<String> = node
            .attributes()
            .filter(|a| a.namespace().is_none() && !known.contains(&a.name()))
            .map(|a| a.name().to_owned())
            .collect();
        for name in unknown {
            self.warn(node, format!("unknown attribute `{name}`, ignored"));
        }
    }

    fn site(&mut self, node: Node<'_, '_>) -> Result<(), ToolsFileError> {
        self.unknown_attributes(node, &["id", "ref", "name"]);
        let site = ["id", "ref", "name"]
            .into_iter()
            .find_map(|attribute| node.attribute(attribute))
            .map(str::trim)
            .filter(|site| !site.is_empty());
        if let Some(site) = site {
            if !self.sites.iter().any(|seen| seen == site) {
                self.sites.push(site.to_owned());
            }
        }
        self.site = site.map(str::to_owned);
        for child in elements(node) {
            self.schema_type(child)?;
        }
        self.site = None;
        Ok(())
    }

    fn schema_type(&mut self, node: Node<'_, '_>) -> Result<(), ToolsFileError> {
        let schema_type = node.tag_name().name().to_owned();
        self.unknown_attributes(node, &["parent"]);
        if let Some(parent) = node.attribute("parent") {
            let parent = parent.trim();
            if parent.is_empty() {
                return Err(ToolsFileError::invalid(
                    &self.element_origin(node),
                    "`parent` is empty: name the schema.org type this one is a kind of",
                ));
            }
            self.out
                .types
                .insert(schema_type.clone(), parent.to_owned());
        }
        for child in elements(node) {
            if child.tag_name().name() == "Tool" {
                let tool = self.tool(child, &schema_type)?;
                self.out.tools.push(tool);
            } else {
                let name = child.tag_name().name();
                self.warn(child, format!("unknown element <{name}> in <{schema_type}> (only <Tool> is read), ignored"));
            }
        }
        Ok(())
    }

    fn tool(
        &mut self,
        node: Node<'_, '_>,
        schema_type: &str,
    ) -> Result<DeclaredTool, ToolsFileError> {
        let origin = self.element_origin(node);
        self.unknown_attributes(node, &["name", "enabled"]);
        let name = node.attribute("name").map(str::trim).unwrap_or_default();
        if name.is_empty() {
            return Err(ToolsFileError::invalid(
                &origin,
                "a <Tool> needs a `name` attribute",
            ));
        }
        let enabled = match node.attribute("enabled") {
            None => true,
            Some(text) => parse_bool(text).ok_or_else(|| {
                ToolsFileError::invalid(
                    &origin,
                    format!("`enabled` is \"{text}\": write \"true\" or \"false\""),
                )
            })?,
        };
        let mut tool = DeclaredTool::new(name, schema_type, "");
        tool.enabled = enabled;
        tool.site = self.site.clone();
        tool.origin = origin.clone();
        let mut seen: Vec<&str> = Vec::new();
        for child in elements(node) {
            let element = child.tag_name().name();
            let at = self.element_origin(child);
            let single = ["path", "method", "handler", "prompt", "returnStruc"];
            if single.contains(&element) {
                if seen.contains(&element) {
                    return Err(ToolsFileError::invalid(
                        &at,
                        format!("a second <{element}> in tool `{name}`: a tool has one"),
                    ));
                }
                seen.push(element);
            }
            let text = text_of(child);
            match element {
                "path" => tool.path = non_empty(text),
                "handler" => tool.handler = non_empty(text),
                "method" => {
                    tool.method = ToolMethod::parse(&text);
                    if tool.method.is_none() {
                        let message = format!(
                            "unknown method \"{}\" (builtin, code, extension or url), ignored",
                            text.trim()
                        );
                        self.warn(child, message);
                    }
                }
                "argument" => {
                    let arg = child.attribute("name").map(str::trim).unwrap_or_default();
                    if arg.is_empty() {
                        return Err(ToolsFileError::invalid(
                            &at,
                            "an <argument> needs a `name` attribute",
                        ));
                    }
                    tool.arguments.push(ToolArgument {
                        name: arg.to_owned(),
                        description: text.trim().to_owned(),
                    });
                }
                "example" => {
                    if let Some(example) = non_empty(text) {
                        tool.examples.push(example);
                    }
                }
                "prompt" => tool.prompt = dedent(&text),
                // Empty, it says nothing (as NLWeb reads it).
                "returnStruc" if text.trim().is_empty() => {}
                "returnStruc" => {
                    let line = at.line.unwrap_or(1);
                    tool.return_struc = Some(return_struc(&text, &at, line)?);
                }
                other => {
                    self.warn(
                        child,
                        format!("unknown element <{other}> in tool `{name}`, ignored"),
                    );
                }
            }
        }
        Ok(tool)
    }
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => Some(true),
        "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// All the text inside an element (CDATA included), in document order.
fn text_of(node: Node<'_, '_>) -> String {
    node.descendants()
        .filter(Node::is_text)
        .filter_map(|n| n.text())
        .collect()
}

fn non_empty(text: String) -> Option<String> {
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// The text without the blank lines around it and without the indentation its lines share
/// (the first line, often on the tag's line, is left out of the count).
pub(crate) fn dedent(text: &str) -> String {
    // Indentation is ASCII spaces and tabs, one byte each: a cut never lands inside a
    // character, whatever other whitespace a line starts with.
    let indentation = |line: &str| line.len() - line.trim_start_matches([' ', '\t']).len();
    let lines: Vec<&str> = text.trim_matches(['\n', '\r']).lines().collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| indentation(l))
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let cut = if i == 0 {
            line.trim_start()
        } else {
            &line[indentation(line).min(indent)..]
        };
        out.push(cut.trim_end());
    }
    out.join("\n").trim().to_owned()
}

/// A `returnStruc`: a JSON object, its errors placed on the file's lines.
fn return_struc(
    text: &str,
    at: &Origin,
    element_line: usize,
) -> Result<Map<String, Value>, ToolsFileError> {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(other) => Err(ToolsFileError::invalid(
            at,
            format!(
                "<returnStruc> must be a JSON object of field -> description, not {}",
                kind(&other)
            ),
        )),
        Err(e) => {
            let leading = text.len() - text.trim_start().len();
            let skipped_lines = text[..leading].matches('\n').count();
            let mut origin = at.clone();
            origin.line = Some(element_line + skipped_lines + e.line().saturating_sub(1));
            Err(ToolsFileError::invalid(
                &origin,
                format!("<returnStruc> is not JSON: {e}"),
            ))
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedent_removes_shared_indentation_and_blank_edges() {
        let text = "\n        The user asked {request.query}.\n\n          - one\n        Score it.\n      ";
        assert_eq!(
            dedent(text),
            "The user asked {request.query}.\n\n  - one\nScore it."
        );
    }

    #[test]
    fn dedent_cuts_only_ascii_indentation_so_never_inside_a_character() {
        // An ideographic space (3 bytes) and a no-break space (2 bytes) start lines indented
        // less than two ASCII spaces' worth of bytes.
        let text = "first\n  a\n\u{3000}b\n \u{a0}c";
        assert_eq!(dedent(text), "first\n  a\n\u{3000}b\n \u{a0}c");
        assert_eq!(dedent("x\n\t\ty\n\t\tz"), "x\ny\nz");
    }

    #[test]
    fn a_return_struc_error_names_the_line_in_the_file() {
        let at = Origin {
            file: Some("t.xml".into()),
            line: Some(10),
            element: "<returnStruc>".into(),
        };
        let err = return_struc("\n  {\n \"score\": \"x\",\n }\n", &at, 10).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("t.xml:13: <returnStruc>"), "{text}");
    }
}
