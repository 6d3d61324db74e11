//! The macros of `ai-tool`. Use them through the facade: `use ai_tool::prelude::*;`.
//!
//! Each macro runs the same pipeline: parse (`attr`, `ast`), check (`valid`, every error at its
//! tokens, all at once), expand (`expand`).

#![forbid(unsafe_code)]

mod ast;
mod attr;
mod ctxt;
mod expand;
#[cfg(test)]
mod name_rule;
mod valid;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::{ImplItem, ItemFn, ItemImpl, LitStr};

use ctxt::Ctxt;

/// Makes the methods marked `#[ai_tool]` in this impl block into tools.
///
/// The impl must be inherent and not generic, and tool methods take `&self`. The service is
/// provided to the executor with `Executor::builder().service(Arc::new(service))`.
///
/// Takes `prefix = "users"` to name the impl's tools `users_<name>`, and `crate = path` when
/// the facade is reachable under another name.
#[proc_macro_attribute]
pub fn ai_tools(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let mut impl_attr = attr::parse_impl_attr(args.into(), &mut cx);
    if let Some(prefix) = &impl_attr.prefix {
        if let Err(message) = valid::check_prefix(&prefix.value()) {
            cx.error(prefix, message);
            // Reported once, here, rather than again in every tool's name.
            impl_attr.prefix = None;
        }
    }
    let mut item = match syn::parse::<ItemImpl>(input) {
        Ok(item) => item,
        Err(e) => {
            return with_error(
                e,
                "`#[ai_tools]` goes on an impl block: `#[ai_tools] impl MyService { .. }`",
            )
        }
    };
    if !item.generics.params.is_empty() {
        cx.error(&item.generics, "`#[ai_tools]` cannot be used on a generic impl: a tool needs one concrete service type; write the impl for a concrete type, such as `impl MyService<Postgres>`");
    }
    if let Some((_, path, _)) = &item.trait_ {
        cx.error(path, "`#[ai_tools]` goes on an inherent impl (`impl MyService`), not a trait impl; call the trait method from an inherent method");
    }
    let krate = krate_tokens(impl_attr.krate);
    let self_ty = (*item.self_ty).clone();
    let mut generated = TokenStream2::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(position) = method.attrs.iter().position(|a| is_tool_attr(a.path())) else {
            continue;
        };
        let tool_attr = method.attrs.remove(position);
        let tokens = match &tool_attr.meta {
            syn::Meta::Path(_) => TokenStream2::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => {
                cx.error(nv, "write `#[ai_tool]` or `#[ai_tool(..)]`");
                continue;
            }
        };
        let mut method_cx = Ctxt::default();
        let attr = attr::parse_tool_attr(tokens, &mut method_cx);
        let tool = ast::parse_fn(attr, &method.attrs, &mut method.sig, &mut method_cx);
        let checked = valid::check(&tool, Some(impl_attr.prefix.as_ref()), &mut method_cx);
        if let Some(krate) = &tool.attr.krate {
            method_cx.error(
                krate,
                "put `crate = ..` on `#[ai_tools(..)]`, not on a method",
            );
        }
        match method_cx.check() {
            Ok(()) => generated.extend(expand::tool(
                &tool,
                &checked,
                &expand::Target {
                    krate: &krate,
                    self_ty: Some(&self_ty),
                },
            )),
            Err(e) => cx.push(e),
        }
    }
    let errors = cx.check().err().map(|e| e.to_compile_error());
    quote!(#item #errors #generated).into()
}

/// Makes a function a tool. On a method, the impl block needs `#[ai_tools]`.
///
/// Keys: `name`, `description` (default: the doc comment), `title`, `category`, `purpose`
/// (repeatable), `selectable`, `keywords = [..]`, `examples = [..]`, `read_only`, `destructive`,
/// `idempotent`, `open_world`, `timeout = "5s"`, `convert = path`, `crate = path`.
/// Parameters take `#[arg(description = "..", default = expr, flatten)]`.
#[proc_macro_attribute]
pub fn ai_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let attr = attr::parse_tool_attr(args.into(), &mut cx);
    let mut item = match syn::parse::<ItemFn>(input) {
        Ok(item) => item,
        Err(e) => return with_error(
            e,
            "`#[ai_tool]` goes on a function, or on a method inside an impl marked `#[ai_tools]`",
        ),
    };
    let krate = krate_tokens(attr.krate.clone());
    let tool = ast::parse_fn(attr, &item.attrs, &mut item.sig, &mut cx);
    let checked = valid::check(&tool, None, &mut cx);
    match cx.check() {
        Ok(()) => {
            let generated = expand::tool(
                &tool,
                &checked,
                &expand::Target {
                    krate: &krate,
                    self_ty: None,
                },
            );
            quote!(#item #generated).into()
        }
        Err(e) => {
            let e = e.to_compile_error();
            quote!(#item #e).into()
        }
    }
}

/// Registers a converter for the tool named in the attribute, wherever that tool is defined:
/// `fn(T) -> ToolOutput` or `fn(T, &ToolContext) -> ToolOutput`, where `T` is what the tool
/// returns (the `Ok` type of a `Result`). Checked at `Executor::build()`.
#[proc_macro_attribute]
pub fn ai_tool_converter(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let item = match syn::parse::<ItemFn>(input) {
        Ok(item) => item,
        Err(e) => {
            return with_error(
                e,
                "`#[ai_tool_converter(\"tool_name\")]` goes on a function",
            )
        }
    };
    let tool = match syn::parse::<LitStr>(args) {
        Ok(lit) => {
            if let Err(message) = valid::check_name(&lit.value()) {
                cx.error(&lit, message);
            }
            lit.value()
        }
        Err(_) => {
            cx.error(
                &item.sig.ident,
                "name the tool this converts for: `#[ai_tool_converter(\"tool_name\")]`",
            );
            String::new()
        }
    };
    let input_ty = match item.sig.inputs.first() {
        Some(syn::FnArg::Typed(t)) => Some((*t.ty).clone()),
        _ => None,
    };
    if input_ty.is_none() || item.sig.inputs.len() > 2 {
        cx.error(&item.sig, "a converter is `fn(value: T) -> ToolOutput` or `fn(value: T, ctx: &ToolContext) -> ToolOutput`");
    }
    if !item.sig.generics.params.is_empty() {
        cx.error(
            &item.sig.generics,
            "a converter cannot be generic; name the type the tool returns",
        );
    }
    match (cx.check(), input_ty) {
        (Ok(()), Some(input_ty)) => {
            let generated = expand::converter(&item, &tool, &input_ty, &krate_tokens(None));
            quote!(#item #generated).into()
        }
        (result, _) => {
            let e = result.err().map(|e| e.to_compile_error());
            quote!(#item #e).into()
        }
    }
}

/// `#[ai_tool]`, however its path is written: `ai_tool`, `ai_tool::ai_tool`,
/// `::ai_tool::ai_tool`, or through a renamed facade (`my_facade::ai_tool`).
fn is_tool_attr(path: &syn::Path) -> bool {
    path.segments.last().is_some_and(|s| s.ident == "ai_tool")
}

fn krate_tokens(krate: Option<syn::Path>) -> TokenStream2 {
    match krate {
        Some(path) => quote!(#path),
        None => quote!(::ai_tool),
    }
}

fn with_error(error: syn::Error, hint: &str) -> TokenStream {
    syn::Error::new(error.span(), format!("{hint} ({error})"))
        .to_compile_error()
        .into()
}
