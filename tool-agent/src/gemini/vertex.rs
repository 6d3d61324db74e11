//! Gemini on Vertex AI: the endpoint of a project and location, and the access token of the
//! Google credentials that reach it.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

use crate::google::GoogleCredentials;
use crate::model::ModelError;

/// The API version Google's Gen AI SDK speaks to Vertex AI.
const API_VERSION: &str = "v1beta1";

/// Where a Vertex AI model is, and how requests to it are authorized.
#[derive(Clone, Debug)]
pub(super) struct Vertex {
    credentials: GoogleCredentials,
    /// The credentials' quota project, read once.
    quota_project: Option<String>,
    pub project: Option<String>,
    pub location: String,
    /// The endpoint's root, when not the location's (a proxy, a private endpoint).
    pub root: Option<String>,
}

impl Vertex {
    /// The settings of the environment: `GOOGLE_CLOUD_PROJECT` (else the credentials'
    /// project), `GOOGLE_CLOUD_LOCATION` (else `global`), and its Application Default
    /// Credentials.
    pub fn from_env() -> Self {
        let credentials = GoogleCredentials::from_env();
        Vertex {
            project: credentials.project(),
            quota_project: credentials.quota_project(),
            location: std::env::var("GOOGLE_CLOUD_LOCATION")
                .ok()
                .filter(|l| !l.trim().is_empty())
                .unwrap_or_else(|| "global".to_owned()),
            credentials,
            root: None,
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

    /// `{root}/v1beta1/projects/{project}/locations/{location}/publishers/google`, the base
    /// under which the model's methods are; the root is `aiplatform.googleapis.com` for
    /// `global`, `aiplatform.{us,eu}.rep.googleapis.com` for the multi-regions and
    /// `{location}-aiplatform.googleapis.com` for a region, as in Google's Gen AI SDK.
    pub fn base_url(&self) -> String {
        let location = &self.location;
        let root = match &self.root {
            Some(root) => root.trim_end_matches('/').to_owned(),
            None if location == "global" => "https://aiplatform.googleapis.com".to_owned(),
            None if matches!(location.as_str(), "us" | "eu") => {
                format!("https://aiplatform.{location}.rep.googleapis.com")
            }
            None => format!("https://{location}-aiplatform.googleapis.com"),
        };
        let project = self.project.as_deref().unwrap_or("-");
        format!("{root}/{API_VERSION}/projects/{project}/locations/{location}/publishers/google")
    }

    /// The headers that authorize a request: the credentials' access token, and the quota
    /// project (`x-goog-user-project`) if they name one. Without a project, nothing is sent.
    pub async fn authorize(&self, headers: &mut HeaderMap) -> Result<(), ModelError> {
        if self.project.is_none() {
            return Err(ModelError::Setup(
                "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT, or call \
                 GeminiModel::with_vertex_project"
                    .to_owned(),
            ));
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
