//! AWS's own machinery, for the Bedrock client: Signature Version 4, and credentials found as
//! the AWS CLI finds them (the environment, the shared profile files, STS roles, AWS SSO, a
//! `credential_process`, a container's or an EC2 instance's role).

mod credential_chain;
mod found;
mod metadata;
mod process;
mod profile_files;
pub(crate) mod sigv4;
mod sso;
mod sso_token;
mod sts;
mod time;

pub use credential_chain::AwsCredentialChain;
pub use sigv4::AwsCredentials;

/// The domain of AWS's endpoints in `region`: `amazonaws.com.cn` in China.
pub(crate) fn dns_suffix(region: &str) -> &'static str {
    match region.starts_with("cn-") {
        true => "amazonaws.com.cn",
        false => "amazonaws.com",
    }
}
