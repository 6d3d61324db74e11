//! The macros' input read into plain structs: an `#[ai_tools]` impl, a tool function (its
//! parameters, what it returns, its name and description) and a converter. Nothing is refused
//! here but what cannot be parsed; `valid` checks what was read.

use proc_macro2::Span;
use syn::{
    Attribute, Expr, FnArg, Ident, ImplItem, ItemFn, ItemImpl, LitStr, Pat, ReturnType, Signature,
    Type,
};

use crate::attr::{self, ArgAttr, ConverterAttr, ImplAttr, ToolAttr};
use crate::ctxt::Ctxt;

/// An impl block marked `#[ai_tools]`.
pub(crate) struct ToolImpl {
    pub attr: ImplAttr,
    pub self_ty: Type,
    /// The impl's generics, refused when there are any.
    pub generics: syn::Generics,
    /// The trait of a trait impl, refused.
    pub trait_path: Option<syn::Path>,
    /// Its methods marked `#[ai_tool]`.
    pub tools: Vec<ToolFn>,
}

impl ToolImpl {
    /// Reads the impl; the `#[ai_tool]` attributes are taken off its methods (and their `#[arg]`
    /// attributes off their parameters), so that the impl can be emitted as it stands.
    pub(crate) fn from_impl(impl_attr: ImplAttr, item: &mut ItemImpl, cx: &mut Ctxt) -> Self {
        let mut tools = Vec::new();
        let namespace = impl_attr.namespace.as_ref().and_then(|lit| {
            let description = doc_text(&item.attrs);
            if description.is_none() {
                cx.error(
                    lit,
                    "a namespace needs a description: write a doc comment on the impl block \
                     saying what its tools are for",
                );
            }
            Some((lit.value(), description?))
        });
        for impl_item in &mut item.items {
            let ImplItem::Fn(method) = impl_item else {
                continue;
            };
            let Some((tool_attr, only_when)) = take_tool_attr(&mut method.attrs) else {
                continue;
            };
            let tokens = match &tool_attr.meta {
                syn::Meta::Path(_) => proc_macro2::TokenStream::new(),
                syn::Meta::List(list) => list.tokens.clone(),
                syn::Meta::NameValue(nv) => {
                    cx.error(nv, "write `#[ai_tool]` or `#[ai_tool(..)]`");
                    continue;
                }
            };
            let tool_attr = attr::parse_tool_attr(tokens, cx);
            let mut tool = ToolFn::from_fn(
                tool_attr,
                impl_attr.prefix.as_ref(),
                &method.attrs,
                &mut method.sig,
                cx,
            );
            // A second `#[ai_tool]` is reported by `valid`; left on the method, it would expand
            // again, as a method outside `#[ai_tools]`.
            method.attrs.retain(|a| !is_tool_attr(a.path()));
            // `#[cfg_attr(PRED, ai_tool)]`: the method is a tool when PRED holds.
            if let Some(predicate) = only_when {
                tool.cfgs.push(syn::parse_quote!(#[cfg(#predicate)]));
            }
            tool.namespace = namespace.clone();
            tools.push(tool);
        }
        ToolImpl {
            self_ty: (*item.self_ty).clone(),
            generics: item.generics.clone(),
            trait_path: item.trait_.as_ref().map(|(_, path, _)| path.clone()),
            tools,
            attr: impl_attr,
        }
    }
}

/// Takes the method's `#[ai_tool]` off it: written alone, or in a `#[cfg_attr(PRED, ..)]`
/// (whose other attributes stay), with PRED then. The `cfg_attr` must be read here: the
/// compiler expands it only after `#[ai_tools]` has run.
fn take_tool_attr(attrs: &mut Vec<Attribute>) -> Option<(Attribute, Option<syn::Meta>)> {
    if let Some(position) = attrs.iter().position(|a| is_tool_attr(a.path())) {
        return Some((attrs.remove(position), None));
    }
    type Metas = syn::punctuated::Punctuated<syn::Meta, syn::Token![,]>;
    for index in 0..attrs.len() {
        let attr = &attrs[index];
        if !attr.path().is_ident("cfg_attr") {
            continue;
        }
        let Ok(metas) = attr.parse_args_with(Metas::parse_terminated) else {
            continue;
        };
        let mut items: Vec<syn::Meta> = metas.into_iter().collect();
        let Some(position) = (items.iter().skip(1)).position(|m| is_tool_attr(m.path())) else {
            continue;
        };
        let tool = items.remove(position + 1);
        let predicate = items.remove(0);
        let tool_attr = Attribute {
            meta: tool,
            ..attr.clone()
        };
        if items.is_empty() {
            attrs.remove(index);
        } else {
            attrs[index] = syn::parse_quote!(#[cfg_attr(#predicate, #(#items),*)]);
        }
        return Some((tool_attr, Some(predicate)));
    }
    None
}

/// `#[ai_tool]`, however its path is written: `ai_tool`, `ai_tool::ai_tool`,
/// `::ai_tool::ai_tool`, or through a renamed facade (`my_facade::ai_tool`).
fn is_tool_attr(path: &syn::Path) -> bool {
    path.segments.last().is_some_and(|s| s.ident == "ai_tool")
}

/// One function marked `#[ai_tool]`.
pub(crate) struct ToolFn {
    pub attr: ToolAttr,
    pub ident: Ident,
    /// The impl's `prefix`, for a method of an `#[ai_tools(prefix = "..")]` impl.
    pub prefix: Option<String>,
    /// The impl's namespace and its description (the impl's doc comment), for a method of an
    /// `#[ai_tools(namespace = "..")]` impl.
    pub namespace: Option<(String, String)>,
    /// The name before the prefix: `name = ".."`, or the function's name without `r#`.
    pub base_name: String,
    /// `description = ".."`, or the doc comment; empty when there is neither.
    pub description: String,
    pub timeout: Option<Timeout>,
    pub is_async: bool,
    pub receiver: Receiver,
    pub params: Vec<Param>,
    pub output: Output,
    pub sig_span: Span,
    /// The function's generics, refused when there are any but lifetimes.
    pub generics: syn::Generics,
    /// The function's `#[cfg(..)]` attributes: the compiler leaves them to the macro, which
    /// puts them on what it generates, so that a tool compiled out is not registered.
    pub cfgs: Vec<Attribute>,
    /// A doc attribute the macro cannot read (`#[doc = include_str!(..)]`), when the
    /// description would come from the doc comment.
    pub unread_doc: Option<Attribute>,
    /// `unsafe fn`, refused.
    pub unsafety: Option<syn::Token![unsafe]>,
    /// A second `#[ai_tool]` on the function, refused.
    pub repeated: Option<Attribute>,
}

/// `timeout = ".."`: the literal, and the milliseconds it says or why it says none.
pub(crate) struct Timeout {
    pub lit: LitStr,
    pub ms: Result<u64, String>,
}

pub(crate) enum Receiver {
    /// A free or associated function.
    None,
    /// `&self`.
    Ref,
    /// `&mut self` or `self`: refused.
    Other(Box<syn::Receiver>),
}

pub(crate) struct Param {
    /// The parameter's name; `None` when it is written as a pattern, which `valid` refuses.
    pub ident: Option<Ident>,
    /// A `#[cfg(..)]` on the parameter, which `valid` refuses.
    pub cfg: Option<Attribute>,
    pub pat: Box<Pat>,
    /// The type as written, for the checks.
    pub written: Type,
    /// The owned type the argument deserializes into.
    pub ty: Type,
    /// Whether the function takes a reference, so `&value` is passed.
    pub by_ref: bool,
    /// Whether `ty` is the owned form of another type (`String` for `&str`, `Vec<T>` for
    /// `&[T]`), so a default written in the borrowed form is converted with `From`.
    pub owned_form: bool,
    pub role: Role,
    pub arg: ArgAttr,
}

#[derive(PartialEq)]
pub(crate) enum Role {
    /// A property of the arguments object.
    Property,
    /// `#[arg(flatten)]`: the whole arguments object.
    Flatten,
    /// `ToolContext`: injected (`valid` asks for it by shared reference).
    Context,
}

/// What the function returns: its type as written, `()` when nothing is written. What kind of
/// value it is (a `Result`, text, JSON) is left to the compiler, which sees through aliases.
pub(crate) struct Output {
    pub ty: Type,
}

impl ToolFn {
    /// Reads the signature; `#[arg]` attributes are taken off the parameters (they are ours, and
    /// the compiler would refuse them). `prefix` is the impl's, for a method.
    pub(crate) fn from_fn(
        attr: ToolAttr,
        prefix: Option<&LitStr>,
        attrs: &[Attribute],
        sig: &mut Signature,
        cx: &mut Ctxt,
    ) -> Self {
        let mut receiver = Receiver::None;
        let mut params = Vec::new();
        for input in &mut sig.inputs {
            match input {
                FnArg::Receiver(r) => {
                    receiver = if is_shared_self(r) {
                        Receiver::Ref
                    } else {
                        Receiver::Other(Box::new(r.clone()))
                    };
                }
                FnArg::Typed(typed) => {
                    let mut arg = ArgAttr::default();
                    typed.attrs.retain(|a| {
                        let ours = a.path().is_ident("arg");
                        if ours {
                            attr::parse_arg_attr(a, &mut arg, cx);
                        }
                        !ours
                    });
                    let mut param = parse_param(typed.pat.clone(), &typed.ty, arg);
                    param.cfg = typed.attrs.iter().find(|a| is_cfg(a)).cloned();
                    if param.role == Role::Context && param.by_ref {
                        // `&ToolContext` as written would be refused in an `async fn`, where an
                        // elided lifetime must be shown: it is the same type as `<'_>`.
                        show_elided_lifetime(&mut typed.ty);
                    }
                    params.push(param);
                }
            }
        }
        let base_name = match &attr.name {
            Some(lit) => lit.value(),
            None => sig.ident.to_string().trim_start_matches("r#").to_owned(),
        };
        let description = match &attr.description {
            Some(lit) => lit.value(),
            None => doc_text(attrs).unwrap_or_default(),
        };
        let unread_doc = match &attr.description {
            Some(_) => None,
            None => attrs.iter().find(|a| is_unread_doc(a)).cloned(),
        };
        let cfgs = attrs.iter().filter(|a| is_cfg(a)).cloned().collect();
        let timeout = attr.timeout.as_ref().map(|lit| Timeout {
            lit: lit.clone(),
            ms: parse_duration_ms(&lit.value()),
        });
        ToolFn {
            ident: sig.ident.clone(),
            prefix: prefix.map(LitStr::value),
            namespace: None,
            base_name,
            description,
            timeout,
            is_async: sig.asyncness.is_some(),
            receiver,
            params,
            output: parse_output(&sig.output),
            sig_span: syn::spanned::Spanned::span(&sig.ident),
            generics: sig.generics.clone(),
            cfgs,
            unread_doc,
            unsafety: sig.unsafety,
            repeated: attrs.iter().find(|a| is_tool_attr(a.path())).cloned(),
            attr,
        }
    }

    /// The name the tool is exposed under: `prefix_name` in a prefixed impl.
    pub(crate) fn name(&self) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}_{}", self.base_name),
            None => self.base_name.clone(),
        }
    }

    /// The time limit in milliseconds; a duration `valid` refused counts as none.
    pub(crate) fn timeout_ms(&self) -> Option<u64> {
        self.timeout
            .as_ref()
            .and_then(|t| t.ms.as_ref().ok().copied())
    }
}

/// A function marked `#[ai_tool_converter(..)]`.
pub(crate) struct Converter {
    pub attr: ConverterAttr,
    pub ident: Ident,
    pub sig: Signature,
    /// The type of its first parameter, the value converted, when it has one.
    pub input: Option<Type>,
}

impl Converter {
    pub(crate) fn from_fn(attr: ConverterAttr, item: &ItemFn) -> Self {
        let input = match item.sig.inputs.first() {
            Some(FnArg::Typed(t)) => Some((*t.ty).clone()),
            _ => None,
        };
        Converter {
            attr,
            ident: item.sig.ident.clone(),
            sig: item.sig.clone(),
            input,
        }
    }
}

/// The name is kept as written: a raw identifier (`r#type`) stays raw, since the generated
/// struct's field is named the same; serde and schemars name its property without the `r#`.
fn parse_param(pat: Box<Pat>, written: &Type, arg: ArgAttr) -> Param {
    // A type passed through a `macro_rules!` `$t:ty` comes in an invisible group.
    let written = ungrouped(written);
    let ident = match &*pat {
        Pat::Ident(pat) => Some(pat.ident.clone()),
        _ => None,
    };
    let owned_form = matches!(written, Type::Reference(r) if owned(&r.elem) != *r.elem);
    let (ty, by_ref) = match written {
        Type::Reference(r) if is_context(&r.elem) => ((*r.elem).clone(), true),
        Type::Reference(r) => (owned(&r.elem), true),
        other => (other.clone(), false),
    };
    let role = if is_context(&ty) {
        Role::Context
    } else if arg.flatten.is_some() {
        Role::Flatten
    } else {
        Role::Property
    };
    Param {
        ident,
        cfg: None,
        pat,
        written: written.clone(),
        ty,
        by_ref,
        owned_form,
        role,
        arg,
    }
}

/// `ty` out of the invisible groups and parentheses around it.
pub(crate) fn ungrouped(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(g) => ty = &g.elem,
            Type::Paren(p) => ty = &p.elem,
            _ => return ty,
        }
    }
}

/// `&self`, or `self: &Self` (with any lifetime) written out: syn gives both their type.
fn is_shared_self(receiver: &syn::Receiver) -> bool {
    matches!(ungrouped(&receiver.ty), Type::Reference(r)
        if r.mutability.is_none() && matches!(ungrouped(&r.elem), Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self")))
}

/// The owned type behind a reference: `str` -> `String`, `[T]` -> `Vec<T>`.
fn owned(ty: &Type) -> Type {
    match ty {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => {
            syn::parse_quote!(::std::string::String)
        }
        Type::Slice(s) => {
            let elem = &s.elem;
            syn::parse_quote!(::std::vec::Vec<#elem>)
        }
        other => other.clone(),
    }
}

fn parse_output(output: &ReturnType) -> Output {
    let ty = match output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    Output { ty }
}

/// `ToolContext`, with or without its lifetime.
fn is_context(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && last_ident_is(&p.path, "ToolContext")
    && p.path.segments.last().is_some_and(|s| match &s.arguments {
        syn::PathArguments::None => true,
        syn::PathArguments::AngleBracketed(a) => a.args.iter().all(|a| matches!(a, syn::GenericArgument::Lifetime(_))),
        syn::PathArguments::Parenthesized(_) => false,
    }))
}

/// `&ToolContext` becomes `&ToolContext<'_>`; a lifetime already written is kept.
fn show_elided_lifetime(ty: &mut Type) {
    let Type::Reference(r) = ty else { return };
    let Type::Path(p) = &mut *r.elem else { return };
    if let Some(last) = p.path.segments.last_mut() {
        if last.arguments.is_none() {
            let span = last.ident.span();
            last.arguments =
                syn::PathArguments::AngleBracketed(syn::parse_quote_spanned!(span=> <'_>));
        }
    }
}

pub(crate) fn last_ident_is(path: &syn::Path, name: &str) -> bool {
    path.segments.last().is_some_and(|s| s.ident == name)
}

pub(crate) fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && last_ident_is(&p.path, "Option"))
}

/// Whether an attribute is `#[cfg(..)]`.
fn is_cfg(attr: &Attribute) -> bool {
    attr.path().is_ident("cfg")
}

/// Whether an attribute is a doc comment whose text is not a string literal: a macro call
/// (`include_str!`), which runs after the macro has read the doc comment.
fn is_unread_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
        && matches!(&attr.meta, syn::Meta::NameValue(nv)
            if !matches!(&nv.value, Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(_), .. })))
}

/// The doc comment: each line without the space after `///` (indentation kept, as rustdoc
/// keeps it), trailing space removed, paragraphs kept.
fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => {
                    let line = s.value();
                    let line = line.strip_prefix(' ').unwrap_or(&line);
                    Some(line.trim_end().to_owned())
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `"500ms"`, `"5s"`, `"2m"`, `"1h"`.
fn parse_duration_ms(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return Err(format!("`{text}` is not a duration; write a whole number and a unit, such as \"500ms\", \"5s\", \"2m\" or \"1h\"")),
    };
    match number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
    {
        Some(ms) if ms > 0 => Ok(ms),
        _ => Err(format!(
            "`{text}` is not a positive duration, such as \"5s\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("5s"), Ok(5_000));
        assert_eq!(parse_duration_ms("2m"), Ok(120_000));
        assert_eq!(parse_duration_ms("1h"), Ok(3_600_000));
        assert!(parse_duration_ms("5").is_err());
        assert!(parse_duration_ms("0s").is_err());
        assert!(parse_duration_ms("1.5s").is_err());
    }
}
