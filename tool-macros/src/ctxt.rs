//! Collects every user error, so that one compile shows them all (serde_derive's
//! `internals/ctxt.rs`).

use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// The errors found so far. [`Ctxt::check`] must be called before it is dropped: a `Ctxt`
/// dropped unchecked panics, so that an error collected cannot be lost on some path.
pub(crate) struct Ctxt {
    /// `None` once checked.
    errors: Option<Vec<syn::Error>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: Some(Vec::new()),
        }
    }

    /// An error at `tokens`.
    pub(crate) fn error(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// An error already made, such as a parse error or the result of a check.
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors
            .as_mut()
            .expect("a Ctxt is not used after check()")
            .push(error);
    }

    /// Keeps the error of a check, if it failed.
    pub(crate) fn record(&mut self, result: syn::Result<()>) {
        if let Err(error) = result {
            self.push(error);
        }
    }

    /// All errors combined, if there were any. Consumes the context, which disarms its drop check.
    pub(crate) fn check(mut self) -> syn::Result<()> {
        let mut errors = self.errors.take().unwrap_or_default().into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        first.extend(errors);
        Err(first)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // Not while panicking: a second panic would abort and hide the first.
        if self.errors.is_some() && !thread::panicking() {
            panic!("a Ctxt was dropped without check(): its errors would be lost");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    #[test]
    fn check_combines_every_error() {
        let mut cx = Ctxt::new();
        cx.push(syn::Error::new(Span::call_site(), "first"));
        cx.record(Err(syn::Error::new(Span::call_site(), "second")));
        cx.record(Ok(()));
        let messages: Vec<String> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    fn check_without_errors_is_ok() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "dropped without check()")]
    fn dropping_an_unchecked_context_panics() {
        let mut cx = Ctxt::new();
        cx.push(syn::Error::new(Span::call_site(), "lost"));
        drop(cx);
    }
}
