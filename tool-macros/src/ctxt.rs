//! Collects every user error, so that one compile shows them all.

use std::fmt::Display;

use quote::ToTokens;

#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn error(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// All errors combined, if there were any.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        first.extend(errors);
        Err(first)
    }
}
