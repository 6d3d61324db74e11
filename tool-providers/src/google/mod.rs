//! Google Cloud's machinery, for Gemini and Claude on Vertex AI: where Application Default
//! Credentials are (a credentials file, gcloud's, the metadata server), the credentials
//! Google's own crate (`google-cloud-auth`) makes of them, and Vertex AI's endpoints.

mod credentials;
mod gcloud;
mod sources;

#[cfg(feature = "fuzzing")]
pub(crate) use sources::KeyFile;
pub(crate) mod vertex;

pub use credentials::GoogleCredentials;
