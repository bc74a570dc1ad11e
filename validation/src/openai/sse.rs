//! Server-sent events as the OpenAI API streams them: `data: {json}` events, the last `data: [DONE]`.

use serde_json::Value;

/// One `data:` event of a stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A JSON chunk.
    Chunk(Value),
    /// The `[DONE]` sentinel that ends the stream.
    Done,
}

/// Splits an event-stream body into its `data:` events (the SSE format of the HTML standard: events are separated
/// by a blank line, the data of several `data:` lines of one event is joined with newlines, lines starting with `:`
/// are comments, other fields such as `event:` or `id:` are ignored). Errors: the first event whose data is neither
/// `[DONE]` nor JSON, or an event after `[DONE]`.
pub fn parse(body: &str) -> Result<Vec<Event>, String> {
    let mut events = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    let lines = body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    for line in lines.chain(std::iter::once("")) {
        if line.is_empty() {
            if !data.is_empty() {
                let text = data.join("\n");
                data.clear();
                if events.last() == Some(&Event::Done) {
                    return Err(format!("an event after data: [DONE]: {text:?}"));
                }
                if text.trim() == "[DONE]" {
                    events.push(Event::Done);
                } else {
                    let v = serde_json::from_str(&text).map_err(|e| {
                        format!("event {} is not JSON ({e}): {text:?}", events.len() + 1)
                    })?;
                    events.push(Event::Chunk(v));
                }
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        if field == "data" {
            data.push(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    Ok(events)
}
