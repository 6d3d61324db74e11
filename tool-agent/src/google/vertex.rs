//! Vertex AI's endpoints: a project and location, the root of its URLs, and the access token
//! of the Google credentials that reach it; for Gemini and for Claude there.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

use super::GoogleCredentials;
use crate::model::ModelError;

/// Where a Vertex AI model is, and how requests to it are authorized.
#[derive(Clone, Debug)]
pub(crate) struct Vertex {
    credentials: GoogleCredentials,
    /// The credentials' quota project, read once.
    quota_project: Option<String>,
    pub project: Option<String>,
    /// A region such as `europe-west4`, a multi-region (`us`, `eu`), or `global`.
    pub location: Option<String>,
    /// The endpoint's root, when not the location's (a proxy, a private endpoint).
    pub root: Option<String>,
    /// What a request without a project or location is told to set.
    pub settings: &'static str,
}

impl Vertex {
    /// An endpoint authorized by `credentials`, at `project` (else the credentials') and
    /// `location`.
    pub fn new(
        credentials: GoogleCredentials,
        project: Option<String>,
        location: Option<String>,
        settings: &'static str,
    ) -> Self {
        Vertex {
            project: project.or_else(|| credentials.project()),
            quota_project: credentials.quota_project(),
            credentials,
            location,
            root: None,
            settings,
        }
    }

    /// Authorizes with `credentials`; their project serves when none was given.
    pub fn use_credentials(&mut self, credentials: GoogleCredentials) {
        if self.project.is_none() {
            self.project = credentials.project();
        }
        self.quota_project = credentials.quota_project();
        self.credentials = credentials;
    }

    /// `{root}/{version}/projects/{project}/locations/{location}`: the root is
    /// `aiplatform.googleapis.com` for `global`, `aiplatform.{us,eu}.rep.googleapis.com` for
    /// the multi-regions and `{location}-aiplatform.googleapis.com` for a region, as in
    /// Google's and Anthropic's SDKs.
    pub fn location_url(&self, version: &str) -> String {
        let location = self.location.as_deref().unwrap_or("-");
        let root = match &self.root {
            Some(root) => root.trim_end_matches('/').to_owned(),
            None if location == "global" => "https://aiplatform.googleapis.com".to_owned(),
            None if matches!(location, "us" | "eu") => {
                format!("https://aiplatform.{location}.rep.googleapis.com")
            }
            None => format!("https://{location}-aiplatform.googleapis.com"),
        };
        let project = self.project.as_deref().unwrap_or("-");
        format!("{root}/{version}/projects/{project}/locations/{location}")
    }

    /// The headers that authorize a request: the credentials' access token, and the quota
    /// project (`x-goog-user-project`) if they name one. Without a project or a location,
    /// nothing is sent.
    pub async fn authorize(&self, headers: &mut HeaderMap) -> Result<(), ModelError> {
        if self.project.is_none() || self.location.is_none() {
            let missing = match self.project {
                None => "a project",
                Some(_) => "a location",
            };
            return Err(ModelError::Setup(format!(
                "Vertex AI needs {missing}: {}",
                self.settings
            )));
        }
        let token = self.credentials.access_token().await?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            ModelError::Setup("the Google access token has characters a header cannot carry".into())
        })?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
        if let Some(project) = &self.quota_project {
            let value = HeaderValue::from_str(project).map_err(|_| {
                ModelError::Setup(format!(
                    "the quota project `{project}` is not a header value"
                ))
            })?;
            headers.insert(HeaderName::from_static("x-goog-user-project"), value);
        }
        Ok(())
    }
}

/// The variable `name` of the environment, unless unset or blank.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
