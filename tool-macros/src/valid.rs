//! Checks on what `ast` read, before any code is generated (thiserror's `valid.rs`). Each check
//! returns `Result<()>`; every one that fails is reported, each at the tokens it is about, so
//! `expand` only ever sees input that passed.

use syn::{Error, LitStr, Type};

use crate::ast::{last_ident_is, Converter, Param, Receiver, Role, Timeout, ToolFn, ToolImpl};
use crate::ctxt::Ctxt;

/// Where a tool is defined.
#[derive(Clone, Copy)]
pub(crate) enum Place {
    /// A free function (or a method whose impl lacks `#[ai_tools]`).
    Free,
    /// A method of an `#[ai_tools]` impl; `prefix_ok` is false when the impl's prefix was
    /// refused, so that the tools' names are checked without it and the prefix reported once.
    Method { prefix_ok: bool },
}

impl ToolImpl {
    pub(crate) fn validate(&self) -> syn::Result<()> {
        let mut cx = Ctxt::new();
        let prefix = self.attr.prefix.as_ref().map(check_impl_prefix);
        let prefix_ok = !matches!(prefix, Some(Err(_)));
        if let Some(result) = prefix {
            cx.record(result);
        }
        cx.record(check_impl_not_generic(self));
        cx.record(check_impl_inherent(self));
        for tool in &self.tools {
            cx.record(tool.validate(Place::Method { prefix_ok }));
        }
        cx.check()
    }
}

impl ToolFn {
    pub(crate) fn validate(&self, place: Place) -> syn::Result<()> {
        let mut cx = Ctxt::new();
        for param in &self.params {
            cx.record(check_param(param));
        }
        cx.record(check_returned(&self.output.ty));
        cx.record(check_receiver(self));
        cx.record(check_not_generic(self));
        cx.record(check_in_tool_impl(self, place));
        cx.record(check_tool_name(self, place));
        cx.record(check_description(self));
        cx.record(check_doc_readable(self));
        cx.record(check_one_converter(self));
        cx.record(check_flatten(self));
        cx.record(check_one_context(self));
        cx.record(check_grammar_takes_one_string(self));
        if let Some(timeout) = &self.timeout {
            cx.record(check_timeout(timeout));
        }
        cx.record(check_no_crate_on_method(self, place));
        cx.record(check_safe(self));
        cx.record(check_marked_once(self));
        cx.check()
    }
}

impl Converter {
    pub(crate) fn validate(&self) -> syn::Result<()> {
        let mut cx = Ctxt::new();
        cx.record(check_converter_names_a_tool(self));
        cx.record(check_converter_signature(self));
        cx.record(check_converter_not_generic(self));
        cx.check()
    }
}

fn check_impl_prefix(prefix: &LitStr) -> syn::Result<()> {
    check_prefix(&prefix.value()).map_err(|message| Error::new_spanned(prefix, message))
}

fn check_impl_not_generic(item: &ToolImpl) -> syn::Result<()> {
    if item.generics.params.is_empty() {
        return Ok(());
    }
    Err(Error::new_spanned(
        &item.generics,
        "`#[ai_tools]` cannot be used on a generic impl: a tool needs one concrete service type; write the impl for a concrete type, such as `impl MyService<Postgres>`",
    ))
}

fn check_impl_inherent(item: &ToolImpl) -> syn::Result<()> {
    match &item.trait_path {
        None => Ok(()),
        Some(path) => Err(Error::new_spanned(
            path,
            "`#[ai_tools]` goes on an inherent impl (`impl MyService`), not a trait impl; call the trait method from an inherent method",
        )),
    }
}

fn check_param(param: &Param) -> syn::Result<()> {
    if param.ident.is_none() {
        return Err(Error::new_spanned(
            &param.pat,
            "a tool parameter needs a plain name, such as `city: String`; patterns cannot name an argument",
        ));
    }
    if let Some(cfg) = &param.cfg {
        return Err(Error::new_spanned(
            cfg,
            "a tool parameter cannot be `#[cfg]`-gated: the arguments the model sees would change with the build; gate the whole tool, or make the parameter an `Option`",
        ));
    }
    if param.role != Role::Context {
        check_owned_parameter(param)?;
    } else if let Some(arg) = &param.arg.written {
        return Err(Error::new_spanned(
            arg,
            "`&ToolContext` is injected, not an argument the model gives: it takes no `#[arg(..)]`",
        ));
    }
    if matches!(&param.written, Type::Reference(r) if r.mutability.is_some()) {
        return Err(Error::new_spanned(
            &param.written,
            "a tool parameter cannot be `&mut`; take the value or a shared reference",
        ));
    }
    if param.role == Role::Context && !param.by_ref {
        return Err(Error::new_spanned(
            &param.ty,
            "take the context by reference: `ctx: &ToolContext`",
        ));
    }
    Ok(())
}

/// A parameter whose arguments deserialize into an owned value: the top-level `&` is taken
/// off (`&str` is read as a `String`, `&[T]` as a `Vec<T>`), and nothing borrowed is left
/// below it, nor `impl Trait`, nor a `'static` borrow the call could not lend.
fn check_owned_parameter(param: &Param) -> syn::Result<()> {
    if let Type::Reference(r) = &param.written {
        if r.lifetime.as_ref().is_some_and(|l| l.ident == "static") {
            return Err(Error::new_spanned(
                &param.written,
                "a tool parameter cannot borrow for `'static`: the arguments live for the call; take the owned type (`String` for `&'static str`)",
            ));
        }
    }
    match borrowed_inside(&param.ty) {
        None => Ok(()),
        Some(found) => Err(Error::new_spanned(
            found,
            "a tool parameter must be a type its arguments deserialize into, owning its data: take `String` for `&str`, `Vec<String>` for `&[&str]`, `Option<String>` for `Option<&str>`, a concrete type for `impl Trait`",
        )),
    }
}

/// The first borrowed type, lifetime or `impl Trait` in `ty`, if any.
fn borrowed_inside(ty: &Type) -> Option<proc_macro2::TokenStream> {
    use quote::ToTokens;
    match ty {
        Type::Reference(_) | Type::ImplTrait(_) => Some(ty.to_token_stream()),
        Type::Paren(p) => borrowed_inside(&p.elem),
        Type::Group(g) => borrowed_inside(&g.elem),
        Type::Slice(s) => borrowed_inside(&s.elem),
        Type::Array(a) => borrowed_inside(&a.elem),
        Type::Tuple(t) => t.elems.iter().find_map(borrowed_inside),
        Type::Path(p) => p.path.segments.iter().find_map(|segment| {
            let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
                return None;
            };
            args.args.iter().find_map(|arg| match arg {
                syn::GenericArgument::Type(inner) => borrowed_inside(inner),
                // `'static` is no borrow of the arguments: `Cow<'static, str>` owns its text.
                syn::GenericArgument::Lifetime(l) if l.ident != "static" => {
                    Some(l.to_token_stream())
                }
                _ => None,
            })
        }),
        _ => None,
    }
}

/// What the compiler could not name for the converter check: borrowed values (apart from
/// `&str`, which is made a `String`, and `'static` borrows inside a type) and `impl Trait`,
/// looked for inside `Result<..>` and the other types' parameters too.
fn check_returned(ty: &Type) -> syn::Result<()> {
    match crate::ast::ungrouped(ty) {
        Type::Reference(r) if matches!(&*r.elem, Type::Path(p) if p.path.is_ident("str")) => Ok(()),
        Type::Reference(_) => Err(Error::new_spanned(
            ty,
            "a tool must return an owned value; return the type itself, not a reference",
        )),
        Type::ImplTrait(_) => Err(Error::new_spanned(
            ty,
            "a tool must return a named type, not `impl Trait`",
        )),
        Type::Path(p) if p.qself.is_none() && last_ident_is(&p.path, "Result") => {
            match p.path.segments.last().map(|s| &s.arguments) {
                Some(syn::PathArguments::AngleBracketed(args)) => match args.args.first() {
                    Some(syn::GenericArgument::Type(ok)) => check_returned(ok),
                    _ => Ok(()),
                },
                _ => Ok(()),
            }
        }
        other => match borrowed_below(other) {
            None => Ok(()),
            Some((found, message)) => Err(Error::new_spanned(found, message)),
        },
    }
}

/// `ty` itself when it is a non-`'static` borrow or `impl Trait`, else the first below it.
fn borrowed_in(ty: &Type) -> Option<(proc_macro2::TokenStream, &'static str)> {
    use quote::ToTokens;
    match crate::ast::ungrouped(ty) {
        Type::Reference(r) if r.lifetime.as_ref().is_some_and(|l| l.ident == "static") => {
            borrowed_below(&r.elem)
        }
        found @ (Type::Reference(_) | Type::ImplTrait(_)) => {
            Some((found.to_token_stream(), BORROWED_BELOW))
        }
        other => borrowed_below(other),
    }
}

/// The first non-`'static` borrow, lifetime or `impl Trait` among the type parameters of `ty`
/// (`Option<&str>`, `(u32, &str)`, `Cow<'_, str>`).
fn borrowed_below(ty: &Type) -> Option<(proc_macro2::TokenStream, &'static str)> {
    use quote::ToTokens;
    match crate::ast::ungrouped(ty) {
        Type::Tuple(t) => t.elems.iter().find_map(borrowed_in),
        Type::Slice(s) => borrowed_in(&s.elem),
        Type::Array(a) => borrowed_in(&a.elem),
        Type::Path(p) => p.path.segments.iter().find_map(|segment| {
            let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
                return None;
            };
            args.args.iter().find_map(|arg| match arg {
                syn::GenericArgument::Type(ty) => borrowed_in(ty),
                // The value outlives the call (a converter may keep it): `Cow<'static, str>`
                // may be returned, `Cow<'_, str>` not.
                syn::GenericArgument::Lifetime(l) if l.ident != "static" => {
                    Some((l.to_token_stream(), LIFETIME_BELOW))
                }
                _ => None,
            })
        }),
        _ => None,
    }
}

const BORROWED_BELOW: &str = "a tool must return an owned, named type: `Option<String>` for `Option<&str>`, `Vec<String>` for `Vec<&str>` (a `'static` borrow may stay), a concrete type for `impl Trait`";

const LIFETIME_BELOW: &str = "a tool must return a value that owns its data, which may outlive the call: `String` for `Cow<'_, str>`, an owned type for one that borrows (a `'static` lifetime may stay)";

fn check_receiver(tool: &ToolFn) -> syn::Result<()> {
    match &tool.receiver {
        Receiver::Other(receiver) => Err(Error::new_spanned(
            receiver,
            "a tool method must take `&self`; keep mutable state behind a `Mutex` or an atomic inside the service",
        )),
        Receiver::None | Receiver::Ref => Ok(()),
    }
}

fn check_not_generic(tool: &ToolFn) -> syn::Result<()> {
    // Lifetimes are the caller's to infer: `fn get<'a>(&'a self, key: &'a str)` is called as
    // any method is.
    // A where clause is then about lifetimes or concrete types (`where Self: Sized`), which
    // the call meets or the compiler refuses.
    let only_lifetimes =
        (tool.generics.params.iter()).all(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    if only_lifetimes {
        return Ok(());
    }
    Err(Error::new_spanned(
        &tool.generics,
        "a tool cannot be generic: its schema and its call need concrete types; write the tool for one type (it may call a generic function), or one tool per type",
    ))
}

fn check_safe(tool: &ToolFn) -> syn::Result<()> {
    match &tool.unsafety {
        None => Ok(()),
        Some(unsafety) => Err(Error::new_spanned(
            unsafety,
            "a tool cannot be an `unsafe fn`: whatever arguments the model sends, the call must be sound; make a safe tool that checks what the unsafe function needs and calls it",
        )),
    }
}

fn check_marked_once(tool: &ToolFn) -> syn::Result<()> {
    match &tool.repeated {
        None => Ok(()),
        Some(second) => Err(Error::new_spanned(
            second,
            "`#[ai_tool]` is written twice on this function; keep one",
        )),
    }
}

fn check_in_tool_impl(tool: &ToolFn, place: Place) -> syn::Result<()> {
    match (place, &tool.receiver) {
        (Place::Free, Receiver::Ref) => Err(Error::new(
            tool.sig_span,
            "`#[ai_tool]` on a method needs `#[ai_tools]` on its impl block",
        )),
        _ => Ok(()),
    }
}

fn check_tool_name(tool: &ToolFn, place: Place) -> syn::Result<()> {
    let prefix_ok = match place {
        Place::Free => true,
        Place::Method { prefix_ok } => prefix_ok,
    };
    let name = if prefix_ok {
        tool.name()
    } else {
        tool.base_name.clone()
    };
    let Err(message) = check_name(&name) else {
        return Ok(());
    };
    if let Some(lit) = &tool.attr.name {
        return Err(Error::new_spanned(lit, message));
    }
    let hint = if tool.prefix.is_some() && prefix_ok {
        "shorten the impl's `prefix`, or set a shorter name with `name = \"..\"`"
    } else {
        "set another with `name = \"..\"`"
    };
    Err(Error::new_spanned(
        &tool.ident,
        format!("{message}; {hint}"),
    ))
}

fn check_doc_readable(tool: &ToolFn) -> syn::Result<()> {
    match &tool.unread_doc {
        None => Ok(()),
        Some(doc) => Err(Error::new_spanned(
            doc,
            "the macro cannot read this doc attribute (`include_str!` and other macros run after it), so the model would not see it; write the tool's description with `#[ai_tool(description = \"..\")]`",
        )),
    }
}

fn check_description(tool: &ToolFn) -> syn::Result<()> {
    // A doc attribute the macro cannot read is reported on its own.
    if !tool.description.trim().is_empty() || tool.unread_doc.is_some() {
        return Ok(());
    }
    match &tool.attr.description {
        Some(lit) => Err(Error::new_spanned(
            lit,
            "the description is empty; say what the tool does, for the model",
        )),
        None => Err(Error::new(
            tool.sig_span,
            "a tool needs a description for the model: add a doc comment (`/// ...`) or `description = \"...\"`",
        )),
    }
}

fn check_one_converter(tool: &ToolFn) -> syn::Result<()> {
    match tool.attr.convert.get(1) {
        None => Ok(()),
        Some(second) => Err(Error::new_spanned(
            second,
            "a tool has one converter; remove one `convert = ..`",
        )),
    }
}

fn check_flatten(tool: &ToolFn) -> syn::Result<()> {
    let flattened: Vec<_> = tool
        .params
        .iter()
        .filter(|p| p.role == Role::Flatten)
        .collect();
    let Some(first) = flattened.first() else {
        return Ok(());
    };
    let properties = tool
        .params
        .iter()
        .filter(|p| p.role == Role::Property)
        .count();
    let mut cx = Ctxt::new();
    if flattened.len() > 1 || properties > 0 {
        cx.error(&first.pat, "`#[arg(flatten)]` makes this parameter the whole argument object, so it must be the only argument (besides `&ToolContext`)");
    }
    if first.arg.default.is_some() || first.arg.description.is_some() {
        cx.error(&first.pat, "a flattened argument takes no `default` or `description`; put them on the fields of its struct");
    }
    cx.check()
}

/// One `&ToolContext` at most: a second is refused where it is written.
/// A tool with a `grammar` takes the text the model writes: one `String` parameter (or
/// `&str`) beside the context, with no default.
fn check_grammar_takes_one_string(tool: &ToolFn) -> syn::Result<()> {
    let Some(grammar) = &tool.attr.grammar else {
        return Ok(());
    };
    let taken: Vec<&Param> = (tool.params.iter())
        .filter(|param| param.role != Role::Context)
        .collect();
    let is_string = |ty: &Type| matches!(ty, Type::Path(p) if p.qself.is_none() && last_ident_is(&p.path, "String"));
    let message = "a tool with a `grammar` takes the text the model writes: one `String` parameter (`fn run(&self, query: String)`), beside `&ToolContext` if it needs one";
    match taken.as_slice() {
        [param] if param.role == Role::Property && is_string(&param.ty) => {
            match &param.arg.default {
                Some(default) => Err(Error::new_spanned(
                    default,
                    "the text of a tool with a `grammar` is always given: it takes no default",
                )),
                None => Ok(()),
            }
        }
        [param] => Err(Error::new_spanned(&param.written, message)),
        _ => Err(Error::new_spanned(&grammar.syntax, message)),
    }
}

fn check_one_context(tool: &ToolFn) -> syn::Result<()> {
    let mut contexts = tool.params.iter().filter(|p| p.role == Role::Context);
    match (contexts.next(), contexts.next()) {
        (Some(_), Some(second)) => Err(Error::new_spanned(
            &second.pat,
            "take `&ToolContext` once: the context is one per call",
        )),
        _ => Ok(()),
    }
}

fn check_timeout(timeout: &Timeout) -> syn::Result<()> {
    match &timeout.ms {
        Ok(_) => Ok(()),
        Err(message) => Err(Error::new_spanned(&timeout.lit, message)),
    }
}

fn check_no_crate_on_method(tool: &ToolFn, place: Place) -> syn::Result<()> {
    match (place, &tool.attr.krate) {
        (Place::Method { .. }, Some(krate)) => Err(Error::new_spanned(
            krate,
            "put `crate = ..` on `#[ai_tools(..)]`, not on a method",
        )),
        _ => Ok(()),
    }
}

fn check_converter_names_a_tool(converter: &Converter) -> syn::Result<()> {
    match &converter.attr.tool {
        Some(lit) => check_name(&lit.value()).map_err(|message| Error::new_spanned(lit, message)),
        None => Err(Error::new_spanned(
            &converter.ident,
            "name the tool this converts for: `#[ai_tool_converter(\"tool_name\")]`",
        )),
    }
}

fn check_converter_signature(converter: &Converter) -> syn::Result<()> {
    if converter.input.is_some() && converter.sig.inputs.len() <= 2 {
        return Ok(());
    }
    Err(Error::new_spanned(
        &converter.sig,
        "a converter is `fn(value: T) -> ToolOutput` or `fn(value: T, ctx: &ToolContext) -> ToolOutput`",
    ))
}

fn check_converter_not_generic(converter: &Converter) -> syn::Result<()> {
    if converter.sig.generics.params.is_empty() {
        return Ok(());
    }
    Err(Error::new_spanned(
        &converter.sig.generics,
        "a converter cannot be generic; name the type the tool returns",
    ))
}

/// The name rule every provider accepts: `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`. A copy of
/// `tool_core::name::PORTABLE`, held to it by the tests in `name_rule.rs`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !first_ok || !rest_ok || name.len() > 64 {
        return Err(format!(
            "tool name `{name}` is not accepted by every provider: use 1 to 64 of ASCII letters, digits, `_` and `-`, starting with a letter or `_`"
        ));
    }
    Ok(())
}

/// A prefix for the tools of an impl: the start of a name `prefix_name` under the same rule.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), String> {
    if check_name(prefix).is_err() || prefix.len() > 62 {
        return Err(format!(
            "prefix `{prefix}` cannot start a tool name every provider accepts: the tools are named `{prefix}_<name>`, so use 1 to 62 of ASCII letters, digits, `_` and `-`, starting with a letter or `_`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_portable_rule() {
        assert!(check_name("get_weather-2").is_ok());
        assert!(check_name("2fast").is_err());
        assert!(check_name("files.read").is_err());
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn prefixes_leave_room_for_a_name() {
        assert!(check_prefix("users").is_ok());
        assert!(check_prefix("users.v2").is_err());
        assert!(check_prefix(&"a".repeat(63)).is_err());
    }
}
