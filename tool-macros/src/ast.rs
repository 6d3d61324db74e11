//! A tool function read into plain structs: its parameters and what it returns.

use proc_macro2::Span;
use syn::{Attribute, Expr, FnArg, Ident, Pat, ReturnType, Signature, Type};

use crate::attr::{self, ArgAttr, ToolAttr};
use crate::ctxt::Ctxt;

/// One function marked `#[ai_tool]`.
pub(crate) struct ToolFn {
    pub attr: ToolAttr,
    pub ident: Ident,
    pub is_async: bool,
    pub receiver: Receiver,
    pub params: Vec<Param>,
    pub output: Output,
    pub docs: Option<String>,
    pub sig_span: Span,
    /// The function's generics, refused when there are any.
    pub generics: syn::Generics,
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
    pub ident: Ident,
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
    /// `&ToolContext`: injected.
    Context,
}

/// What the function returns: its type as written, `()` when nothing is written. What kind of
/// value it is (a `Result`, text, JSON) is left to the compiler, which sees through aliases.
pub(crate) struct Output {
    pub ty: Type,
}

/// Reads the signature; `#[arg]` attributes are taken off the parameters (they are ours, and
/// the compiler would refuse them).
pub(crate) fn parse_fn(
    attr: ToolAttr,
    attrs: &[Attribute],
    sig: &mut Signature,
    cx: &mut Ctxt,
) -> ToolFn {
    let mut receiver = Receiver::None;
    let mut params = Vec::new();
    for input in &mut sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                receiver = if r.reference.is_some() && r.mutability.is_none() {
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
                let Pat::Ident(pat) = &*typed.pat else {
                    cx.error(&typed.pat, "a tool parameter needs a plain name, such as `city: String`; patterns cannot name an argument");
                    continue;
                };
                if let Some(param) = parse_param(pat.ident.clone(), &typed.ty, arg, cx) {
                    if param.role == Role::Context {
                        // `&ToolContext` as written would be refused in an `async fn`, where an
                        // elided lifetime must be shown: it is the same type as `<'_>`.
                        show_elided_lifetime(&mut typed.ty);
                    }
                    params.push(param);
                }
            }
        }
    }
    ToolFn {
        attr,
        ident: sig.ident.clone(),
        is_async: sig.asyncness.is_some(),
        receiver,
        params,
        output: parse_output(&sig.output, cx),
        docs: doc_text(attrs),
        sig_span: syn::spanned::Spanned::span(&sig.ident),
        generics: sig.generics.clone(),
    }
}

/// The name is kept as written: a raw identifier (`r#type`) stays raw, since the generated
/// struct's field is named the same; serde and schemars name its property without the `r#`.
fn parse_param(ident: Ident, ty: &Type, arg: ArgAttr, cx: &mut Ctxt) -> Option<Param> {
    let owned_form = matches!(ty, Type::Reference(r) if owned(&r.elem) != *r.elem);
    let (ty, by_ref) = match ty {
        Type::Reference(r) if r.mutability.is_some() => {
            cx.error(
                ty,
                "a tool parameter cannot be `&mut`; take the value or a shared reference",
            );
            return None;
        }
        Type::Reference(r) if is_context(&r.elem) => {
            return Some(Param {
                ident,
                ty: (*r.elem).clone(),
                by_ref: true,
                owned_form: false,
                role: Role::Context,
                arg,
            });
        }
        Type::Reference(r) => (owned(&r.elem), true),
        other => (other.clone(), false),
    };

    if is_context(&ty) {
        cx.error(&ty, "take the context by reference: `ctx: &ToolContext`");
        return None;
    }
    let role = if arg.flatten.is_some() {
        Role::Flatten
    } else {
        Role::Property
    };
    Some(Param {
        ident,
        ty,
        by_ref,
        owned_form,
        role,
        arg,
    })
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

fn parse_output(output: &ReturnType, cx: &mut Ctxt) -> Output {
    let ty = match output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    check_returned(&ty, cx);
    Output { ty }
}

/// What the compiler could not name for the converter check: borrowed values (apart from
/// `&str`, which is made a `String`) and `impl Trait`, looked for inside `Result<..>` too.
fn check_returned(ty: &Type, cx: &mut Ctxt) {
    match ty {
        Type::Reference(r) if matches!(&*r.elem, Type::Path(p) if p.path.is_ident("str")) => {}
        Type::Reference(_) => cx.error(
            ty,
            "a tool must return an owned value; return the type itself, not a reference",
        ),
        Type::ImplTrait(_) => cx.error(ty, "a tool must return a named type, not `impl Trait`"),
        Type::Paren(p) => check_returned(&p.elem, cx),
        Type::Path(p) if p.qself.is_none() && last_ident_is(&p.path, "Result") => {
            if let Some(syn::PathArguments::AngleBracketed(args)) =
                p.path.segments.last().map(|s| &s.arguments)
            {
                if let Some(syn::GenericArgument::Type(ok)) = args.args.first() {
                    check_returned(ok, cx);
                }
            }
        }
        _ => {}
    }
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

fn last_ident_is(path: &syn::Path, name: &str) -> bool {
    path.segments.last().is_some_and(|s| s.ident == name)
}

pub(crate) fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && last_ident_is(&p.path, "Option"))
}

/// The doc comment, lines trimmed, paragraphs kept.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
