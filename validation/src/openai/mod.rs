//! The OpenAI-API conformance check of an inference endpoint: six requests, one [`Check`] each.
//!
//! | check | request | passes when |
//! | --- | --- | --- |
//! | `models` | `GET /v1/models` | 200, a `list` whose `data[].id` includes the served name |
//! | `chat-completion` | `POST /v1/chat/completions` | 200, a `chat.completion` with the required fields ([`schema::chat_completion`]) |
//! | `completion` | `POST /v1/completions` | 200, a `text_completion` with the required fields ([`schema::text_completion`]) |
//! | `chat-stream` | the chat request with `stream: true` | 200 `text/event-stream`, `chat.completion.chunk` events, one id, a finish reason, ending `data: [DONE]` |
//! | `bad-request-missing-messages` | chat without `messages` | 4xx with a JSON `error` object ([`schema::error_body`]) |
//! | `bad-request-wrong-type` | chat with `messages` a string | 4xx with a JSON `error` object |
//!
//! The requests ask for a few tokens (`max_tokens`), so the check is about the API, not the answers: any model,
//! random weights included, passes when its server speaks the protocol.

pub mod schema;
pub mod sse;

use std::time::{Duration, Instant};

use reqwest::blocking::{Client, Response};
use serde_json::{Value, json};

use crate::report::Check;

/// Tokens asked for in each completion: enough for a finish reason, few enough to be quick on any model.
pub const MAX_TOKENS: u32 = 8;

/// The endpoint to check.
#[derive(Clone, Debug)]
pub struct Target {
    /// Base URL without `/v1` (a trailing `/v1` or `/` is removed), e.g. `http://qwen.models.svc:8000`.
    pub base_url: String,
    /// The served model name the requests use and `/v1/models` must list.
    pub model: String,
    /// Sent as `Authorization: Bearer KEY` when set.
    pub api_key: Option<String>,
    /// Time allowed for each request, whole response included.
    pub request_timeout: Duration,
}

impl Target {
    fn url(&self, path: &str) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}{path}")
    }
}

/// A response read whole: status, content type and body text.
#[derive(Clone, Debug)]
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body as text (lossy UTF-8).
    pub body: String,
}

impl Answer {
    fn read(response: Response) -> Result<Self, String> {
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = response
            .bytes()
            .map_err(|e| format!("reading the body: {}", chain(&e)))?;
        Ok(Self {
            status,
            content_type,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }

    fn json(&self) -> Result<Value, String> {
        serde_json::from_str(&self.body).map_err(|e| {
            format!(
                "HTTP {}: body is not JSON ({e}): {}",
                self.status,
                clip(&self.body)
            )
        })
    }
}

/// An error and its sources on one line (reqwest's own message omits the cause, e.g. "connection refused").
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// At most 200 characters of a body, for a FAIL line.
fn clip(body: &str) -> String {
    let one: String = body.chars().take(200).collect();
    if one.len() < body.len() {
        format!("{one}...")
    } else {
        one
    }
}

/// Runs every check against `target`. When `wait` is not zero, first polls `GET /v1/models` every second until it
/// answers 200 or `wait` has passed (a server still loading its model answers 503 or refuses connections).
pub fn run(target: &Target, wait: Duration) -> Vec<Check> {
    let mut builder = Client::builder()
        .timeout(target.request_timeout)
        .connect_timeout(Duration::from_secs(10));
    if let Some(key) = &target.api_key {
        let mut headers = reqwest::header::HeaderMap::new();
        match reqwest::header::HeaderValue::from_str(&format!("Bearer {key}")) {
            Ok(v) => headers.insert(reqwest::header::AUTHORIZATION, v),
            Err(_) => {
                return vec![Check::fail(
                    "models",
                    "the API key is not a valid header value",
                )];
            }
        };
        builder = builder.default_headers(headers);
    }
    let client = match builder.build() {
        Ok(c) => c,
        Err(e) => {
            return vec![Check::fail(
                "models",
                format!("cannot build the HTTP client: {}", chain(&e)),
            )];
        }
    };
    let get = |path: &str| {
        client
            .get(target.url(path))
            .send()
            .map_err(|e| chain(&e))
            .and_then(Answer::read)
    };
    let post = |path: &str, body: &Value| {
        client
            .post(target.url(path))
            .json(body)
            .send()
            .map_err(|e| chain(&e))
            .and_then(Answer::read)
    };
    let started = Instant::now();
    let mut models = get("/v1/models");
    while started.elapsed() < wait && !matches!(&models, Ok(a) if a.status == 200) {
        std::thread::sleep(Duration::from_secs(1));
        models = get("/v1/models");
    }
    let model = &target.model;
    let chat = json!({"model": model, "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": MAX_TOKENS});
    let mut stream = chat.clone();
    stream["stream"] = json!(true);
    let completion = json!({"model": model, "prompt": "Hello", "max_tokens": MAX_TOKENS});
    vec![
        Check::from_result("models", models.and_then(|a| judge_models(&a, model))),
        Check::from_result(
            "chat-completion",
            post("/v1/chat/completions", &chat)
                .and_then(|a| judge_object(&a, schema::chat_completion)),
        ),
        Check::from_result(
            "completion",
            post("/v1/completions", &completion)
                .and_then(|a| judge_object(&a, schema::text_completion)),
        ),
        Check::from_result(
            "chat-stream",
            post("/v1/chat/completions", &stream).and_then(|a| judge_stream(&a)),
        ),
        Check::from_result(
            "bad-request-missing-messages",
            post(
                "/v1/chat/completions",
                &json!({"model": model, "max_tokens": MAX_TOKENS}),
            )
            .and_then(|a| judge_error(&a)),
        ),
        Check::from_result(
            "bad-request-wrong-type",
            post(
                "/v1/chat/completions",
                &json!({"model": model, "messages": "Say hello.", "max_tokens": MAX_TOKENS}),
            )
            .and_then(|a| judge_error(&a)),
        ),
    ]
}

fn expect_status(a: &Answer, want: u16) -> Result<(), String> {
    if a.status == want {
        Ok(())
    } else {
        Err(format!(
            "HTTP {} (want {want}): {}",
            a.status,
            clip(&a.body)
        ))
    }
}

/// Judges a `/v1/models` answer: 200, a conformant list, `model` among its ids.
pub fn judge_models(a: &Answer, model: &str) -> Result<String, String> {
    expect_status(a, 200)?;
    let (problems, ids) = schema::model_list(&a.json()?);
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    if ids.iter().any(|id| id == model) {
        Ok(format!("{model:?} listed ({} model(s))", ids.len()))
    } else {
        Err(format!("{model:?} is not listed; the server lists {ids:?}"))
    }
}

/// Judges a non-streamed completion answer: 200 and no problem from `validate`.
pub fn judge_object(a: &Answer, validate: fn(&Value) -> Vec<String>) -> Result<String, String> {
    expect_status(a, 200)?;
    let v = a.json()?;
    let problems = validate(&v);
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let finish = v["choices"][0]["finish_reason"]
        .as_str()
        .unwrap_or_default();
    Ok(format!(
        "{} {} with the required fields (finish_reason {finish})",
        v["object"].as_str().unwrap_or_default(),
        v["id"]
    ))
}

/// Judges a streamed chat answer: 200 `text/event-stream`, at least one conformant chunk, every chunk with the
/// first one's id, a non-null finish reason in some chunk, the stream ending with `data: [DONE]`.
pub fn judge_stream(a: &Answer) -> Result<String, String> {
    expect_status(a, 200)?;
    let ct = a.content_type.as_deref().unwrap_or("none");
    if !ct.starts_with("text/event-stream") {
        return Err(format!("Content-Type is {ct}, not text/event-stream"));
    }
    let events = sse::parse(&a.body)?;
    if events.last() != Some(&sse::Event::Done) {
        return Err(format!(
            "the stream does not end with data: [DONE] ({} event(s))",
            events.len()
        ));
    }
    let chunks: Vec<&Value> = events
        .iter()
        .filter_map(|e| {
            if let sse::Event::Chunk(v) = e {
                Some(v)
            } else {
                None
            }
        })
        .collect();
    let first = chunks.first().ok_or("no chunk before data: [DONE]")?;
    for (i, c) in chunks.iter().enumerate() {
        let problems = schema::chat_chunk(c);
        if !problems.is_empty() {
            return Err(format!("chunk {i}: {}", problems.join("; ")));
        }
        if c["id"] != first["id"] {
            return Err(format!(
                "chunk {i}: id {} differs from the first chunk's {}",
                c["id"], first["id"]
            ));
        }
    }
    let finished = chunks.iter().any(|c| {
        c["choices"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|ch| ch["finish_reason"].is_string()))
    });
    if !finished {
        return Err("no chunk carries a finish_reason".into());
    }
    Ok(format!(
        "{} chat.completion.chunk event(s), then data: [DONE]",
        chunks.len()
    ))
}

/// Judges the answer to a bad request: a 4xx status and a JSON body with an `error` object.
pub fn judge_error(a: &Answer) -> Result<String, String> {
    if !(400..500).contains(&a.status) {
        return Err(format!("HTTP {} (want 4xx): {}", a.status, clip(&a.body)));
    }
    let v = a.json()?;
    let problems = schema::error_body(&v);
    if !problems.is_empty() {
        return Err(format!(
            "HTTP {}: {}: {}",
            a.status,
            problems.join("; "),
            clip(&a.body)
        ));
    }
    Ok(format!(
        "HTTP {} with error: {}",
        a.status,
        clip(v["error"]["message"].as_str().unwrap_or_default())
    ))
}

#[cfg(test)]
mod tests;
