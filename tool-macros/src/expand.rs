//! Code generation. Only called on input that passed `valid`; reports no user errors.
//!
//! Each tool becomes, inside `const _: () = { .. };`: a private arguments struct deriving
//! `Deserialize` and `JsonSchema`, a schema function, an invoke function, and an
//! `inventory::submit!` of its registration. Everything is reached through
//! `<facade>::__private`, so users need no other dependency.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::Type;

use crate::ast::{is_option, Converter, Param, Receiver, Role, ToolFn, ToolImpl};

struct Target<'a> {
    /// The facade, `::ai_tool` unless `crate = ..` says otherwise.
    krate: &'a TokenStream,
    /// The impl's self type, for tools inside `#[ai_tools]`.
    self_ty: Option<&'a Type>,
}

/// The facade's path: `crate = path`, or `::ai_tool`.
fn krate(krate: Option<&syn::Path>) -> TokenStream {
    match krate {
        Some(path) => quote!(#path),
        None => quote!(::ai_tool),
    }
}

/// The tools of an `#[ai_tools]` impl.
pub(crate) fn tools(item: &ToolImpl) -> TokenStream {
    let krate = krate(item.attr.krate.as_ref());
    let target = Target {
        krate: &krate,
        self_ty: Some(&item.self_ty),
    };
    item.tools.iter().map(|t| tool(t, &target)).collect()
}

/// A free function's tool.
pub(crate) fn free_tool(tool_fn: &ToolFn) -> TokenStream {
    let krate = krate(tool_fn.attr.krate.as_ref());
    tool(
        tool_fn,
        &Target {
            krate: &krate,
            self_ty: None,
        },
    )
}

/// A parameter's name; `valid` refused parameters written as patterns.
fn param_ident(param: &Param) -> &syn::Ident {
    param
        .ident
        .as_ref()
        .expect("valid.rs refuses a tool parameter without a plain name")
}

fn tool(tool: &ToolFn, target: &Target) -> TokenStream {
    let krate = target.krate;
    let p = quote!(#krate::__private);
    let fix = |tokens: TokenStream| match target.self_ty {
        Some(self_ty) => replace_self(tokens, self_ty),
        None => tokens,
    };

    let args_ty = args_type(tool, &p, &fix);
    let args_struct = args_struct(tool, &p, &fix);
    let exact = exact_fn(tool, &p, &fix);
    let call = call_expr(tool, target.self_ty);
    let value = if tool.is_async {
        quote!(#call.await)
    } else {
        call
    };
    let convert = fix(conversion(tool, &p));
    let service_ty = target
        .self_ty
        .filter(|_| matches!(tool.receiver, Receiver::Ref));

    let invoke = if tool.is_async {
        let service = match service_ty {
            Some(ty) => {
                quote!(let __ai_service = #p::service_ref::<#ty>(__ai_service, &__ai_ctx)?;)
            }
            None => quote!(let _ = __ai_service;),
        };
        quote! {
            fn __ai_invoke<'__ai>(
                __ai_service: ::core::option::Option<#p::ServiceRef<'__ai>>,
                __ai_args: #p::Arguments<'_, '_>,
                __ai_ctx: #p::ToolContext<'__ai>,
                __ai_external: ::core::option::Option<#p::ExternalConverter>,
                __ai_guard: #p::Guard<'__ai>,
            ) -> ::core::result::Result<#p::BoxFuture<'__ai, ::core::result::Result<#p::ToolOutput, #p::ToolError>>, #p::ToolError> {
                #service
                let __ai_args: #args_ty = #p::parse_args(__ai_args, __ai_exact())?;
                ::core::result::Result::Ok(__ai_guard.boxed(async move {
                    let __ai_ctx = &__ai_ctx;
                    let __ai_value = #value;
                    #convert
                }))
            }
        }
    } else {
        let service = match service_ty {
            Some(ty) => quote!(let __ai_service = #p::service_ref::<#ty>(__ai_service, __ai_ctx)?;),
            None => quote!(let _ = __ai_service;),
        };
        quote! {
            fn __ai_invoke(
                __ai_service: ::core::option::Option<#p::ServiceRef<'_>>,
                __ai_args: #p::Arguments<'_, '_>,
                __ai_ctx: &#p::ToolContext<'_>,
                __ai_external: ::core::option::Option<#p::ExternalConverter>,
            ) -> ::core::result::Result<#p::ToolOutput, #p::ToolError> {
                #service
                let __ai_args: #args_ty = #p::parse_args(__ai_args, __ai_exact())?;
                let __ai_value = #value;
                #convert
            }
        }
    };

    let name = tool.name();
    let description = &tool.description;
    let service = match service_ty {
        Some(ty) => quote!(::core::option::Option::Some(#p::TypeRef::of::<#ty>())),
        None => quote!(::core::option::Option::None),
    };
    let output = fix(output_type(tool, &p));
    let has_converter = !tool.attr.convert.is_empty();
    let invoke_kind = if tool.is_async {
        quote!(Async)
    } else {
        quote!(Sync)
    };
    let metadata = metadata(tool, &p);
    let line = quote_spanned!(tool.sig_span=> ::core::line!());
    let assertions = parameter_assertions(tool, &p, &fix);
    let cfgs = &tool.cfgs;

    quote! {
        #(#cfgs)*
        const _: () = {
            #args_struct
            #exact
            #assertions
            fn __ai_schema() -> #p::SchemaResult {
                #p::canonical_for::<#args_ty>()
            }
            #invoke
            #output
            #p::inventory::submit! {
                #p::ToolRegistration {
                    name: #name,
                    description: #description,
                    location: #p::Location { module: ::core::module_path!(), file: ::core::file!(), line: #line },
                    schema: __ai_schema,
                    service: #service,
                    output: ::core::option::Option::Some(#p::TypeRef { id: __ai_output_id, name: __ai_output_name }),
                    output_schema: __ai_output_schema,
                    has_converter: #has_converter,
                    invoke: #p::Invoke::#invoke_kind(__ai_invoke),
                    metadata: #metadata,
                }
            }
        };
    }
}

fn args_type(
    tool: &ToolFn,
    _p: &TokenStream,
    fix: &dyn Fn(TokenStream) -> TokenStream,
) -> TokenStream {
    match tool.params.iter().find(|p| p.role == Role::Flatten) {
        Some(flat) => fix(flat.ty.to_token_stream()),
        None => quote!(__AiArgs),
    }
}

/// The struct the arguments object deserializes into; none when one parameter is flattened.
fn args_struct(
    tool: &ToolFn,
    p: &TokenStream,
    fix: &dyn Fn(TokenStream) -> TokenStream,
) -> TokenStream {
    if tool.params.iter().any(|param| param.role == Role::Flatten) {
        return TokenStream::new();
    }
    let mut defaults = Vec::new();
    let fields = tool
        .params
        .iter()
        .filter(|param| param.role == Role::Property)
        .map(|param| {
            let ident = param_ident(param);
            let ty = fix(param.ty.to_token_stream());
            let description = param
                .arg
                .description
                .as_ref()
                .map(|d| quote!(#[schemars(description = #d)]));
            let default = match &param.arg.default {
                Some(expr) => {
                    let function = format_ident!("__ai_default_{}", ident);
                    let mut expr = fix(expr.to_token_stream());
                    if param.owned_form {
                        // `default = "abc"` for `&str`, `default = &[1, 2]` for `&[u32]`.
                        expr = quote!(::core::convert::From::from(#expr));
                    }
                    defaults.push(quote! {
                        #[allow(non_snake_case)]
                        fn #function() -> #ty { #expr }
                    });
                    let path = function.to_string();
                    quote!(#[serde(default = #path)])
                }
                // schemars writes a field's `default` only for a type that is `Serialize`;
                // said here, an `Option` of any type is optional (the schema's rule makes a
                // nullable property without a default required).
                None if is_option(&param.ty) => {
                    quote!(#[serde(default)] #[schemars(extend("default" = null))])
                }
                None => TokenStream::new(),
            };
            // A text tool's one string is the `input` property (`TextInput::schema`).
            let rename = tool
                .attr
                .grammar
                .as_ref()
                .map(|_| quote!(#[serde(rename = "input")]));
            quote!(#description #default #rename #ident: #ty)
        });
    let serde_path = format!("{}::serde", p).replace(' ', "");
    let schemars_path = format!("{}::schemars", p).replace(' ', "");
    quote! {
        #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
        #[serde(crate = #serde_path, deny_unknown_fields)]
        #[schemars(crate = #schemars_path)]
        // The parameters' names, as the function spells them.
        #[allow(non_snake_case)]
        struct __AiArgs { #(#fields,)* }
        #(#defaults)*
    }
}

/// `__ai_exact()`: whether serde alone checks the arguments' schema, because the generated struct
/// holds nothing but types whose `Deserialize` checks all their schema says. Decided at compile
/// time by the autoref probe; a flattened user type is never taken as exact.
fn exact_fn(
    tool: &ToolFn,
    p: &TokenStream,
    fix: &dyn Fn(TokenStream) -> TokenStream,
) -> TokenStream {
    let flattened = tool.params.iter().any(|param| param.role == Role::Flatten);
    // A required property whose type is an `Option` under another name: serde would take it
    // left out, which its schema refuses, so the schema is checked.
    let hidden_options = tool
        .params
        .iter()
        .filter(|param| param.role == Role::Property)
        .filter(|param| param.arg.default.is_none() && !is_option(&param.ty))
        .map(|param| {
            let ty = fix(param.ty.to_token_stream());
            quote!(.unless_option((&#p::OptionProbe::<#ty>::new()).optionality()))
        });
    let probes = tool
        .params
        .iter()
        .filter(|param| param.role == Role::Property)
        .map(|param| {
            let ty = fix(param.ty.to_token_stream());
            quote!((&#p::Probe::<#ty>::new()).exact())
        });
    // A regular expression's `pattern` is checked against the schema, not by serde.
    let pattern = tool
        .attr
        .grammar
        .as_ref()
        .filter(|g| g.syntax == "regex")
        .map(|_| quote!(.and(#p::ValidatingStage)));
    // A flattened struct's own fields are not probed.
    let flattened = flattened.then(|| quote!(.and(#p::ValidatingStage)));
    quote! {
        #[inline(always)]
        fn __ai_exact() -> impl #p::Stage {
            #[allow(unused_imports)]
            use #p::{IsExact as _, IsOption as _, NotExact as _, NotOption as _, Stage as _};
            (&#p::Probe::<()>::new()).exact() #flattened #(.and(#probes))* #(#hidden_options)* #pattern
        }
    }
}

/// Asks the compiler early, at each parameter's type, for what a parameter needs, so that a
/// missing `JsonSchema` or `Deserialize` is reported there with a fix.
fn parameter_assertions(
    tool: &ToolFn,
    p: &TokenStream,
    fix: &dyn Fn(TokenStream) -> TokenStream,
) -> TokenStream {
    let checks = tool
        .params
        .iter()
        .filter(|param| param.role != Role::Context)
        .map(|param| {
            let ty = fix(param.ty.to_token_stream());
            let span = syn::spanned::Spanned::span(&param.ty);
            quote_spanned!(span=> #p::assert_parameter::<#ty>();)
        });
    quote!(const _: fn() = || { #(#checks)* };)
}

fn call_expr(tool: &ToolFn, self_ty: Option<&Type>) -> TokenStream {
    let ident = &tool.ident;
    let args = tool.params.iter().map(|param| {
        let value = match param.role {
            Role::Context => return quote!(__ai_ctx),
            Role::Flatten => quote!(__ai_args),
            Role::Property => {
                let ident = param_ident(param);
                quote!(__ai_args.#ident)
            }
        };
        if param.by_ref {
            quote!(&#value)
        } else {
            value
        }
    });
    match (&tool.receiver, self_ty) {
        (Receiver::Ref, _) => quote!(__ai_service.#ident(#(#args),*)),
        (_, Some(ty)) => quote!(<#ty>::#ident(#(#args),*)),
        (_, None) => quote!(#ident(#(#args),*)),
    }
}

/// The expression that turns `__ai_value`, what the tool returned, into
/// `Result<ToolOutput, ToolError>`. What kind of value it is is asked of the compiler with the
/// autoref probes of `__private` (see `tool-runtime/src/returned.rs`), so a `Result` is found
/// under any alias. The calls that need something of the return type are spanned on it, so that
/// a missing `Serialize` or `Display` is reported there.
fn conversion(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let span = syn::spanned::Spanned::span(&tool.output.ty);
    let fail = {
        let p = respan(p.clone(), span);
        quote_spanned!(span=> (&#p::Failure::of(&__ai_error)).fail()(__ai_error, __ai_ctx))
    };
    let apply = match tool.attr.convert.first() {
        Some(path) => {
            // The value's type is given first, by its probe, so a converter taking another type
            // is reported by the `Converter` trait's message, at the converter's path.
            let span = syn::spanned::Spanned::span(path);
            let p = respan(p.clone(), span);
            let call = quote_spanned!(span=>
                #p::convert_with((&__ai_produced).value(), #path, __ai_value, __ai_ctx));
            quote!({ let _ = __ai_external; #call })
        }
        None => {
            let default = quote_spanned!(span=> (&__ai_produced).default_output());
            quote!(#p::finish(__ai_value, __ai_ctx, __ai_external, #default))
        }
    };
    quote! {{
        #[allow(unused_imports)]
        use #p::{FailsAsError as _, FailsAsText as _, ProducesJson as _, ProducesKnown as _, ReturnsResult as _, ReturnsValue as _};
        let __ai_returned = #p::Returned::of(&__ai_value);
        match (&__ai_returned).split(__ai_value) {
            ::core::result::Result::Ok(__ai_value) => {
                let __ai_produced = #p::Produced::of(&__ai_value);
                let __ai_value = (&__ai_produced).normalize(__ai_value);
                #apply
            }
            ::core::result::Result::Err(__ai_error) => ::core::result::Result::Err(#fail),
        }
    }}
}

/// `__ai_output_id` and `__ai_output_name`: the type a converter receives (the `Ok` value of a
/// `Result`, `String` for `&str`), found from the return type alone, for the check at `build()`;
/// `__ai_output_schema`: the value's output schema, when it has one (see `returned.rs`).
fn output_type(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    // The method's own lifetimes are not declared where the type is named: they are erased.
    let declared: Vec<&syn::Ident> = (tool.generics.lifetimes())
        .map(|l| &l.lifetime.ident)
        .collect();
    let mut ty = tool.output.ty.clone();
    erase_lifetimes(&mut ty, &declared);
    quote! {
        fn __ai_output() -> #p::TypeRef {
            #[allow(unused_imports)]
            use #p::{FailsAsError as _, FailsAsText as _, ProducesJson as _, ProducesKnown as _, ReturnsResult as _, ReturnsValue as _};
            let __ai_returned = #p::Returned::<#ty>::new();
            let __ai_produced = (&__ai_returned).produced();
            #p::type_ref((&__ai_produced).value())
        }
        fn __ai_output_id() -> ::core::any::TypeId {
            (__ai_output().id)()
        }
        fn __ai_output_name() -> &'static str {
            (__ai_output().name)()
        }
        fn __ai_output_schema() -> ::core::option::Option<#p::serde_json::Value> {
            #[allow(unused_imports)]
            use #p::{HasOutputSchema as _, NoOutputSchema as _, ProducesJson as _, ProducesKnown as _, ReturnsResult as _, ReturnsValue as _};
            let __ai_returned = #p::Returned::<#ty>::new();
            let __ai_produced = (&__ai_returned).produced();
            let __ai_schema = (&__ai_produced).schema();
            ((&__ai_schema).output_schema())()
        }
    }
}

/// `ty` with the lifetimes named in `declared` made `'_`, for the compiler to infer.
fn erase_lifetimes(ty: &mut Type, declared: &[&syn::Ident]) {
    let erase = |lifetime: &mut syn::Lifetime| {
        if declared.contains(&&lifetime.ident) {
            *lifetime = syn::Lifetime::new("'_", lifetime.span());
        }
    };
    match ty {
        Type::Reference(r) => {
            if let Some(lifetime) = &mut r.lifetime {
                erase(lifetime);
            }
            erase_lifetimes(&mut r.elem, declared);
        }
        Type::Paren(p) => erase_lifetimes(&mut p.elem, declared),
        Type::Group(g) => erase_lifetimes(&mut g.elem, declared),
        Type::Slice(s) => erase_lifetimes(&mut s.elem, declared),
        Type::Array(a) => erase_lifetimes(&mut a.elem, declared),
        Type::Tuple(t) => t
            .elems
            .iter_mut()
            .for_each(|e| erase_lifetimes(e, declared)),
        Type::Path(p) => {
            for segment in &mut p.path.segments {
                let syn::PathArguments::AngleBracketed(args) = &mut segment.arguments else {
                    continue;
                };
                for arg in &mut args.args {
                    match arg {
                        syn::GenericArgument::Type(inner) => erase_lifetimes(inner, declared),
                        syn::GenericArgument::Lifetime(lifetime) => erase(lifetime),
                        _ => {}
                    }
                }
            }
        }
        _ => {}
    }
}

fn metadata(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let a = &tool.attr;
    let opt_str = |v: &Option<String>| match v {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let opt_bool = |v: Option<bool>| match v {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    };
    let title = opt_str(&a.title);
    let category = opt_str(&a.category);
    let (purposes, keywords, examples) = (&a.purposes, &a.keywords, &a.examples);
    let (selectable, requires_approval) = (a.selectable, a.requires_approval);
    let defer_loading = a.defer_loading;
    let icon = opt_str(&a.icon);
    let text_input = match &a.grammar {
        None => quote!(::core::option::Option::None),
        Some(grammar) => {
            let definition = &grammar.definition;
            match grammar.syntax.to_string().as_str() {
                "lark" => {
                    quote!(::core::option::Option::Some(#p::StaticTextInput::Lark(#definition)))
                }
                "regex" => {
                    quote!(::core::option::Option::Some(#p::StaticTextInput::Regex(#definition)))
                }
                _ => quote!(::core::option::Option::Some(#p::StaticTextInput::Free)),
            }
        }
    };
    let namespace = match &tool.namespace {
        Some((name, description)) => {
            quote!(::core::option::Option::Some((#name, #description)))
        }
        None => quote!(::core::option::Option::None),
    };
    let callers = match a.callers.as_ref().map(syn::LitStr::value).as_deref() {
        Some("code") => quote!(#p::Callers::Code),
        Some("model_and_code") => quote!(#p::Callers::ModelAndCode),
        _ => quote!(#p::Callers::Model),
    };
    let task = match a.task.as_ref().map(syn::LitStr::value).as_deref() {
        Some("optional") => quote!(#p::TaskSupport::Optional),
        Some("required") => quote!(#p::TaskSupport::Required),
        _ => quote!(#p::TaskSupport::Forbidden),
    };
    let (read_only, destructive) = (opt_bool(a.read_only), opt_bool(a.destructive));
    let (idempotent, open_world) = (opt_bool(a.idempotent), opt_bool(a.open_world));
    let strict = opt_bool(a.strict);
    let timeout = match tool.timeout_ms() {
        Some(ms) => quote!(::core::option::Option::Some(#ms)),
        None => quote!(::core::option::Option::None),
    };
    let max_result_bytes = match a.max_result_bytes {
        Some(bytes) => quote!(::core::option::Option::Some(#bytes)),
        None => quote!(::core::option::Option::None),
    };
    let max_retries = match a.max_retries {
        Some(retries) => quote!(::core::option::Option::Some(#retries)),
        None => quote!(::core::option::Option::None),
    };
    quote! {
        #p::StaticMetadata {
            title: #title,
            category: #category,
            purposes: &[#(#purposes),*],
            selectable: #selectable,
            keywords: &[#(#keywords),*],
            examples: &[#(#examples),*],
            hints: #p::SafetyHints {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            },
            timeout_ms: #timeout,
            max_result_bytes: #max_result_bytes,
            max_retries: #max_retries,
            requires_approval: #requires_approval,
            defer_loading: #defer_loading,
            callers: #callers,
            task: #task,
            text_input: #text_input,
            namespace: #namespace,
            icon: #icon,
            strict: #strict,
        }
    }
}

/// A converter's registration. `valid` made sure it names a tool and takes a value.
pub(crate) fn converter(converter: &Converter) -> TokenStream {
    let krate = krate(converter.attr.krate.as_ref());
    let p = quote!(#krate::__private);
    let ident = &converter.ident;
    let tool = converter
        .attr
        .tool
        .as_ref()
        .expect("valid.rs refuses a converter that names no tool")
        .value();
    let input = converter
        .input
        .as_ref()
        .expect("valid.rs refuses a converter without a parameter");
    let line = quote_spanned!(ident.span()=> ::core::line!());
    quote! {
        const _: () = {
            fn __ai_convert(
                __ai_value: ::std::boxed::Box<dyn ::core::any::Any>,
                __ai_ctx: &#p::ToolContext<'_>,
            ) -> ::core::result::Result<#p::ToolOutput, #p::ToolError> {
                let __ai_value = #p::unbox::<#input>(__ai_value, __ai_ctx)?;
                #p::convert_with(#p::Produced::<#input>::new(), #ident, __ai_value, __ai_ctx)
            }
            #p::inventory::submit! {
                #p::ConverterRegistration {
                    tool: #tool,
                    input: #p::TypeRef::of::<#input>(),
                    convert: __ai_convert,
                    location: #p::Location { module: ::core::module_path!(), file: ::core::file!(), line: #line },
                }
            }
        };
    }
}

/// Replaces `Self` with the impl's type, for code generated outside the impl block.
/// `Self::x` becomes `<Type>::x`.
fn replace_self(tokens: TokenStream, self_ty: &Type) -> TokenStream {
    let mut out = TokenStream::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            TokenTree::Ident(ident) if ident == "Self" => {
                let path_follows =
                    matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                let ty = respan(self_ty.to_token_stream(), ident.span());
                if path_follows {
                    out.extend(quote!(<#ty>));
                } else {
                    out.extend(ty);
                }
            }
            TokenTree::Group(group) => {
                let mut new = Group::new(group.delimiter(), replace_self(group.stream(), self_ty));
                new.set_span(group.span());
                out.extend([TokenTree::Group(new)]);
            }
            other => out.extend([other]),
        }
    }
    out
}

fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}
