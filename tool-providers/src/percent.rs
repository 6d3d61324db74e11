//! Percent-encoding as AWS and Google want it in paths and query strings.

/// Percent-encodes every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) and, when
/// `keep_slash`, `/`: a URI path label, or (over an encoded path) SigV4's canonical URI.
pub(crate) fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        let unreserved = byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~');
        if unreserved || (keep_slash && byte == b'/') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
