//! What of a URL may be shown in an error or a log: no credentials, no query, no fragment.

/// `text` with each `http://` or `https://` URL in it as [`shown_url`] shows it.
pub(crate) fn scrub_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let next = |rest: &str| {
        [rest.find("http://"), rest.find("https://")]
            .into_iter()
            .flatten()
            .min()
    };
    while let Some(at) = next(rest) {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | ',' | '>'))
            .map_or(rest.len(), |e| at + e);
        out.push_str(&shown_url(&rest[at..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `url` without what may be secret in it: a `user:password@` and the query (`?api_key=..`) and
/// fragment.
pub(crate) fn shown_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    match scheme {
        Some(scheme) => format!("{scheme}://{host}{path}"),
        None => format!("{host}{path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::shown_url;

    #[test]
    fn urls_in_an_error_are_shown_without_credentials_or_query() {
        assert_eq!(
            super::scrub_urls(
                "error sending request for url (http://127.0.0.1:9/mcp?key=s3cret), and https://u:p@h/x?q"
            ),
            "error sending request for url (http://127.0.0.1:9/mcp), and https://h/x"
        );
        assert_eq!(super::scrub_urls("no url"), "no url");
    }

    #[test]
    fn a_servers_url_is_shown_without_its_credentials_or_query() {
        assert_eq!(
            shown_url("https://user:pw@mcp.example.com:8443/mcp?api_key=s3cret#x"),
            "https://mcp.example.com:8443/mcp"
        );
        assert_eq!(
            shown_url("http://127.0.0.1:8765/mcp"),
            "http://127.0.0.1:8765/mcp"
        );
        assert_eq!(shown_url("http://[::1]:80?k=v"), "http://[::1]:80");
        assert_eq!(shown_url("no-scheme@host/p?q"), "host/p");
    }
}
