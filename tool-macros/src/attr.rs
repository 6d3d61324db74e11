//! Parsing of `#[ai_tool(..)]`, `#[ai_tools(..)]`, `#[ai_tool_converter(..)]` and `#[arg(..)]`.
//! Only what the syntax itself refuses is reported here; what the values say is checked in
//! `valid`.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Ident, LitBool, LitStr, Path, Token};

use crate::ctxt::Ctxt;

/// What `#[ai_tool(..)]` says.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub title: Option<String>,
    pub category: Option<String>,
    pub purposes: Vec<String>,
    pub selectable: bool,
    pub keywords: Vec<String>,
    pub examples: Vec<String>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
    pub timeout: Option<LitStr>,
    pub max_result_bytes: Option<usize>,
    pub max_retries: Option<usize>,
    pub requires_approval: bool,
    pub defer_loading: bool,
    pub callers: Option<LitStr>,
    pub grammar: Option<Grammar>,
    pub icon: Option<String>,
    pub task: Option<LitStr>,
    pub strict: Option<bool>,
    pub convert: Vec<Path>,
    pub krate: Option<Path>,
}

pub(crate) fn parse_tool_attr(tokens: proc_macro2::TokenStream, cx: &mut Ctxt) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let mut seen = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        // `purpose` is repeatable; a second `convert` is reported by `valid`, at its path.
        if !matches!(key.as_str(), "purpose" | "convert") {
            once(&meta, &key, &mut seen)?;
        }
        match key.as_str() {
            "name" => attr.name = Some(meta.value()?.parse()?),
            "description" => attr.description = Some(meta.value()?.parse()?),
            "title" => attr.title = Some(string(&meta)?),
            "category" => attr.category = Some(string(&meta)?),
            "purpose" => attr.purposes.push(string(&meta)?),
            "selectable" => attr.selectable = flag(&meta)?,
            "keywords" => attr.keywords = strings(&meta)?,
            "examples" => attr.examples = strings(&meta)?,
            "read_only" => attr.read_only = Some(flag(&meta)?),
            "destructive" => attr.destructive = Some(flag(&meta)?),
            "idempotent" => attr.idempotent = Some(flag(&meta)?),
            "open_world" => attr.open_world = Some(flag(&meta)?),
            "timeout" => attr.timeout = Some(meta.value()?.parse()?),
            "max_result_bytes" => attr.max_result_bytes = Some(positive(&meta)?),
            "max_retries" => attr.max_retries = Some(count(&meta)?),
            "requires_approval" => attr.requires_approval = flag(&meta)?,
            "defer_loading" => attr.defer_loading = flag(&meta)?,
            "icon" => attr.icon = Some(string(&meta)?),
            "task" => {
                // Bare `task` is `task = "optional"`.
                let value = match meta.input.peek(Token![=]) {
                    true => meta.value()?.parse::<LitStr>()?,
                    false => LitStr::new("optional", syn::spanned::Spanned::span(&meta.path)),
                };
                if !matches!(value.value().as_str(), "optional" | "required") {
                    return Err(syn::Error::new(
                        value.span(),
                        "`task` is bare (`task`, as `task = \"optional\"`) or `task = \"required\"`",
                    ));
                }
                attr.task = Some(value);
            }
            "grammar" => attr.grammar = Some(grammar(&meta)?),
            "callers" => {
                let value: LitStr = meta.value()?.parse()?;
                if !matches!(value.value().as_str(), "model" | "code" | "model_and_code") {
                    return Err(syn::Error::new(
                        value.span(),
                        "`callers` is one of \"model\", \"code\" or \"model_and_code\"",
                    ));
                }
                attr.callers = Some(value);
            }
            "strict" => attr.strict = Some(flag(&meta)?),
            "convert" => {
                attr.convert
                    .push(unquoted_path(&meta, "the converter's path", "convert")?)
            }
            "crate" => attr.krate = Some(krate(&meta)?),
            _ => return Err(meta.error(
                "unknown `#[ai_tool]` key; expected one of: name, description, title, category, \
                     purpose, selectable, keywords, examples, read_only, destructive, idempotent, \
                     open_world, timeout, max_result_bytes, max_retries, requires_approval, \
                     defer_loading, callers, grammar, icon, task, strict, convert, crate",
            )),
        }
        Ok(())
    });
    if let Err(e) = parser.parse2(tokens) {
        cx.push(e);
    }
    attr
}

/// `grammar = free | lark("..") | regex("..")`: the tool takes text, not JSON arguments.
pub(crate) struct Grammar {
    /// `free`, `lark` or `regex`.
    pub syntax: Ident,
    /// The grammar, for `lark` and `regex`.
    pub definition: Option<LitStr>,
}

fn grammar(meta: &ParseNestedMeta) -> syn::Result<Grammar> {
    const FORMS: &str =
        "write `grammar = free`, `grammar = lark(\"..\")` or `grammar = regex(r\"..\")`";
    let value = meta.value()?;
    let syntax: Ident = value
        .parse()
        .map_err(|e| syn::Error::new(e.span(), FORMS))?;
    match syntax.to_string().as_str() {
        "free" => Ok(Grammar {
            syntax,
            definition: None,
        }),
        "lark" | "regex" => {
            let content;
            syn::parenthesized!(content in value);
            let definition: LitStr = content.parse()?;
            if definition.value().trim().is_empty() {
                return Err(syn::Error::new_spanned(&definition, "the grammar is empty"));
            }
            Ok(Grammar {
                syntax,
                definition: Some(definition),
            })
        }
        _ => Err(syn::Error::new_spanned(&syntax, FORMS)),
    }
}

/// What `#[ai_tools(..)]` says.
#[derive(Default)]
pub(crate) struct ImplAttr {
    pub krate: Option<Path>,
    /// `prefix = "users"`: the impl's tools are named `users_<name>`.
    pub prefix: Option<LitStr>,
    /// `namespace = "crm"`: the impl's tools are declared in that namespace, described by the
    /// impl's doc comment.
    pub namespace: Option<LitStr>,
}

pub(crate) fn parse_impl_attr(tokens: proc_macro2::TokenStream, cx: &mut Ctxt) -> ImplAttr {
    let mut attr = ImplAttr::default();
    let mut seen = Vec::new();
    let parser = syn::meta::parser(|meta| {
        if let Some(key) = meta.path.get_ident() {
            once(&meta, &key.to_string(), &mut seen)?;
        }
        if meta.path.is_ident("crate") {
            attr.krate = Some(krate(&meta)?);
        } else if meta.path.is_ident("prefix") {
            attr.prefix = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("namespace") {
            attr.namespace = Some(meta.value()?.parse()?);
        } else {
            return Err(meta.error(
                "`#[ai_tools]` takes `prefix = \"..\"`, `namespace = \"..\"` and `crate = path`; put tool settings on `#[ai_tool(..)]`",
            ));
        }
        Ok(())
    });
    if let Err(e) = parser.parse2(tokens) {
        cx.push(e);
    }
    attr
}

/// What `#[ai_tool_converter(..)]` says: `"tool_name"`, then optionally `crate = path`.
#[derive(Default)]
pub(crate) struct ConverterAttr {
    /// The tool converted for; `None` when not written, which `valid` reports.
    pub tool: Option<LitStr>,
    pub krate: Option<Path>,
}

pub(crate) fn parse_converter_attr(
    tokens: proc_macro2::TokenStream,
    cx: &mut Ctxt,
) -> ConverterAttr {
    let mut attr = ConverterAttr::default();
    let parser = |input: ParseStream| {
        if input.peek(LitStr) {
            attr.tool = Some(input.parse()?);
        } else if input.peek(Ident) && !input.peek2(Token![=]) {
            // The name written bare: said once, with the fix, and read as meant.
            let ident: Ident = input.parse()?;
            cx.error(
                &ident,
                format!("write the tool's name as a string: `#[ai_tool_converter(\"{ident}\")]`"),
            );
            attr.tool = Some(LitStr::new(&ident.to_string(), ident.span()));
        }
        if attr.tool.is_some() {
            if input.is_empty() {
                return Ok(());
            }
            input.parse::<Token![,]>()?;
        }
        let keys = syn::meta::parser(|meta| {
            if meta.path.is_ident("crate") {
                attr.krate = Some(krate(&meta)?);
                Ok(())
            } else {
                Err(meta.error(
                    "`#[ai_tool_converter]` takes the tool's name as a string, then optionally `crate = path`: `#[ai_tool_converter(\"tool_name\")]`",
                ))
            }
        });
        keys.parse2(input.parse()?)
    };
    if let Err(e) = parser.parse2(tokens) {
        cx.push(e);
    }
    attr
}

/// What `#[arg(..)]` on a parameter says.
#[derive(Default)]
pub(crate) struct ArgAttr {
    pub description: Option<String>,
    pub default: Option<Expr>,
    pub flatten: Option<Span>,
    /// The first `#[arg(..)]` written, for errors about the parameter's attributes as a whole.
    pub written: Option<syn::Attribute>,
}

pub(crate) fn parse_arg_attr(attr: &syn::Attribute, into: &mut ArgAttr, cx: &mut Ctxt) {
    into.written.get_or_insert_with(|| attr.clone());
    let result = attr.parse_nested_meta(|meta| {
        let given_twice = |what: bool| match what {
            true => Err(meta.error("this `#[arg]` key is given twice; keep one")),
            false => Ok(()),
        };
        if meta.path.is_ident("description") {
            given_twice(into.description.is_some())?;
            into.description = Some(string(&meta)?);
        } else if meta.path.is_ident("default") {
            given_twice(into.default.is_some())?;
            if !meta.input.peek(Token![=]) {
                // serde's `#[serde(default)]` says `Default::default()`; ours takes the value.
                return Err(meta.error(
                    "write the default value: `#[arg(default = 20)]`; for a parameter the model may leave out without one, take an `Option<T>`",
                ));
            }
            into.default = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("flatten") {
            given_twice(into.flatten.is_some())?;
            into.flatten = Some(meta.path.get_ident().map_or_else(Span::call_site, |i| i.span()));
        } else {
            return Err(meta.error("unknown `#[arg]` key; expected `description = \"..\"`, `default = expr` or `flatten`"));
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.push(e);
    }
}

/// `crate = path`; a quoted path, as serde writes it, is refused with the form to use.
fn krate(meta: &ParseNestedMeta) -> syn::Result<Path> {
    unquoted_path(meta, "the facade's path", "crate")
}

/// `key = path`; a quoted path, as serde writes its paths (`with = ".."`), is refused with the
/// form to use.
fn unquoted_path(meta: &ParseNestedMeta, what: &str, key: &str) -> syn::Result<Path> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        let lit: LitStr = value.parse()?;
        return Err(syn::Error::new_spanned(
            &lit,
            format!("write {what} without quotes: `{key} = {}`", lit.value()),
        ));
    }
    value.parse()
}

/// A key given once: serde refuses a repeated key too, rather than keep the last silently.
fn once(meta: &ParseNestedMeta, key: &str, seen: &mut Vec<String>) -> syn::Result<()> {
    if seen.iter().any(|k| k == key) {
        return Err(meta.error(format!("`{key}` is given twice; keep one")));
    }
    seen.push(key.to_owned());
    Ok(())
}

fn string(meta: &ParseNestedMeta) -> syn::Result<String> {
    Ok(meta.value()?.parse::<LitStr>()?.value())
}

fn strings(meta: &ParseNestedMeta) -> syn::Result<Vec<String>> {
    let value = meta.value()?;
    let content;
    syn::bracketed!(content in value);
    let items = content.parse_terminated(<LitStr as syn::parse::Parse>::parse, Token![,])?;
    Ok(items.iter().map(LitStr::value).collect())
}

/// `key = N`, a whole number of at least 1 that fits a `usize`.
fn positive(meta: &ParseNestedMeta) -> syn::Result<usize> {
    let lit = meta.value()?.parse::<syn::LitInt>()?;
    match lit.base10_parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(syn::Error::new_spanned(
            &lit,
            "expected a number of bytes of at least 1, such as `max_result_bytes = 20_000`",
        )),
    }
}

/// `key = N`, a whole number that fits a `usize`, 0 included.
fn count(meta: &ParseNestedMeta) -> syn::Result<usize> {
    let lit = meta.value()?.parse::<syn::LitInt>()?;
    lit.base10_parse::<usize>().map_err(|_| {
        syn::Error::new_spanned(&lit, "expected a whole number, such as `max_retries = 2`")
    })
}

/// `key` alone means true; `key = true|false` says which.
fn flag(meta: &ParseNestedMeta) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}
