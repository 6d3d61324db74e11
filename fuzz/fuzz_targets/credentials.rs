//! The readers of credential material the model clients keep: AWS's profile files, a
//! `credential_process` command line and what it printed, keys from a metadata answer, a
//! Google key file with its PEM key, and AWS's times. The first byte picks the reader, the
//! rest is the text. What must hold: no panic, and no error that quotes a secret: every
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
