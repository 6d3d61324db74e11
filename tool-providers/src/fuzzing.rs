//! Seams for the fuzz targets of `fuzz/`: the clients' stream reading without a network
//! (`sse_assembler`) and the readers of credential material (`credentials`). Not a stable API; hidden from the
//! documentation.
//!
//! [`stream_events`] runs the very code a client's
//! [`respond_stream`](tool_model::ChatModel::respond_stream) runs once the response is open: the
//! body cut into lines and `data:` payloads (or AWS event stream messages), the API's decoder,
//! and the tool-call assembler.

use tool_core::provider::Aliases;

use crate::sse::{Decoder, EventReader};
use tool_model::{ModelError, ModelEvent};

/// An API whose streamed answers a client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamApi {
    /// OpenAI Chat Completions ([`OpenAiChatModel`](crate::OpenAiChatModel)).
    OpenAiChat,
    /// OpenAI Responses ([`OpenAiResponsesModel`](crate::OpenAiResponsesModel)).
    OpenAiResponses,
    /// Anthropic Messages ([`AnthropicModel`](crate::AnthropicModel)).
    Anthropic,
    /// Gemini `streamGenerateContent` ([`GeminiModel`](crate::GeminiModel)).
    Gemini,
    /// Bedrock `ConverseStream` ([`BedrockModel`](crate::BedrockModel)), an AWS event stream
    /// rather than server-sent events.
    Bedrock,
}

impl StreamApi {
    /// Every API, in a fixed order.
    pub const ALL: [StreamApi; 5] = [
        StreamApi::OpenAiChat,
        StreamApi::OpenAiResponses,
        StreamApi::Anthropic,
        StreamApi::Gemini,
        StreamApi::Bedrock,
    ];

    fn decoder(self, aliases: Aliases) -> Box<dyn Decoder> {
        match self {
            StreamApi::OpenAiChat => crate::openai_chat::stream_decoder(aliases),
            StreamApi::OpenAiResponses => {
                crate::openai_responses::stream_decoder(aliases, String::new())
            }
            StreamApi::Anthropic => crate::anthropic::stream_decoder(aliases),
            StreamApi::Gemini => crate::gemini::stream_decoder(aliases, String::new()),
            StreamApi::Bedrock => crate::bedrock::stream_decoder(aliases),
        }
    }

    fn reader(self, aliases: Aliases) -> EventReader<'static> {
        match self {
            StreamApi::Bedrock => crate::bedrock::event_reader(self.decoder(aliases)),
            _ => EventReader::new(self.decoder(aliases)),
        }
    }
}

/// Every event `api`'s client gives for a response body arriving in `chunks` and then ending,
/// with the tools declared under `aliases`: text, tool call and reasoning deltas, then the
/// assembled answer or an error, and nothing after that last one.
pub fn stream_events<'c>(
    api: StreamApi,
    aliases: Aliases,
    chunks: impl IntoIterator<Item = &'c [u8]>,
) -> Vec<Result<ModelEvent, ModelError>> {
    let mut reader = api.reader(aliases);
    let mut chunks = chunks.into_iter();
    let mut events = Vec::new();
    loop {
        while let Some(event) = reader.pop() {
            events.push(event);
        }
        if reader.is_over() {
            return events;
        }
        match chunks.next() {
            Some(chunk) => reader.feed(chunk),
            None => reader.end(),
        }
    }
}

/// A kind of credential material the clients read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialText {
    /// A Google credentials file: its `type` and the projects it names.
    GoogleKeyFile,
}

impl CredentialText {
    /// Every kind, in a fixed order.
    pub const ALL: [CredentialText; 1] = [CredentialText::GoogleKeyFile];
}

/// Reads `text` as `kind`: a line that says what was read, or the error. No secret of the
/// text is in either (what the readers' errors promise). AWS's credential material is read by
/// `aws-config`, not here.
pub fn read_credentials(kind: CredentialText, text: &str) -> Result<String, String> {
    match kind {
        CredentialText::GoogleKeyFile => {
            // Only the reading of the file is ours; google-cloud-auth makes the credentials,
            // and would start fetching a token at once.
            crate::google::KeyFile::parse(text, "the key file")?;
            Ok("a key file".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `credentials` fuzz target: serde_json quoted the string it refused, a
    /// secret in a process's output among it.
    #[test]
    fn no_credential_reader_quotes_a_secret_back() {
        let printed = r#""AKIDEXAMPLE secret-wJalrXUtnFEMIK4MDENG""#;
        for kind in CredentialText::ALL {
            if let Err(error) = read_credentials(kind, printed) {
                assert!(!error.contains("secret-"), "{kind:?}: {error}");
            }
        }
        // A `type` that is not Google's is refused without being quoted.
        let key_file = r#"{"type": "secret-abcdefghijklmn", "private_key": "secret-bits"}"#;
        let error = read_credentials(CredentialText::GoogleKeyFile, key_file).unwrap_err();
        assert!(!error.contains("secret-"), "{error}");
        let not_json = r#"{"type": "service_account", "private_key": "secret-abcdefghijklmn"#;
        let error = read_credentials(CredentialText::GoogleKeyFile, not_json).unwrap_err();
        assert!(!error.contains("secret-"), "{error}");
    }
    use tool_model::ModelResponse;

    const CHAT: &str = concat!(
        "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\",\"tool_calls\":[{\"index\":0,",
        "\"id\":\"c1\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,",
        "\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\r\n\n",
        "data: [DONE]\n\n",
    );

    fn done(events: &[Result<ModelEvent, ModelError>]) -> &ModelResponse {
        match events.last() {
            Some(Ok(ModelEvent::Done(response))) => response,
            other => panic!("the last event is not the answer: {other:?}"),
        }
    }

    #[test]
    fn every_cut_of_a_chat_stream_gives_the_same_events() {
        let whole = stream_events(StreamApi::OpenAiChat, Aliases::default(), [CHAT.as_bytes()]);
        let answer = done(&whole);
        assert_eq!(answer.text.as_deref(), Some("Hi"));
        assert_eq!(answer.calls.len(), 1);
        assert_eq!(answer.calls[0].arguments, serde_json::json!({ "a": 1 }));
        let pieces: Vec<&str> = (whole.iter())
            .filter_map(|event| match event {
                Ok(ModelEvent::ToolCallDelta(delta)) => Some(delta.arguments.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(pieces, ["{\"a\":", "1}"]);
        let bytes = CHAT.as_bytes();
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            let events = stream_events(StreamApi::OpenAiChat, Aliases::default(), [a, b]);
            assert_eq!(events, whole, "cut at {cut}");
        }
        let one_by_one = stream_events(StreamApi::OpenAiChat, Aliases::default(), bytes.chunks(1));
        assert_eq!(one_by_one, whole);
    }

    /// With `n` above 1, each chunk carries one choice by its index: the others' text and
    /// calls are not the answer's.
    #[test]
    fn a_streamed_second_choice_is_not_mixed_into_the_first() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"One\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"Two\",\"tool_calls\":[{\"index\":0,",
            "\"id\":\"c9\",\"function\":{\"name\":\"add\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: [DONE]\n\n",
        );
        let events = stream_events(StreamApi::OpenAiChat, Aliases::default(), [body.as_bytes()]);
        let answer = done(&events);
        assert_eq!(answer.text.as_deref(), Some("One"));
        assert!(answer.calls.is_empty(), "{:?}", answer.calls);
    }

    /// A streamed refusal is the answer's text, and stays the reason it ended.
    #[test]
    fn a_streamed_refusal_is_the_text_and_the_reason() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\" help.\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
        );
        let events = stream_events(StreamApi::OpenAiChat, Aliases::default(), [body.as_bytes()]);
        let answer = done(&events);
        assert_eq!(answer.text.as_deref(), Some("I can't help."));
        assert_eq!(answer.finish_reason.as_deref(), Some("refusal"));
    }

    /// An Anthropic or Responses stream that ends before its last event is an error, not an
    /// answer whose call would run with the arguments that came.
    #[test]
    fn a_stream_cut_before_its_last_event_is_an_error() {
        let anthropic = concat!(
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":",
            "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"pay\",\"input\":{}}}\n\n",
        );
        let responses = concat!(
            "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":",
            "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"pay\"}}\n\n",
        );
        for (api, body) in [
            (StreamApi::Anthropic, anthropic),
            (StreamApi::OpenAiResponses, responses),
        ] {
            let events = stream_events(api, Aliases::default(), [body.as_bytes()]);
            assert!(
                matches!(events.last(), Some(Err(ModelError::Malformed { .. }))),
                "{events:?}"
            );
        }
    }

    /// Found by the `sse_assembler` fuzz target: an error dropped the text deltas read before
    /// it in the same piece of the body, but not those of an earlier piece.
    #[test]
    fn text_before_an_error_is_given_however_the_body_is_cut() {
        let body =
            b"data: {\"choices\":[{\"delta\":{\"content\":\"Let me\"}}]}\n\ndata: {oops}\n\n";
        let whole = stream_events(StreamApi::OpenAiChat, Aliases::default(), [&body[..]]);
        match whole.as_slice() {
            [Ok(ModelEvent::TextDelta(text)), Err(ModelError::Malformed { .. })] => {
                assert_eq!(text, "Let me")
            }
            other => panic!("{other:?}"),
        }
        let first_line_end = body.windows(2).position(|w| w == b"\n\n").unwrap() + 2;
        let (a, b) = body.split_at(first_line_end);
        let cut = stream_events(StreamApi::OpenAiChat, Aliases::default(), [a, b]);
        assert_eq!(cut, whole);
    }

    #[test]
    fn a_payload_that_is_not_json_ends_the_stream_with_an_error() {
        for api in StreamApi::ALL
            .into_iter()
            .filter(|a| *a != StreamApi::Bedrock)
        {
            let events = stream_events(api, Aliases::default(), [&b"data: {\"a\n\ndata: {}\n"[..]]);
            match events.as_slice() {
                [Err(ModelError::Malformed { message, .. })] => {
                    assert!(message.contains("not JSON"), "{api:?}: {message}")
                }
                other => panic!("{api:?}: {other:?}"),
            }
        }
    }
}
