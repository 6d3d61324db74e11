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
pub(crate) use found::Issued;
pub(crate) use process::read_printed;
pub(crate) use profile_files::{split_command, ProfileFiles};
pub(crate) use time::parse_time;

pub use sigv4::AwsCredentials;

/// Whether `region` can stand in a host name as a region (`us-east-1`, `cn-north-1`,
/// `us-gov-west-1`): lower-case letters, digits and inner `-`, at most 63 characters. A region
/// read from the environment, a profile file or a caller becomes part of the host that
/// credentials and signed requests go to; anything else (a `.`, a `/`, an `@`) would let it
/// name another host.
pub(crate) fn is_region(region: &str) -> bool {
    !region.is_empty()
        && region.len() <= 63
        && !region.starts_with('-')
        && !region.ends_with('-')
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// `region` when it [is a region](is_region); otherwise `None`, with a warning naming where
/// it came from (the value itself is not shown).
pub(crate) fn checked_region(region: Option<String>, from: &str) -> Option<String> {
    let region = region?;
    if is_region(&region) {
        return Some(region);
    }
    tracing::warn!(
        "{from} is not an AWS region name (lower-case letters, digits and '-'): ignored"
    );
    None
}

/// The domain of AWS's endpoints in `region`: `amazonaws.com.cn` in China.
pub(crate) fn dns_suffix(region: &str) -> &'static str {
    match region.starts_with("cn-") {
        true => "amazonaws.com.cn",
        false => "amazonaws.com",
    }
}

#[cfg(test)]
mod tests {
    use super::is_region;

    #[test]
    fn only_region_names_can_become_part_of_a_host() {
        for region in ["us-east-1", "cn-north-1", "us-gov-west-1", "eu-central-2"] {
            assert!(is_region(region), "{region}");
        }
        for bad in [
            "",
            "evil.com",
            "evil.com/x?",
            "us-east-1@evil.com",
            "US-EAST-1",
            "-us",
            "us-",
            "us east",
        ] {
            assert!(!is_region(bad), "{bad}");
        }
    }
}
