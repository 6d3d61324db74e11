//! Vertex AI's endpoints: a project and location, the root of its URLs, and the access token
//! of the Google credentials that reach it; for Gemini and for Claude there.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

use super::GoogleCredentials;
use tool_model::ModelError;

/// Where a Vertex AI model is, and how requests to it are authorized.
#[derive(Clone, Debug)]
pub struct Vertex {
    credentials: GoogleCredentials,
    /// The credentials' quota project and project, read once.
    quota_project: Option<String>,
    credentials_project: Option<String>,
    /// The project given (by a variable or a setter), which wins over the credentials'.
    pub chosen_project: Option<String>,
    /// A region such as `europe-west4`, a multi-region (`us`, `eu`), or `global`.
    pub location: Option<String>,
    /// The endpoint's base URL given, when not the location's (a proxy, a private endpoint).
    base: Option<String>,
    /// What a request without a project or location is told to set.
    pub settings: &'static str,
    /// Vertex AI's express mode: an API key, no project or location.
    express: bool,
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
            chosen_project: project,
            credentials_project: credentials.project(),
            quota_project: credentials.quota_project(),
            credentials,
            location,
            base: None,
            settings,
            express: false,
        }
    }

    /// Authorizes with `credentials`; their project serves when none was given.
    pub fn use_credentials(&mut self, credentials: GoogleCredentials) {
        self.credentials_project = credentials.project();
        self.quota_project = credentials.quota_project();
        self.credentials = credentials;
    }

    /// The endpoint's base URL given, if any.
    pub fn given_base(&self) -> Option<&str> {
        self.base.as_deref()
    }

    /// Sets the endpoint's base URL (a proxy, a private endpoint).
    pub fn set_base(&mut self, base: Option<String>) {
        self.base = base;
    }

    /// Whether this is Vertex AI's express mode (an API key, no project or location).
    pub fn is_express(&self) -> bool {
        self.express
    }

    /// Uses Vertex AI's express mode.
    pub fn use_express(&mut self) {
        self.express = true;
    }

    /// The project given, else the credentials'.
    pub fn project(&self) -> Option<&str> {
        self.chosen_project
            .as_deref()
            .or(self.credentials_project.as_deref())
    }

    /// The root of the endpoint's URLs: the one given, else the location's.
    pub fn root(&self) -> String {
        let location = self.location.as_deref().unwrap_or("-");
        match &self.base {
            Some(base) => base.trim_end_matches('/').to_owned(),
            None if location == "global" => "https://aiplatform.googleapis.com".to_owned(),
            None if matches!(location, "us" | "eu") => {
                format!("https://aiplatform.{location}.rep.googleapis.com")
            }
            None => format!("https://{location}-aiplatform.googleapis.com"),
        }
    }

    /// `{root}/{version}/projects/{project}/locations/{location}`: the root is
    /// `aiplatform.googleapis.com` for `global`, `aiplatform.{us,eu}.rep.googleapis.com` for
    /// the multi-regions and `{location}-aiplatform.googleapis.com` for a region, as in
    /// Google's and Anthropic's SDKs.
    pub fn location_url(&self, version: &str) -> String {
        format!("{}/{version}/{}", self.root(), self.project_location())
    }

    /// `projects/{project}/locations/{location}` (`-` for what is not known, refused when a
    /// request is authorized).
    pub fn project_location(&self) -> String {
        let location = self.location.as_deref().unwrap_or("-");
        let project = self.project().unwrap_or("-");
        format!("projects/{project}/locations/{location}")
    }

    /// The headers that authorize a request: the credentials' access token, and the quota
    /// project (`x-goog-user-project`) if they name one. Without a project or a location,
    /// nothing is sent.
    pub async fn authorize(&self, headers: &mut HeaderMap) -> Result<(), ModelError> {
        let (Some(project), Some(location)) = (self.project(), &self.location) else {
            let missing = match self.project() {
                None => "a project",
                Some(_) => "a location",
            };
            return Err(ModelError::Setup(format!(
                "Vertex AI needs {missing}: {}",
                self.settings
            )));
        };
        // Both go into the URL, the location into its host: nothing that could move it.
        let named = |text: &str, extra: &[char]| {
            !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || extra.contains(&c))
        };
        if !named(location, &[]) {
            return Err(ModelError::Setup(format!(
                "the Vertex AI location `{location}` is not a location name (letters, digits, -)"
            )));
        }
        if !named(project, &['.', ':', '_']) {
            return Err(ModelError::Setup(format!(
                "the Vertex AI project `{project}` is not a project id"
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

/// An API a model on Vertex AI may speak: [`Anthropic`](crate::Anthropic) (Claude there) and
/// [`Gemini`](crate::Gemini). Implemented by this crate alone.
pub trait OnVertex: sealed::OnVertex {}

impl<A: sealed::OnVertex> OnVertex for A {}

pub(crate) mod sealed {
    use crate::model::HttpModel;

    /// What the Vertex AI settings need of an API.
    pub trait OnVertex: crate::model::sealed::Api {
        /// The client's Vertex AI endpoint, for a model made for Vertex AI.
        fn vertex(model: &mut HttpModel<Self>) -> Option<&mut super::Vertex>;

        /// Sets the client's URLs from its Vertex AI settings.
        fn aim_at_vertex(model: &mut HttpModel<Self>);
    }
}

/// The Vertex AI settings, for a client made with `vertex_ai`; on another they change nothing.
impl<A: sealed::OnVertex> crate::model::HttpModel<A> {
    fn change_vertex(mut self, change: impl FnOnce(&mut Vertex)) -> Self {
        if let Some(vertex) = A::vertex(&mut self) {
            change(vertex);
            A::aim_at_vertex(&mut self);
        }
        self
    }

    /// The Vertex AI project (for a model made with `vertex_ai`; others are unchanged).
    pub fn with_vertex_project(self, project: impl Into<String>) -> Self {
        let project = project.into();
        self.change_vertex(|vertex| vertex.chosen_project = Some(project))
    }

    /// The Vertex AI location: a region such as `europe-west4`, a multi-region (`us`,
    /// `eu`) or `global` (for a model made with `vertex_ai`; others are unchanged).
    pub fn with_vertex_location(self, location: impl Into<String>) -> Self {
        let location = location.into();
        self.change_vertex(|vertex| vertex.location = Some(location))
    }

    /// The Google credentials that authorize Vertex AI requests, instead of the
    /// environment's; their project serves when none was chosen (for a model made with
    /// `vertex_ai`; others are unchanged).
    pub fn with_google_credentials(self, credentials: GoogleCredentials) -> Self {
        self.change_vertex(|vertex| vertex.use_credentials(credentials))
    }
}
