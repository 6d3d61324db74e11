//! An import's OAuth tokens kept in a file between runs (rmcp's `CredentialStore`), so that a
//! command run again uses the token it was given rather than asking the user again.
//!
//! The file is the user's alone: written with mode 0600 (to a new file of a random name, then
//! renamed, so a reader never sees half of it and nothing planted there is written through), in
//! a directory made 0700 when it is created; a file that others may read, or a directory that
//! others may write to, is refused rather than used. It holds the client id, the tokens and the scopes granted; rmcp refreshes
//! an expired token and saves the new one here.

use std::io::Write;
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

/// The most bytes a token file may hold: a file larger than this is not one we wrote.
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// OAuth tokens kept in a file ([`OAuthOptions::with_token_file`](crate::OAuthOptions::with_token_file)).
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// Tokens kept at `path` (created when the first token comes, with its directory).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TokenFile { path: path.into() }
    }

    /// The file in `dir` for the server at `url`: named by the SHA-256 of the URL, so that
    /// each server has a file of its own and no server's token is sent to another.
    pub fn for_server(dir: impl AsRef<Path>, url: &str) -> Self {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(url.as_bytes());
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        TokenFile::new(dir.as_ref().join(format!("{name}.json")))
    }

    /// Where the tokens are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, what: &str, e: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!(
            "the token file {}: {what}: {e}",
            self.path.display()
        ))
    }

    /// The file's directory, refused when others may write to it (they could replace the
    /// file).
    fn checked_dir(&self) -> Result<PathBuf, AuthError> {
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        #[cfg(unix)]
        if let Ok(metadata) = std::fs::metadata(&dir) {
            use std::os::unix::fs::PermissionsExt;
            let mode = metadata.permissions().mode() & 0o777;
            if mode & 0o022 != 0 {
                return Err(self.error(
                    "not used",
                    format!(
                        "others may write to its directory (mode {mode:o}); make it 700 \
                         or keep the tokens elsewhere"
                    ),
                ));
            }
        }
        Ok(dir)
    }

    fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.checked_dir()?;
        let metadata = match std::fs::metadata(&self.path) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.error("reading it", e)),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = metadata.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(self.error(
                    "not used",
                    format!("others may read it (mode {mode:o}); make it 600 or delete it"),
                ));
            }
        }
        if metadata.len() > MAX_TOKEN_FILE_BYTES {
            return Err(self.error(
                "not used",
                format!("larger than {MAX_TOKEN_FILE_BYTES} bytes (MAX_TOKEN_FILE_BYTES)"),
            ));
        }
        let text = std::fs::read(&self.path).map_err(|e| self.error("reading it", e))?;
        // The error names the place, never the text: it holds tokens.
        let stored = serde_json::from_slice(&text).map_err(|e| {
            self.error(
                "not a token file of ai-tool",
                format_args!("line {}, column {}", e.line(), e.column()),
            )
        })?;
        Ok(Some(stored))
    }

    fn write(&self, credentials: &StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_vec(credentials).map_err(|e| self.error("writing it", e))?;
        let dir = self.checked_dir()?;
        let mut create_dir = std::fs::DirBuilder::new();
        create_dir.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut create_dir, 0o700);
        create_dir
            .create(&dir)
            .map_err(|e| self.error("creating its directory", e))?;
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).map_err(|e| self.error("writing it", e))?;
        let suffix: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let temporary = dir.join(format!(".{name}.{suffix}.tmp"));
        // A new file only: a link or file planted at that name is never written through.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&temporary).and_then(|mut file| {
            file.write_all(&text)?;
            file.sync_all()
        });
        if let Err(e) = written.and_then(|()| std::fs::rename(&temporary, &self.path)) {
            let _ = std::fs::remove_file(&temporary);
            return Err(self.error("writing it", e));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let file = self.clone();
        tokio::task::spawn_blocking(move || file.read())
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let file = self.clone();
        tokio::task::spawn_blocking(move || file.write(&credentials))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.error("deleting it", e)),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn credentials() -> StoredCredentials {
        let token: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(
            serde_json::json!({ "access_token": "secret-token", "token_type": "Bearer" }),
        )
        .unwrap();
        StoredCredentials::new("client-7".into(), Some(token), vec!["read".into()], Some(1))
    }

    #[tokio::test]
    async fn tokens_are_kept_for_the_user_alone_and_a_readable_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("ai-tool-token-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = TokenFile::new(dir.join("oauth").join("server.json"));
        assert!(file.load().await.unwrap().is_none());
        file.save(credentials()).await.unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(&dir.join("oauth")), 0o700);
        let back = file.load().await.unwrap().unwrap();
        assert_eq!(back.client_id, "client-7");
        assert_eq!(back.granted_scopes, ["read"]);
        // Made readable by others: refused, and the error shows no token.
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = file.load().await.unwrap_err().to_string();
        assert!(error.contains("mode 644"), "{error}");
        // Not JSON: the error names the place, not the text.
        std::fs::write(file.path(), "secret-token").unwrap();
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        let error = file.load().await.unwrap_err().to_string();
        assert!(
            error.contains("line 1") && !error.contains("secret-token"),
            "{error}"
        );
        file.clear().await.unwrap();
        assert!(file.load().await.unwrap().is_none());
        // A directory others may write to: refused.
        let oauth = dir.join("oauth");
        std::fs::set_permissions(&oauth, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = file.save(credentials()).await.unwrap_err().to_string();
        assert!(error.contains("its directory (mode 777)"), "{error}");
        std::fs::set_permissions(&oauth, std::fs::Permissions::from_mode(0o700)).unwrap();
        // One file per server.
        let a = TokenFile::for_server(&dir, "https://a.example/mcp");
        let b = TokenFile::for_server(&dir, "https://b.example/mcp");
        assert_ne!(a.path(), b.path());
        assert_eq!(
            a.path(),
            TokenFile::for_server(&dir, "https://a.example/mcp").path()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
