//! How a model generates its answer: the settings every model API has in some form, each
//! client writing them in its API's own fields.

use serde::{Deserialize, Serialize};

/// How long an answer may be and how it is sampled, for every client alike. A client sets its
/// own ([`with_generation`] on the clients of `tool-providers`), a request its
/// ([`ModelRequest::generation`](crate::ModelRequest::generation)); each setting the request
/// makes wins over the client's.
///
/// Each client writes a setting in its API's field, and leaves out (with a warning in the log)
/// one its API does not take:
///
/// | setting | OpenAI Chat | OpenAI Responses | Anthropic | Gemini | Bedrock Converse |
/// |---|---|---|---|---|---|
/// | `max_tokens` | `max_completion_tokens` | `max_output_tokens` | `max_tokens` (4,096 when unset: the API requires it) | `maxOutputTokens` | `maxTokens` |
/// | `temperature` | `temperature` | `temperature` | — | `temperature` | `temperature` (held to 0–1) |
/// | `top_p` | `top_p` | `top_p` | — | `topP` | `topP` |
/// | `stop` | `stop` | — | `stop_sequences` | `stopSequences` | `stopSequences` |
/// | `seed` | `seed` | — | — | `seed` | — |
///
/// A temperature or `top_p` that is not a finite number is not sent.
///
/// ```
/// use tool_model::Generation;
///
/// let settings = Generation::new().max_tokens(1024).temperature(0.2).stop(["\n\n"]);
/// let request = Generation::new().temperature(0.0);
/// let used = request.over(&settings);
/// assert_eq!(used.max_tokens, Some(1024));
/// assert_eq!(used.temperature, Some(0.0));
/// ```
///
/// [`with_generation`]: Generation#how-a-client-takes-them
///
/// # How a client takes them
///
/// Every client of `tool-providers` has `with_generation(Generation)` and the shortcuts
/// `with_max_tokens(u32)` and `with_temperature(f32)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Generation {
    /// The most tokens the answer may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling: the share of the probability mass sampled from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Texts that end the answer where the model writes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A seed, for answers that repeat where the API can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
}

impl Generation {
    /// No settings: every API's defaults.
    pub fn new() -> Self {
        Generation::default()
    }

    /// The most tokens the answer may have.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Nucleus sampling's share of the probability mass.
    pub fn top_p(mut self, top_p: f32) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// Texts that end the answer.
    pub fn stop<S: Into<String>>(mut self, stop: impl IntoIterator<Item = S>) -> Self {
        self.stop = stop.into_iter().map(Into::into).collect();
        self
    }

    /// A seed, for answers that repeat where the API can.
    pub fn seed(mut self, seed: i64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// These settings over `base`: each one set here, else `base`'s.
    pub fn over(&self, base: &Generation) -> Generation {
        Generation {
            max_tokens: self.max_tokens.or(base.max_tokens),
            temperature: self.temperature.or(base.temperature),
            top_p: self.top_p.or(base.top_p),
            stop: if self.stop.is_empty() {
                base.stop.clone()
            } else {
                self.stop.clone()
            },
            seed: self.seed.or(base.seed),
        }
    }

    /// The temperature, when it is a finite number, as the decimal written (`0.2`, not the
    /// `0.20000000298...` an `f32` widens to).
    pub fn finite_temperature(&self) -> Option<f64> {
        self.temperature.and_then(decimal)
    }

    /// `top_p`, when it is a finite number, as the decimal written.
    pub fn finite_top_p(&self) -> Option<f64> {
        self.top_p.and_then(decimal)
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Generation::default()
    }
}

/// `x` as the shortest decimal that reads back as it, when it is finite.
fn decimal(x: f32) -> Option<f64> {
    x.is_finite()
        .then(|| x.to_string().parse::<f64>().unwrap_or(f64::from(x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_settings_win_one_by_one() {
        let client = Generation::new()
            .max_tokens(100)
            .temperature(0.5)
            .stop(["x"]);
        let request = Generation::new().temperature(0.0).seed(7);
        let used = request.over(&client);
        assert_eq!(
            used,
            Generation {
                max_tokens: Some(100),
                temperature: Some(0.0),
                top_p: None,
                stop: vec!["x".into()],
                seed: Some(7),
            }
        );
        assert!(Generation::new().is_empty());
        assert_eq!(
            Generation::new().temperature(f32::NAN).finite_temperature(),
            None
        );
        assert_eq!(Generation::new().top_p(0.9).finite_top_p(), Some(0.9));
    }
}
