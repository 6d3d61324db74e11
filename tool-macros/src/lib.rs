//! The macros of `ai-tool`. Use them through the facade: `use ai_tool::prelude::*;`.
//!
//! Each macro runs the same pipeline: parse (`attr`, `ast`), check (`valid`, every error at its
//! tokens, all at once), expand (`expand`).

#![warn(missing_docs)]
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
use quote::{quote, ToTokens};
use syn::{ItemFn, ItemImpl};

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
    let mut item = match syn::parse::<ItemImpl>(input) {
        Ok(item) => item,
        Err(e) => {
            return with_error(
                e,
                "`#[ai_tools]` goes on an impl block: `#[ai_tools] impl MyService { .. }`",
            )
        }
    };
    let mut cx = Ctxt::new();
    let impl_attr = attr::parse_impl_attr(args.into(), &mut cx);
    let tools = ast::ToolImpl::from_impl(impl_attr, &mut item, &mut cx);
    cx.record(tools.validate());
    output(item, cx.check().map(|()| expand::tools(&tools)))
}

/// Makes a function a tool. On a method, the impl block needs `#[ai_tools]`.
///
/// Keys: `name`, `description` (default: the doc comment), `title`, `category`, `purpose`
/// (repeatable), `selectable`, `keywords = [..]`, `examples = [..]`, `read_only`, `destructive`,
/// `idempotent`, `open_world`, `timeout = "5s"`, `max_result_bytes = 20_000`, `max_retries = 2`,
/// `requires_approval`, `defer_loading`, `callers = "code"` (or `"model_and_code"`),
/// `grammar = regex(r"..")` (or `lark("..")`, `free`: the tool's one `String` parameter is
/// text the model writes), `icon = "https://.."`,
/// `task` (or `task = "required"`: an MCP server runs its calls as tasks), `strict`,
/// `convert = path`, `crate = path`.
/// Parameters take `#[arg(description = "..", default = expr, flatten)]`.
#[proc_macro_attribute]
pub fn ai_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut item = match syn::parse::<ItemFn>(input) {
        Ok(item) => item,
        Err(e) => return with_error(
            e,
            "`#[ai_tool]` goes on a function, or on a method inside an impl marked `#[ai_tools]`",
        ),
    };
    let mut cx = Ctxt::new();
    let attr = attr::parse_tool_attr(args.into(), &mut cx);
    let tool = ast::ToolFn::from_fn(attr, None, &item.attrs, &mut item.sig, &mut cx);
    cx.record(tool.validate(valid::Place::Free));
    output(item, cx.check().map(|()| expand::free_tool(&tool)))
}

/// Registers a converter for the tool named in the attribute, wherever that tool is defined:
/// `fn(T) -> ToolOutput` or `fn(T, &ToolContext) -> ToolOutput`, where `T` is what the tool
/// returns (the `Ok` type of a `Result`). Checked at `Executor::build()`.
///
/// Takes `crate = path` after the name when the facade is reachable under another name:
/// `#[ai_tool_converter("cancel", crate = my_facade)]`.
#[proc_macro_attribute]
pub fn ai_tool_converter(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = match syn::parse::<ItemFn>(input) {
        Ok(item) => item,
        Err(e) => {
            return with_error(
                e,
                "`#[ai_tool_converter(\"tool_name\")]` goes on a function",
            )
        }
    };
    let mut cx = Ctxt::new();
    let attr = attr::parse_converter_attr(args.into(), &mut cx);
    let converter = ast::Converter::from_fn(attr, &item);
    cx.record(converter.validate());
    output(item, cx.check().map(|()| expand::converter(&converter)))
}

/// The item as it stands, then what was generated for it, or every error found.
fn output(item: impl ToTokens, generated: syn::Result<TokenStream2>) -> TokenStream {
    let generated = generated.unwrap_or_else(|e| e.to_compile_error());
    quote!(#item #generated).into()
}

fn with_error(error: syn::Error, hint: &str) -> TokenStream {
    syn::Error::new(error.span(), format!("{hint} ({error})"))
        .to_compile_error()
        .into()
}
