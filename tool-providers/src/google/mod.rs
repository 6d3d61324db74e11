//! Google Cloud's machinery, for Gemini and Claude on Vertex AI: Application Default
//! Credentials (a service account's key, a user's refresh token, the metadata server), the
//! access tokens they give, and Vertex AI's endpoints.

mod credentials;
mod gcloud;
mod jwt;
mod sources;

pub(crate) use jwt::ServiceAccountKey;
pub(crate) use sources::KeyFile;
pub(crate) mod vertex;

pub use credentials::GoogleCredentials;
