//! The signed assertion a service account trades for an access token (RFC 7523): a JWT with
//! the account's email, the scope and the token endpoint, signed RS256 with its private key.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{SignatureEncoding, Signer};
use rsa::PrivateKey;
use serde_json::json;
use sha2::Sha256;

/// How long an assertion is good for, as Google's libraries make them: an hour.
const LIFETIME_SECONDS: u64 = 3600;

/// A service account's private key, read from its PEM text (PKCS #8, as Google's key files
/// hold it).
pub(crate) struct ServiceAccountKey {
    key: SigningKey<Sha256>,
    /// `private_key_id`, the JWT's `kid`.
    key_id: Option<String>,
}

impl ServiceAccountKey {
    /// The key in `pem` (`-----BEGIN PRIVATE KEY-----`); why not, without the key's text.
    pub(crate) fn from_pem(pem: &str, key_id: Option<String>) -> Result<Self, String> {
        let der = pem_body(pem, "PRIVATE KEY")
            .ok_or("its private_key is not a PEM `PRIVATE KEY` block")?;
        let key = PrivateKey::from_pkcs8_der(&der)
            .map_err(|e| format!("its private_key is not an RSA key in PKCS #8 ({e})"))?;
        Ok(ServiceAccountKey {
            key: SigningKey::new(key),
            key_id,
        })
    }

    /// The assertion that `email` asks `audience` (the token endpoint) for a token of
    /// `scope`, made at `now` (seconds since the epoch).
    pub(crate) fn assertion(
        &self,
        email: &str,
        scope: &str,
        audience: &str,
        now: u64,
    ) -> Result<String, String> {
        let mut header = json!({ "alg": "RS256", "typ": "JWT" });
        if let Some(key_id) = &self.key_id {
            header["kid"] = key_id.as_str().into();
        }
        let claims = json!({
            "iss": email,
            "scope": scope,
            "aud": audience,
            "iat": now,
            "exp": now + LIFETIME_SECONDS,
        });
        let signed = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .key
            .try_sign(signed.as_bytes())
            .map_err(|e| format!("its assertion could not be signed ({e})"))?
            .to_bytes();
        Ok(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// The bytes of the PEM block labelled `label` in `text`.
fn pem_body(text: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin)? + begin.len();
    let stop = start + text[start..].find(&end)?;
    let body: String = text[start..stop]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs1v15::VerifyingKey;
    use rsa::signature::Verifier;

    const KEY: &str = include_str!("../../tests/google/test-only-key.pem");

    #[test]
    fn an_assertion_is_a_jwt_signed_with_the_key() {
        let key = ServiceAccountKey::from_pem(KEY, Some("kid-1".into())).unwrap();
        let jwt = key
            .assertion("a@p.iam.gserviceaccount.com", "s", "http://t/token", 100)
            .unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |part: &str| -> serde_json::Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
        };
        assert_eq!(
            decode(parts[0]),
            json!({ "alg": "RS256", "typ": "JWT", "kid": "kid-1" })
        );
        assert_eq!(
            decode(parts[1]),
            json!({ "iss": "a@p.iam.gserviceaccount.com", "scope": "s", "aud": "http://t/token",
                    "iat": 100, "exp": 3700 })
        );
        let private = PrivateKey::from_pkcs8_der(&pem_body(KEY, "PRIVATE KEY").unwrap()).unwrap();
        let verifying = VerifyingKey::<Sha256>::new(private.to_public_key());
        let signature =
            rsa::pkcs1v15::Signature::try_from(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()[..])
                .unwrap();
        let signed = format!("{}.{}", parts[0], parts[1]);
        assert!(verifying.verify(signed.as_bytes(), &signature).is_ok());
        assert!(verifying.verify(b"something else", &signature).is_err());
    }

    #[test]
    fn a_key_that_is_not_pkcs8_pem_is_named_without_its_text() {
        for bad in [
            "",
            "-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----",
        ] {
            let error = ServiceAccountKey::from_pem(bad, None).err().unwrap();
            assert!(error.starts_with("its private_key is not"), "{error}");
            assert!(!error.contains("base64!"), "{error}");
        }
    }
}
