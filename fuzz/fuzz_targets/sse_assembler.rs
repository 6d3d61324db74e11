//! A streamed answer's body (server-sent events, or Bedrock's AWS event stream) as arbitrary
//! bytes, read by each of the five clients' stream decoders and tool-call assemblers
//! (`tool_providers::fuzzing::stream_events`, the code `respond_stream` runs once the response is
//! open), with the aliases and strict encodings of real declarations. The first byte picks the
//! API and the declarations, the second seeds where the body is cut (a Bedrock body is AWS
//! event stream messages, whose CRCs the seeds from the golden files get right). What must
//! hold: no panic; text, tool call and reasoning deltas, then one last event, the assembled
//! answer (every call named, and its id and name the ones its deltas said, once each) or an
//! error with a message; and the same events whether the body comes whole, cut at
//! pseudo-random points, or a byte at a time.
#![no_main]

#[path = "../common/mod.rs"]
mod common;

use ai_tool::agent::fuzzing::{stream_events, StreamApi};
use ai_tool::agent::{ModelError, ModelEvent};
use ai_tool::prelude::*;
use libfuzzer_sys::fuzz_target;

/// Bodies up to this long are also fed a byte at a time.
const BYTE_BY_BYTE: usize = 2048;

fn format(api: StreamApi) -> Format {
    match api {
        StreamApi::OpenAiChat => Format::OpenAiChat,
        StreamApi::OpenAiResponses => Format::OpenAiResponses,
        StreamApi::Anthropic => Format::Anthropic,
        StreamApi::Gemini => Format::Gemini,
        StreamApi::Bedrock => Format::Bedrock,
    }
}

/// The body cut at points a small generator seeded by `seed` picks.
fn cut(body: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761) | 1;
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let take = (state as usize % 64).min(rest.len());
        let (piece, after) = rest.split_at(take);
        pieces.push(piece);
        rest = after;
    }
    pieces
}

fn check(events: &[Result<ModelEvent, ModelError>]) {
    let (last, before) = events
        .split_last()
        .expect("a stream always ends with an event");
    // Each call's id and name as its deltas said them, by the call's index.
    let mut streamed: Vec<(Option<String>, Option<String>)> = Vec::new();
    for event in before {
        match event {
            Ok(ModelEvent::TextDelta(_) | ModelEvent::ReasoningDelta(_)) => {}
            Ok(ModelEvent::ToolCallDelta(delta)) => {
                if streamed.len() <= delta.index {
                    streamed.resize(delta.index + 1, (None, None));
                }
                let (id, name) = &mut streamed[delta.index];
                if let Some(said) = &delta.id {
                    assert!(
                        id.replace(said.clone()).is_none(),
                        "an id said twice: {delta:?}"
                    );
                }
                if let Some(said) = &delta.name {
                    assert!(
                        name.replace(said.clone()).is_none(),
                        "a name said twice: {delta:?}"
                    );
                }
            }
            other => panic!("only deltas come before the last event: {other:?}"),
        }
    }
    match last {
        Ok(ModelEvent::Done(response)) => {
            for call in &response.calls {
                assert!(!call.name.is_empty(), "a call without a name: {call:?}");
            }
            // The answer's calls are the streamed calls that were named, in order.
            let named: Vec<_> = streamed.iter().filter(|(_, name)| name.is_some()).collect();
            let answered: Vec<_> = (response.calls.iter())
                .map(|call| (call.id.clone(), Some(call.name.clone())))
                .collect();
            assert_eq!(
                named,
                answered.iter().collect::<Vec<_>>(),
                "the calls streamed are not the answer's"
            );
        }
        Ok(other) => panic!("the stream ended on something else than its answer: {other:?}"),
        Err(error) => assert!(!error.to_string().is_empty(), "an error without a message"),
    }
}

fuzz_target!(|data: &[u8]| {
    let [pick, seed, body @ ..] = data else {
        return;
    };
    let api = StreamApi::ALL[usize::from(pick % 5)];
    let aliases = common::aliases(format(api), pick & 0x80 != 0);
    let whole = stream_events(api, aliases.clone(), [body]);
    check(&whole);
    let pieces = stream_events(api, aliases.clone(), cut(body, *seed));
    assert_eq!(
        pieces, whole,
        "cut at other points, the body gave other events"
    );
    if body.len() <= BYTE_BY_BYTE {
        let bytes = stream_events(api, aliases.clone(), body.chunks(1));
        assert_eq!(bytes, whole, "a byte at a time, the body gave other events");
    }
});
