//! AWS's machinery, for the Bedrock client: credentials found as the AWS SDKs find them (by
//! `aws-config`), and requests signed with Signature Version 4 (by `aws-sigv4`).

mod chain;
mod credentials;
pub(crate) mod signing;

pub use chain::AwsCredentialChain;
pub use credentials::AwsCredentials;

/// The region the process's environment names: `AWS_REGION`, else `AWS_DEFAULT_REGION`
/// (botocore's); `None` when neither is set, or it is not a region name (with a warning).
pub(crate) fn environment_region() -> Option<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    checked_region(
        var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION")),
        "AWS_REGION (or AWS_DEFAULT_REGION)",
    )
}

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
