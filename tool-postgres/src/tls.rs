//! TLS to PostgreSQL: rustls (with `ring`), the server's certificate verified against
//! the platform's roots and, when the connection string names one, the server's own CA
//! (`sslrootcert=PATH`, which tokio-postgres does not read itself).

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::conninfo::percent_decoded;
use crate::PgError;

/// The connection string without its `sslrootcert` parameter, and that parameter's value. A
/// URL's parameter (`?sslrootcert=/path/ca.crt`, percent-encoded or not) and a `key=value`
/// pair (`sslrootcert=/path/ca.crt`, a path without spaces) are both read. libpq's
/// `sslmode=verify-ca` and `verify-full`, which tokio-postgres does not know, become
/// `require`: the certificate is verified in every mode here.
pub(crate) fn take_root_cert(connection: &str) -> (String, Option<String>) {
    let (text, root) = without_root_cert(connection);
    let text = text
        .replace("sslmode=verify-full", "sslmode=require")
        .replace("sslmode=verify-ca", "sslmode=require");
    (text, root)
}

fn without_root_cert(connection: &str) -> (String, Option<String>) {
    let is_url = ["postgres://", "postgresql://"]
        .iter()
        .any(|scheme| connection.starts_with(scheme));
    if is_url {
        let Some(question) = connection.find('?') else {
            return (connection.to_owned(), None);
        };
        let (base, query) = connection.split_at(question);
        let mut root = None;
        let kept: Vec<&str> = query[1..]
            .split('&')
            .filter(|pair| match pair.split_once('=') {
                Some((key, value)) if percent_decoded(key) == "sslrootcert" => {
                    root = Some(percent_decoded(value));
                    false
                }
                _ => true,
            })
            .collect();
        let rebuilt = match kept.is_empty() {
            true => base.to_owned(),
            false => format!("{base}?{}", kept.join("&")),
        };
        (rebuilt, root)
    } else {
        let mut root = None;
        let kept: Vec<&str> = connection
            .split_whitespace()
            .filter(|word| match word.strip_prefix("sslrootcert=") {
                Some(path) => {
                    root = Some(path.trim_matches('\'').to_owned());
                    false
                }
                None => true,
            })
            .collect();
        (kept.join(" "), root)
    }
}

/// A TLS connector verifying the server against the platform's roots and the CA in the PEM
/// file `root`, if given.
pub(crate) fn connector(root: Option<&str>) -> Result<MakeRustlsConnect, PgError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut extra = Vec::new();
    if let Some(path) = root {
        let pem = std::fs::read(path)
            .map_err(|e| PgError::new(format!("reading sslrootcert `{path}`: {e}")))?;
        for certificate in CertificateDer::pem_slice_iter(&pem) {
            extra.push(certificate.map_err(|e| {
                PgError::new(format!("sslrootcert `{path}` is not PEM certificates: {e}"))
            })?);
        }
        if extra.is_empty() {
            return Err(PgError::new(format!(
                "sslrootcert `{path}` holds no certificate"
            )));
        }
    }
    let verifier =
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, Arc::clone(&provider))
            .map_err(|e| PgError::new(format!("TLS roots: {e}")))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| PgError::new(format!("TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // PostgreSQL 17 checks the protocol named, and needs it for `sslnegotiation=direct`.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::take_root_cert;

    #[test]
    fn the_root_certificate_is_taken_out_of_either_form() {
        let (url, root) = take_root_cert(
            "postgres://u@h:5/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.crt&x=1",
        );
        assert_eq!(url, "postgres://u@h:5/db?sslmode=require&x=1");
        assert_eq!(root.as_deref(), Some("/tmp/ca.crt"));
        let (url, root) = take_root_cert("postgres://u@h/db?sslrootcert=/ca.pem");
        assert_eq!(
            (url.as_str(), root.as_deref()),
            ("postgres://u@h/db", Some("/ca.pem"))
        );
        let (text, root) = take_root_cert("host=h sslmode=require sslrootcert=/ca.pem user=u");
        assert_eq!(text, "host=h sslmode=require user=u");
        assert_eq!(root.as_deref(), Some("/ca.pem"));
        let (url, root) = take_root_cert("postgres://u@h/db");
        assert_eq!((url.as_str(), root), ("postgres://u@h/db", None));
    }
}
