//! What a provider's response may be before its calls are looked for: how large as text, and
//! how deeply nested. Every walk of a response recurses, so the depth is checked first, without
//! recursion.

use serde_json::Value;

use super::{Format, ParseError};
use crate::nesting::DEFAULT_NESTING_LIMIT;

/// The default of [`ResponseLimits::bytes`]: 16 MiB.
pub const DEFAULT_RESPONSE_BYTES: usize = 16 << 20;

/// Limits on a provider's response, each named in the [`ParseError`] that refuses a response
/// over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseLimits {
    /// The most bytes of response text [`read_response`] parses (default
    /// [`DEFAULT_RESPONSE_BYTES`]).
    pub bytes: usize,
    /// How deep arrays and objects may nest in a response: fewer than this many levels (default
    /// 128, as `serde_json` allows in text, so any response parsed from text is within it).
    pub depth: usize,
}

impl Default for ResponseLimits {
    fn default() -> Self {
        ResponseLimits {
            bytes: DEFAULT_RESPONSE_BYTES,
            depth: DEFAULT_NESTING_LIMIT,
        }
    }
}

/// Parses a response's text as [`parse_calls`](super::parse_calls) takes it: refused unparsed
/// when over [`ResponseLimits::bytes`], and refused when it is not JSON or nests deeper than
/// [`ResponseLimits::depth`].
///
/// ```
/// use tool_core::provider::{read_response, Format, ResponseLimits};
/// let limits = ResponseLimits { bytes: 10, ..ResponseLimits::default() };
/// let err = read_response(Format::Anthropic, r#"{"content": []}"#, &limits).unwrap_err();
/// assert!(err.to_string().contains("ResponseLimits::bytes"), "{err}");
/// ```
pub fn read_response(
    format: Format,
    text: &str,
    limits: &ResponseLimits,
) -> Result<Value, ParseError> {
    if text.len() > limits.bytes {
        return Err(ParseError::TooLarge {
            format,
            bytes: text.len(),
            limit: limits.bytes,
        });
    }
    let response: Value = serde_json::from_str(text).map_err(|e| {
        if e.to_string().starts_with("recursion limit exceeded") {
            ParseError::TooDeep {
                format,
                limit: limits.depth.min(DEFAULT_NESTING_LIMIT),
            }
        } else {
            ParseError::Malformed {
                format,
                why: format!("not JSON: {e}"),
            }
        }
    })?;
    check_depth(format, &response, limits)?;
    Ok(response)
}

/// Refuses a response that nests deeper than the limit.
pub(crate) fn check_depth(
    format: Format,
    response: &Value,
    limits: &ResponseLimits,
) -> Result<(), ParseError> {
    if crate::nesting::nests_within(response, limits.depth) {
        Ok(())
    } else {
        Err(ParseError::TooDeep {
            format,
            limit: limits.depth,
        })
    }
}
