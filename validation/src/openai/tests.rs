//! Unit tests of the OpenAI judges on response bodies shaped like the OpenAI API reference's examples.

use super::*;

fn chat() -> Value {
    json!({
        "id": "chatcmpl-123", "object": "chat.completion", "created": 1677652288, "model": "tiny",
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there"}, "logprobs": null,
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}
    })
}

fn answer(status: u16, content_type: &str, body: &str) -> Answer {
    Answer {
        status,
        content_type: Some(content_type.into()),
        body: body.into(),
    }
}

#[test]
fn reference_chat_completion_conforms() {
    assert_eq!(schema::chat_completion(&chat()), Vec::<String>::new());
    let mut no_usage = chat();
    no_usage.as_object_mut().unwrap().remove("usage");
    assert_eq!(
        schema::chat_completion(&no_usage),
        Vec::<String>::new(),
        "usage is checked only when present"
    );
    let a = answer(200, "application/json", &chat().to_string());
    assert_eq!(
        judge_object(&a, schema::chat_completion).unwrap(),
        "chat.completion \"chatcmpl-123\" with the required fields (finish_reason stop)"
    );
}

#[test]
fn each_missing_or_mistyped_field_is_named() {
    type Case = (&'static str, fn(&mut Value), &'static str);
    let cases: &[Case] = &[
        (
            "id",
            |v| drop(v.as_object_mut().unwrap().remove("id")),
            "id: missing",
        ),
        (
            "created",
            |v| v["created"] = json!("yesterday"),
            "created: expected an integer, got string \"yesterday\"",
        ),
        (
            "object",
            |v| v["object"] = json!("text_completion"),
            "object: expected \"chat.completion\", got \"text_completion\"",
        ),
        (
            "finish",
            |v| {
                drop(
                    v["choices"][0]
                        .as_object_mut()
                        .unwrap()
                        .remove("finish_reason"),
                )
            },
            "choices[0].finish_reason: missing",
        ),
        (
            "role",
            |v| v["choices"][0]["message"]["role"] = json!("user"),
            "choices[0].message.role: expected \"assistant\", got \"user\"",
        ),
        (
            "content",
            |v| {
                drop(
                    v["choices"][0]["message"]
                        .as_object_mut()
                        .unwrap()
                        .remove("content"),
                )
            },
            "choices[0].message.content: missing",
        ),
        ("choices", |v| v["choices"] = json!([]), "choices: empty"),
        (
            "usage",
            |v| v["usage"]["total_tokens"] = json!(20),
            "usage.total_tokens: 20 is not prompt_tokens + completion_tokens = 21",
        ),
    ];
    for (name, break_it, want) in cases {
        let mut v = chat();
        break_it(&mut v);
        assert_eq!(
            schema::chat_completion(&v),
            vec![want.to_string()],
            "case {name}"
        );
    }
    let a = answer(200, "application/json", "{\"id\": 1}");
    let err = judge_object(&a, schema::chat_completion).unwrap_err();
    assert!(
        err.starts_with("id: expected a string, got number 1; object: missing; created: missing"),
        "{err}"
    );
}

#[test]
fn text_completion_requires_text() {
    let mut v = json!({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "tiny",
                        "choices": [{"index": 0, "text": "hi", "logprobs": null, "finish_reason": "length"}]});
    assert_eq!(schema::text_completion(&v), Vec::<String>::new());
    v["choices"][0].as_object_mut().unwrap().remove("text");
    assert_eq!(
        schema::text_completion(&v),
        vec!["choices[0].text: missing".to_string()]
    );
}

fn stream(events: &[&str]) -> Answer {
    let body: String = events
        .iter()
        .map(|e| format!("data: {e}\r\n\r\n"))
        .collect();
    answer(200, "text/event-stream; charset=utf-8", &body)
}

const CHUNK_1: &str = r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}"#;
const CHUNK_2: &str = r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;

#[test]
fn a_stream_ends_with_done_and_finishes() {
    assert_eq!(
        judge_stream(&stream(&[CHUNK_1, CHUNK_2, "[DONE]"])).unwrap(),
        "2 chat.completion.chunk event(s), then data: [DONE]"
    );
    assert_eq!(
        judge_stream(&stream(&[CHUNK_1, CHUNK_2])).unwrap_err(),
        "the stream does not end with data: [DONE] (2 event(s))"
    );
    assert_eq!(
        judge_stream(&stream(&[CHUNK_1, "[DONE]"])).unwrap_err(),
        "no chunk carries a finish_reason"
    );
    assert_eq!(
        judge_stream(&stream(&["[DONE]"])).unwrap_err(),
        "no chunk before data: [DONE]"
    );
    let other_id = CHUNK_2.replace("\"c1\"", "\"c2\"");
    assert_eq!(
        judge_stream(&stream(&[CHUNK_1, &other_id, "[DONE]"])).unwrap_err(),
        "chunk 1: id \"c2\" differs from the first chunk's \"c1\""
    );
    let not_chunk = CHUNK_2.replace("chat.completion.chunk", "chat.completion");
    assert!(
        judge_stream(&stream(&[&not_chunk, "[DONE]"]))
            .unwrap_err()
            .starts_with("chunk 0: object: expected")
    );
    let mut plain = stream(&[CHUNK_1, CHUNK_2, "[DONE]"]);
    plain.content_type = Some("application/json".into());
    assert_eq!(
        judge_stream(&plain).unwrap_err(),
        "Content-Type is application/json, not text/event-stream"
    );
}

#[test]
fn sse_framing() {
    let events =
        sse::parse(": ping\n\nevent: x\ndata: {\"a\":\ndata: 1}\n\ndata: [DONE]\n\n").unwrap();
    assert_eq!(
        events,
        vec![sse::Event::Chunk(json!({"a": 1})), sse::Event::Done]
    );
    assert_eq!(
        sse::parse("data: [DONE]\n\ndata: {}\n\n").unwrap_err(),
        "an event after data: [DONE]: \"{}\""
    );
    assert!(
        sse::parse("data: {oops\n\n")
            .unwrap_err()
            .starts_with("event 1 is not JSON")
    );
    // The last event counts even without its closing blank line.
    assert_eq!(sse::parse("data: [DONE]").unwrap(), vec![sse::Event::Done]);
}

#[test]
fn bad_requests_need_4xx_and_an_error_object() {
    let openai = r#"{"error": {"message": "'messages' is a required property", "type": "invalid_request_error", "param": null, "code": null}}"#;
    assert_eq!(
        judge_error(&answer(400, "application/json", openai)).unwrap(),
        "HTTP 400 with error: 'messages' is a required property"
    );
    assert_eq!(
        judge_error(&answer(200, "application/json", openai)).unwrap_err(),
        format!("HTTP 200 (want 4xx): {openai}")
    );
    // FastAPI's default validation answer has no `error` object.
    let fastapi = r#"{"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}"#;
    assert_eq!(
        judge_error(&answer(422, "application/json", fastapi)).unwrap_err(),
        format!("HTTP 422: error: missing: {fastapi}")
    );
    assert!(
        judge_error(&answer(400, "text/plain", "bad"))
            .unwrap_err()
            .starts_with("HTTP 400: body is not JSON")
    );
}

#[test]
fn models_must_list_the_served_name() {
    let list =
        r#"{"object": "list", "data": [{"id": "tiny", "object": "model", "owned_by": "me"}]}"#;
    assert_eq!(
        judge_models(&answer(200, "application/json", list), "tiny").unwrap(),
        "\"tiny\" listed (1 model(s))"
    );
    assert_eq!(
        judge_models(&answer(200, "application/json", list), "qwen").unwrap_err(),
        "\"qwen\" is not listed; the server lists [\"tiny\"]"
    );
    assert_eq!(
        judge_models(&answer(200, "application/json", r#"{"data": []}"#), "x").unwrap_err(),
        "object: missing"
    );
    assert!(
        judge_models(&answer(503, "application/json", "{}"), "x")
            .unwrap_err()
            .starts_with("HTTP 503 (want 200)")
    );
}

#[test]
fn base_url_may_carry_v1() {
    let t = |base: &str| Target {
        base_url: base.into(),
        model: "m".into(),
        api_key: None,
        request_timeout: Duration::from_secs(1),
    };
    assert_eq!(
        t("http://svc:8000/v1/").url("/v1/models"),
        "http://svc:8000/v1/models"
    );
    assert_eq!(
        t("http://svc:8000").url("/v1/models"),
        "http://svc:8000/v1/models"
    );
}
