//! Connection strings without their passwords, for messages and logs.

use crate::conninfo::percent_decoded;

/// The connection string without its passwords, for error messages. tokio-postgres takes a
/// URL (`postgres://` or `postgresql://`, the password after the user or as a parameter) or
/// `key=value` pairs (`password=s3cret`, `password='a b'`); both are redacted.
pub fn redacted(connection: &str) -> String {
    if ["postgres://", "postgresql://"]
        .iter()
        .any(|scheme| connection.starts_with(scheme))
    {
        redacted_url_parameters(&redacted_user_password(connection))
    } else {
        redacted_key_values(connection)
    }
}

/// `postgres://ada:s3cret@host` -> `postgres://ada:***@host`. tokio-postgres ends the user and
/// password at the first `@`; this ends them at the last, so a password holding a `@` is
/// hidden whole, at worst with some of the host.
fn redacted_user_password(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let Some(at) = url.rfind('@').filter(|&at| at > after_scheme) else {
        return url.to_owned();
    };
    match url[after_scheme..at].find(':') {
        Some(colon) => format!("{}***{}", &url[..after_scheme + colon + 1], &url[at..]),
        None => url.to_owned(),
    }
}

/// `?user=ada&password=s3cret` -> `?user=ada&password=***`. As tokio-postgres reads them, a
/// parameter starts after a `?` or `&`, its key may be percent-encoded, and its value ends at
/// the next `&`. Every `?` is taken as a possible start, so that one in a user name cannot
/// hide the parameters that follow.
fn redacted_url_parameters(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(separator) = rest.find(['?', '&']) {
        out.push_str(&rest[..=separator]);
        rest = &rest[separator + 1..];
        let end = rest.find('&').unwrap_or(rest.len());
        if let Some((key, _)) = rest[..end].split_once('=') {
            if is_password_key(&percent_decoded(key)) {
                out.push_str(key);
                out.push_str("=***");
                rest = &rest[end..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `host=db password='a b'` -> `host=db password=***`: each value, quoted or not, is read as
/// tokio-postgres reads it (a backslash escapes the next character), so that one holding a
/// space, a quote or a `=` is hidden whole. An unterminated quote hides the rest.
fn redacted_key_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(equals) = rest.find('=') {
        let keyword = rest[..equals].split_whitespace().last().unwrap_or("");
        let after = &rest[equals + 1..];
        let value_start = equals + 1 + (after.len() - after.trim_start().len());
        let value_end = value_start + value_length(&rest[value_start..]);
        if is_password_key(keyword) {
            out.push_str(&rest[..value_start]);
            out.push_str("***");
        } else {
            out.push_str(&rest[..value_end]);
        }
        rest = &rest[value_end..];
    }
    out.push_str(rest);
    out
}

/// The length of the `key=value` value at the start of `text`: to its closing quote, or, not
/// quoted, to the first whitespace; a backslash escapes the next character either way.
fn value_length(text: &str) -> usize {
    let quoted = text.starts_with('\'');
    let mut chars = text.char_indices().skip(usize::from(quoted));
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if quoted => return i + 1,
            c if c.is_whitespace() && !quoted => return i,
            _ => {}
        }
    }
    text.len()
}

fn is_password_key(key: &str) -> bool {
    key.eq_ignore_ascii_case("password")
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_urls_password_never_reaches_an_error_message() {
        assert_eq!(
            redacted("postgres://ada:s3cret@127.0.0.1:5432/db"),
            "postgres://ada:***@127.0.0.1:5432/db"
        );
        assert_eq!(
            redacted("postgres://ada@127.0.0.1/db"),
            "postgres://ada@127.0.0.1/db"
        );
        assert_eq!(redacted("host=localhost"), "host=localhost");
    }

    #[test]
    fn a_password_holding_an_at_sign_is_hidden_whole() {
        assert_eq!(
            redacted("postgresql://ada:p@ss@127.0.0.1/db"),
            "postgresql://ada:***@127.0.0.1/db"
        );
    }

    #[test]
    fn a_password_given_as_a_url_parameter_never_reaches_an_error_message() {
        assert_eq!(
            redacted("postgres://db/x?user=ada&password=s3cret"),
            "postgres://db/x?user=ada&password=***"
        );
        assert_eq!(
            redacted("postgres://db/x?password=s3?cret&sslmode=disable"),
            "postgres://db/x?password=***&sslmode=disable"
        );
        assert_eq!(
            redacted("postgres://db/x?pass%77ord=s3cret"),
            "postgres://db/x?pass%77ord=***"
        );
        assert_eq!(
            redacted("postgres://a?b@db/x?password=s3cret"),
            "postgres://a?b@db/x?password=***"
        );
        assert_eq!(
            redacted("postgres://db/x?password=s3cret&application_name=a@b"),
            "postgres://db/x?password=***&application_name=a@b"
        );
    }

    #[test]
    fn a_password_given_as_a_key_value_pair_never_reaches_an_error_message() {
        assert_eq!(
            redacted("host=db user=ada password=s3cret dbname=x"),
            "host=db user=ada password=*** dbname=x"
        );
        assert_eq!(
            redacted("host=db password='a b' user=ada"),
            "host=db password=*** user=ada"
        );
        assert_eq!(
            redacted(r"password = 'it\'s secret' host=db"),
            "password = *** host=db"
        );
        assert_eq!(redacted(r"password=a\ b=c host=db"), "password=*** host=db");
        assert_eq!(
            redacted("options='-c x=password' password=s3cret"),
            "options='-c x=password' password=***"
        );
        assert_eq!(redacted("password='never closed"), "password=***");
    }
}
