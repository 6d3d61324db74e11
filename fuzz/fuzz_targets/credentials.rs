//! The readers of credential material the model clients keep: a Google key file with its PEM
//! key (AWS's material is read by `aws-config`). The first byte picks the reader, the rest is
//! the text. What must hold: no panic, and no error that quotes a secret: every
//! `secret-…` word in the text stays out of the error.
#![no_main]

use ai_tool::agent::fuzzing::{read_credentials, CredentialText};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    let kind = CredentialText::ALL[usize::from(pick) % CredentialText::ALL.len()];
    if let Err(error) = read_credentials(kind, &text) {
        // Values the text marks as secret are never quoted back.
        for word in text.split(|c: char| !c.is_ascii_alphanumeric() && c != '-') {
            if word.len() > 12 && word.starts_with("secret-") {
                assert!(!error.contains(word), "{kind:?} quoted {word}: {error}");
            }
        }
    }
});
