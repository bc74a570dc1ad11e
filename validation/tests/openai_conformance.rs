//! End to end: `model-fleet-check openai` against a real OpenAI-compatible server, llama-cpp-python's, built from
//! PyPI by examples/validation/scripts/bootstrap.sh (run here: idempotent, seconds once built), serving a tiny
//! random-weight llama GGUF this test writes (fixtures/tiny_llama_gguf.py; no download). The protocol checks must
//! pass against the server, and fail, naming the field, against fixtures/schema_breaker.py, a proxy of ours that
//! drops required fields. The two bad-request checks fail on this server, which answers 200 and 500 where the
//! OpenAI API answers 400: the test pins that finding. Loopback only. Phase durations are printed (`--nocapture`).
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A child process killed (by its own pid) when the test ends, pass or fail.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Runs the bootstrap script and returns the venv it prints last.
fn bootstrap() -> PathBuf {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/scripts/bootstrap.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .expect("run bootstrap.sh");
    assert!(
        out.status.success(),
        "{} failed ({}): see its stderr above",
        script.display(),
        out.status
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    PathBuf::from(
        stdout
            .lines()
            .last()
            .expect("bootstrap.sh printed no venv path")
            .trim(),
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts llama-cpp-python's server on a free loopback port and waits until it accepts connections.
fn start_server(venv: &Path, model: &Path) -> (Guard, String) {
    let port = free_port();
    let log = std::fs::File::create(model.with_extension("server.log")).unwrap();
    let child = Command::new(venv.join("bin/python"))
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(model)
        .args([
            "--model_alias",
            "tiny-random",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .args(["--n_ctx", "256", "--n_threads", "2", "--verbose", "false"])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start llama_cpp.server");
    let mut guard = Guard(child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = guard.0.try_wait().unwrap() {
            let log =
                std::fs::read_to_string(model.with_extension("server.log")).unwrap_or_default();
            panic!("llama_cpp.server exited with {status} before listening:\n{log}");
        }
        assert!(
            Instant::now() < deadline,
            "llama_cpp.server did not listen on 127.0.0.1:{port} within 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (guard, format!("http://127.0.0.1:{port}"))
}

/// Starts the schema-breaking proxy in front of `upstream`, dropping `fields`.
fn start_breaker(venv: &Path, upstream: &str, fields: &[&str]) -> (Guard, String) {
    let mut child = Command::new(venv.join("bin/python"))
        .arg(fixtures().join("schema_breaker.py"))
        .arg(upstream)
        .args(fields)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start schema_breaker.py");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("schema_breaker said {line:?}"));
    let url = format!("http://127.0.0.1:{port}");
    (Guard(child), url)
}

fn check(base_url: &str) -> (Output, Vec<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_model-fleet-check"))
        .args([
            "openai",
            "--base-url",
            base_url,
            "--model",
            "tiny-random",
            "--wait-seconds",
            "60",
        ])
        .output()
        .unwrap();
    let lines = String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (out, lines)
}

fn line<'a>(lines: &'a [String], name: &str) -> &'a str {
    lines
        .iter()
        .find(|l| {
            l.split_once(':')
                .is_some_and(|(h, _)| h.ends_with(&format!(" {name}")))
        })
        .unwrap_or_else(|| panic!("no line for check {name} in {lines:#?}"))
}

/// Fields the proxy drops, and the checks that must fail with the text that names them.
type Breakage = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// The checks of the protocol itself: llama-cpp-python's server passes them.
const PROTOCOL: [&str; 4] = ["models", "chat-completion", "completion", "chat-stream"];

/// What llama-cpp-python 0.3.36 answers to the two bad requests, as the check reports it: a chat request without
/// `messages` is served (its request model defaults `messages` to an empty list), and `messages` as a string is a
/// validation error its error handler turns into 500 `internal_server_error` (only context overflow gets a 400).
const LLAMA_CPP_DEVIATIONS: [(&str, &str); 2] = [
    ("bad-request-missing-messages", "HTTP 200 (want 4xx)"),
    ("bad-request-wrong-type", "HTTP 500 (want 4xx)"),
];

#[test]
fn protocol_checks_pass_on_llama_cpp_server_and_fail_on_a_broken_schema() {
    let started = Instant::now();
    let venv = bootstrap();
    eprintln!(
        "[timing] bootstrap.sh: {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("tiny-random.gguf");
    let t = Instant::now();
    let status = Command::new(venv.join("bin/python"))
        .arg(fixtures().join("tiny_llama_gguf.py"))
        .arg(&model)
        .status()
        .unwrap();
    assert!(status.success(), "tiny_llama_gguf.py failed");
    eprintln!(
        "[timing] tiny GGUF written ({} KiB): {:.1} s",
        std::fs::metadata(&model).unwrap().len() / 1024,
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let (_server, url) = start_server(&venv, &model);
    let (out, lines) = check(&url);
    eprintln!(
        "[timing] server start + conformance check: {:.1} s\n{}",
        t.elapsed().as_secs_f64(),
        lines.join("\n")
    );
    for name in PROTOCOL {
        assert!(
            line(&lines, name).starts_with("PASS "),
            "{name} must pass on llama-cpp-python: {lines:#?}"
        );
    }
    // llama-cpp-python 0.3.36 does not reject these bad requests with a 4xx (docs/MODEL_VALIDATION.md): the check
    // says so, and the run exits 1.
    for (name, reason) in LLAMA_CPP_DEVIATIONS {
        let l = line(&lines, name);
        assert!(
            l.starts_with(&format!("FAIL {name}: {reason}")),
            "{name}: {l}"
        );
    }
    assert_eq!(
        lines.last().map(String::as_str),
        Some("summary: 4 PASS, 2 FAIL")
    );
    assert_eq!(out.status.code(), Some(1));

    // The same server behind a proxy that drops required fields: the protocol checks fail, naming each field.
    let broken: &[Breakage] = &[
        (
            &["choices.*.finish_reason"],
            &[
                ("chat-completion", "choices[0].finish_reason: missing"),
                ("completion", "choices[0].finish_reason: missing"),
                ("chat-stream", "chunk 0: choices[0].finish_reason: missing"),
            ],
        ),
        (
            &["created", "data.*.object"],
            &[
                ("models", "data[0].object: missing"),
                ("chat-completion", "created: missing"),
                ("completion", "created: missing"),
                ("chat-stream", "chunk 0: created: missing"),
            ],
        ),
    ];
    for (fields, failures) in broken {
        let t = Instant::now();
        let (_proxy, proxy_url) = start_breaker(&venv, &url, fields);
        let (out, lines) = check(&proxy_url);
        eprintln!(
            "[timing] check through a proxy dropping {fields:?}: {:.1} s\n{}",
            t.elapsed().as_secs_f64(),
            lines.join("\n")
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "dropping {fields:?} must fail the check: {lines:#?}"
        );
        for name in PROTOCOL {
            let l = line(&lines, name);
            match failures.iter().find(|(n, _)| *n == name) {
                Some((_, reason)) => {
                    assert!(
                        l.starts_with("FAIL ") && l.contains(reason),
                        "{name} must fail with {reason:?}: {l}"
                    )
                }
                None => assert!(
                    l.starts_with("PASS "),
                    "{name} is untouched by dropping {fields:?}: {l}"
                ),
            }
        }
    }
    eprintln!(
        "[timing] whole test: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
