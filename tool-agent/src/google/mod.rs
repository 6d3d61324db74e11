//! Google Cloud's machinery, for Gemini on Vertex AI: Application Default Credentials (a
//! service account's key, a user's refresh token, the metadata server) and the access tokens
//! they give.

mod credentials;
mod jwt;
mod sources;

pub use credentials::GoogleCredentials;
