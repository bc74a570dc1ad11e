//! The OpenAI API's response objects, as the fields the check requires (pure functions over JSON).
//!
//! Each validator returns every problem it finds, each naming the field by its path (`choices[0].finish_reason:
//! missing`), so a FAIL line says exactly what a client would trip on. What is required and why is in
//! docs/MODEL_VALIDATION.md ("What the OpenAI check requires"); in short, the fields the OpenAI API reference lists
//! as always present on each object, and which the OpenAI client libraries read without a default.

use serde_json::Value;

/// The JSON type a field must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    String,
    /// A whole number (JSON integer; `1.0` is not one).
    Integer,
    Object,
    Array,
    /// A string or `null`, but present.
    NullableString,
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Collects the problems of one object, with the path of the object being looked at.
struct Fields<'a> {
    problems: &'a mut Vec<String>,
}

impl Fields<'_> {
    /// The field `key` of `obj` (at `path`), if present with the right kind; a problem otherwise.
    fn get<'v>(&mut self, obj: &'v Value, path: &str, key: &str, kind: Kind) -> Option<&'v Value> {
        let Some(v) = obj.get(key) else {
            self.problems.push(format!("{path}{key}: missing"));
            return None;
        };
        let ok = match kind {
            Kind::String => v.is_string(),
            Kind::Integer => v.is_i64() || v.is_u64(),
            Kind::Object => v.is_object(),
            Kind::Array => v.is_array(),
            Kind::NullableString => v.is_string() || v.is_null(),
        };
        if ok {
            Some(v)
        } else {
            let want = match kind {
                Kind::String => "a string",
                Kind::Integer => "an integer",
                Kind::Object => "an object",
                Kind::Array => "an array",
                Kind::NullableString => "a string or null",
            };
            self.problems.push(format!(
                "{path}{key}: expected {want}, got {} {v}",
                kind_of(v)
            ));
            None
        }
    }

    /// The field `key` must be the string `want`.
    fn constant(&mut self, obj: &Value, path: &str, key: &str, want: &str) {
        if let Some(v) = self.get(obj, path, key, Kind::String)
            && v != want
        {
            self.problems
                .push(format!("{path}{key}: expected \"{want}\", got {v}"));
        }
    }
}

/// The fields every completion object has: `id`, `object` (= `object_type`), `created`, `model`, `choices`.
/// Returns the choices when present.
fn envelope<'v>(
    f: &mut Fields<'_>,
    v: &'v Value,
    object_type: &str,
    allow_empty: bool,
) -> Vec<&'v Value> {
    if !v.is_object() {
        f.problems
            .push(format!("body: expected an object, got {}", kind_of(v)));
        return Vec::new();
    }
    f.get(v, "", "id", Kind::String);
    f.constant(v, "", "object", object_type);
    f.get(v, "", "created", Kind::Integer);
    f.get(v, "", "model", Kind::String);
    let Some(choices) = f
        .get(v, "", "choices", Kind::Array)
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    if choices.is_empty() && !allow_empty {
        f.problems.push("choices: empty".into());
    }
    for (i, c) in choices.iter().enumerate() {
        if !c.is_object() {
            f.problems.push(format!(
                "choices[{i}]: expected an object, got {}",
                kind_of(c)
            ));
        } else if let Some(index) = f.get(c, &format!("choices[{i}]."), "index", Kind::Integer)
            && index.as_u64() != Some(i as u64)
            && choices.len() > 1
        {
            f.problems.push(format!(
                "choices[{i}].index: {index} does not match its position {i}"
            ));
        }
    }
    choices.iter().filter(|c| c.is_object()).collect()
}

/// `usage`, when present and not null: three integer counts, the total their sum.
fn usage(f: &mut Fields<'_>, v: &Value) {
    let Some(u) = v.get("usage").filter(|u| !u.is_null()) else {
        return;
    };
    if !u.is_object() {
        f.problems
            .push(format!("usage: expected an object, got {}", kind_of(u)));
        return;
    }
    let counts: Vec<Option<u64>> = ["prompt_tokens", "completion_tokens", "total_tokens"]
        .iter()
        .map(|k| f.get(u, "usage.", k, Kind::Integer).and_then(Value::as_u64))
        .collect();
    if let [Some(p), Some(c), Some(t)] = counts[..]
        && p + c != t
    {
        f.problems.push(format!(
            "usage.total_tokens: {t} is not prompt_tokens + completion_tokens = {}",
            p + c
        ));
    }
}

/// Problems of a chat completion object (`POST /v1/chat/completions`, not streamed); empty when conformant.
pub fn chat_completion(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut f = Fields {
        problems: &mut problems,
    };
    for (i, c) in envelope(&mut f, v, "chat.completion", false)
        .into_iter()
        .enumerate()
    {
        let path = format!("choices[{i}].");
        if let Some(m) = f.get(c, &path, "message", Kind::Object) {
            let mpath = format!("{path}message.");
            f.constant(m, &mpath, "role", "assistant");
            f.get(m, &mpath, "content", Kind::NullableString);
        }
        f.get(c, &path, "finish_reason", Kind::String);
    }
    usage(&mut f, v);
    problems
}

/// Problems of a text completion object (`POST /v1/completions`, not streamed); empty when conformant.
pub fn text_completion(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut f = Fields {
        problems: &mut problems,
    };
    for (i, c) in envelope(&mut f, v, "text_completion", false)
        .into_iter()
        .enumerate()
    {
        let path = format!("choices[{i}].");
        f.get(c, &path, "text", Kind::String);
        f.get(c, &path, "finish_reason", Kind::String);
    }
    usage(&mut f, v);
    problems
}

/// Problems of one streamed chat chunk (`data:` of `stream: true`); empty when conformant. Its choices may be empty
/// (the usage chunk of `stream_options.include_usage`); each present choice has `index`, a `delta` object and a
/// `finish_reason` key (null until the last chunk of that choice).
pub fn chat_chunk(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut f = Fields {
        problems: &mut problems,
    };
    for (i, c) in envelope(&mut f, v, "chat.completion.chunk", true)
        .into_iter()
        .enumerate()
    {
        let path = format!("choices[{i}].");
        f.get(c, &path, "delta", Kind::Object);
        f.get(c, &path, "finish_reason", Kind::NullableString);
    }
    usage(&mut f, v);
    problems
}

/// Problems of an error body (a 4xx answer): an `error` object with a string `message`; empty when conformant.
pub fn error_body(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut f = Fields {
        problems: &mut problems,
    };
    if let Some(e) = f.get(v, "", "error", Kind::Object) {
        f.get(e, "error.", "message", Kind::String);
    }
    problems
}

/// Problems of a models list (`GET /v1/models`): `object` = `list`, `data` an array of objects each with a string
/// `id` and `object` = `model`. Returns the problems and the ids listed.
pub fn model_list(v: &Value) -> (Vec<String>, Vec<String>) {
    let mut problems = Vec::new();
    let mut ids = Vec::new();
    let mut f = Fields {
        problems: &mut problems,
    };
    f.constant(v, "", "object", "list");
    if let Some(data) = f.get(v, "", "data", Kind::Array).and_then(Value::as_array) {
        for (i, m) in data.iter().enumerate() {
            let path = format!("data[{i}].");
            if let Some(id) = f.get(m, &path, "id", Kind::String).and_then(Value::as_str) {
                ids.push(id.to_string());
            }
            f.constant(m, &path, "object", "model");
        }
    }
    (problems, ids)
}
