//! Every command the READMEs give a newcomer is exercised (issue 8: "every command in the README
//! is exercised by a test or by CI"). A command is either run here, in README order, from the
//! README's own words (only the instance name and placeholders are swapped), or mapped to the test
//! or CI script that runs it, and that script is checked to contain it. A command added to a README
//! without either fails `every_readme_command_is_run_here_or_by_a_named_test`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use acceptance_tests::cluster::repo_root;
use acceptance_tests::process::workspace_binary;
use acceptance_tests::terraform::terraform_binary;

/// The READMEs a newcomer reads.
const READMES: [&str; 2] = ["README.md", "provider/README.md"];

/// What a code span or `sh` line starts with when it is a command rather than a path or a name.
const COMMAND_STARTS: [&str; 11] = [
    "make ",
    "kubectl ",
    "export ",
    "bash ",
    "cargo ",
    "terraform ",
    "model-fleet-operator ",
    "terraform-provider-modelfleet ",
    ".local/",
    "acceptance-tests/",
    "provider/scripts/",
];

/// The private instance the README's development commands run on (README: `dev`).
const INSTANCE: &str = "readme";

/// Commands run by `the_readme_commands_work_as_written`, in order: (as the README writes it,
/// as run here). Only the instance name (`dev` -> `readme`), placeholders (`FILE`, the kubeconfig
/// and context of the provider block) and the working folder of `terraform plan` differ.
const RUN_HERE: &[(&str, &str)] = &[
    (
        "make cluster-up INSTANCE=dev",
        "make cluster-up INSTANCE=readme",
    ),
    // Measured table; a second `up` reuses the running instance.
    ("make cluster-up", "make cluster-up INSTANCE=readme"),
    (
        "export KUBECONFIG=$PWD/.local/dev/kubeconfig",
        "export KUBECONFIG=$PWD/.local/readme/kubeconfig",
    ),
    (
        ".local/dev/bin/kubectl get nodes -L modelfleet.io/gpu-class",
        ".local/readme/bin/kubectl get nodes -L modelfleet.io/gpu-class",
    ),
    (
        "make cluster-status INSTANCE=dev",
        "make cluster-status INSTANCE=readme",
    ),
    (
        "kubectl apply --server-side -f charts/model-fleet-operator/crds/",
        "kubectl apply --server-side -f charts/model-fleet-operator/crds/",
    ),
    (
        "kubectl wait --for=condition=Established -f charts/model-fleet-operator/crds/",
        "kubectl wait --for=condition=Established -f charts/model-fleet-operator/crds/",
    ),
    (
        "kubectl get isvc,trun,mfds,deploy,svc,scaledobject,httproute,job,pods -o wide",
        "kubectl get isvc,trun,mfds,deploy,svc,scaledobject,httproute,job,pods -o wide",
    ),
    (
        "model-fleet-operator render -f FILE",
        "model-fleet-operator render -f examples/inference-vllm.yaml",
    ),
    (
        "model-fleet-operator render -f examples/dataset-corpus.yaml -f examples/training-pytorch.yaml",
        "model-fleet-operator render -f examples/dataset-corpus.yaml -f examples/training-pytorch.yaml",
    ),
    (
        "acceptance-tests/cluster/scripts/tf-bin.sh",
        "acceptance-tests/cluster/scripts/tf-bin.sh",
    ),
    ("make fmt", "make fmt"),
    (
        "bash provider/scripts/dev-overrides.sh",
        "bash provider/scripts/dev-overrides.sh",
    ),
    (
        "export TF_CLI_CONFIG_FILE=$PWD/.local/dev.tfrc",
        "export TF_CLI_CONFIG_FILE=$PWD/.local/dev.tfrc",
    ),
    // The README's provider block, pointed at this instance, plus one dataset (see `hcl_config`).
    (
        "terraform plan",
        "kubectl create namespace ml && (cd \"$HCL_DIR\" && terraform plan -input=false -no-color)",
    ),
    (
        "make cluster-down INSTANCE=dev",
        "make cluster-down INSTANCE=readme",
    ),
];

/// A README command exercised elsewhere.
struct Elsewhere {
    /// As the README writes it.
    command: &'static str,
    /// For a `make` target: what `make -n TARGET` must print (the script the test drives).
    make_runs: Option<&'static str>,
    /// The test or CI file that runs it ...
    file: &'static str,
    /// ... and the text in that file that does.
    needle: &'static str,
}

const fn elsewhere(
    command: &'static str,
    make_runs: Option<&'static str>,
    file: &'static str,
    needle: &'static str,
) -> Elsewhere {
    Elsewhere {
        command,
        make_runs,
        file,
        needle,
    }
}

const DEMO_TEST: &str = "acceptance-tests/tests/demo.rs";
const DEMO_SH: &str = "acceptance-tests/cluster/scripts/demo.sh";
const TEST_SH: &str = "acceptance-tests/cluster/scripts/test.sh";
const CI: &str = ".ci/run";
const PROVIDER_CLI_TEST: &str = "provider/tests/terraform_cli.rs";

const ELSEWHERE: &[Elsewhere] = &[
    elsewhere("make demo", Some("demo.sh up"), DEMO_TEST, "demo(\"up\")"),
    elsewhere(
        "make demo-down",
        Some("demo.sh down"),
        DEMO_TEST,
        "demo(\"down\")",
    ),
    elsewhere("make test", Some("test.sh"), CI, "make test"),
    elsewhere("make bootstrap", Some("bootstrap.sh"), CI, "make bootstrap"),
    elsewhere("make lint", Some("cargo clippy"), CI, "make lint"),
    // `make test` runs these unit tests too.
    elsewhere(
        "make test-unit",
        Some("cargo test --workspace --lib --bins"),
        TEST_SH,
        "cargo test --workspace",
    ),
    elsewhere(
        "make provider-install",
        Some("provider/scripts/install.sh"),
        PROVIDER_CLI_TEST,
        "scripts/install.sh",
    ),
    elsewhere(
        "bash provider/scripts/install.sh",
        None,
        PROVIDER_CLI_TEST,
        "scripts/install.sh",
    ),
    elsewhere(
        "terraform init -plugin-dir=.local/terraform-mirror",
        None,
        PROVIDER_CLI_TEST,
        "-plugin-dir=",
    ),
    elsewhere(
        "terraform-provider-modelfleet --debug",
        None,
        PROVIDER_CLI_TEST,
        ".arg(\"--debug\")",
    ),
    // CI is `bash .ci/run`; it runs the README's test command.
    elsewhere("bash .ci/run", None, CI, "make test"),
    elsewhere("cargo build", None, TEST_SH, "cargo build"),
    elsewhere(
        "cargo test --workspace",
        None,
        TEST_SH,
        "cargo test --workspace",
    ),
    elsewhere(
        "cargo test -p terraform-provider-modelfleet",
        None,
        TEST_SH,
        "cargo test --workspace",
    ),
    elsewhere(
        "cargo test -p acceptance-tests --test provider_dataset",
        None,
        TEST_SH,
        "cargo test --workspace",
    ),
    // The demo prints these and its test runs them from its output.
    elsewhere(
        "export KUBECONFIG=.local/demo/kubeconfig",
        None,
        DEMO_TEST,
        "export KUBECONFIG=",
    ),
    elsewhere("terraform init", None, DEMO_SH, "\"$tf\" init"),
    elsewhere("terraform output", None, DEMO_SH, "\"$tf\" output"),
    elsewhere("terraform destroy", None, DEMO_SH, "\"$tf\" destroy"),
    elsewhere(
        "terraform import modelfleet_inference.chat ml/chat",
        None,
        "acceptance-tests/tests/provider_inference.rs",
        "\"modelfleet_inference.echo\",\n        &format!(\"{ns}/echo2\"),",
    ),
    elsewhere(
        "model-fleet-operator run",
        None,
        "acceptance-tests/src/process.rs",
        "cmd.arg(\"run\")",
    ),
];

/// Commands in a README: lines of ```sh blocks (comments dropped) and inline code spans that start
/// like a command ([`COMMAND_STARTS`]) and have an argument or are a script (`*.sh`).
fn commands(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = if fence.is_some() { None } else { Some(info) };
            continue;
        }
        match fence {
            Some("sh") => {
                let command = trimmed.split(" #").next().unwrap_or("").trim();
                if !command.is_empty() && !command.starts_with('#') {
                    found.insert(command.to_owned());
                }
            }
            Some(_) => {}
            None => {
                for span in line.split('`').skip(1).step_by(2) {
                    let is_command = COMMAND_STARTS.iter().any(|s| span.starts_with(s))
                        && (span.contains(' ') || span.ends_with(".sh"));
                    if is_command {
                        found.insert(span.to_owned());
                    }
                }
            }
        }
    }
    found
}

fn readme_commands() -> BTreeSet<String> {
    READMES
        .iter()
        .flat_map(|readme| commands(&read(readme)))
        .collect()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The README's ```hcl provider block, pointed at instance [`INSTANCE`], plus a dataset so the plan
/// has something to read through the provider's connection.
fn hcl_config(kubeconfig: &Path) -> String {
    let readme = read("README.md");
    let block = readme
        .split("```hcl\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has a ```hcl block");
    assert!(
        block.contains("\"~/.kube/config\"") && block.contains("\"prod-gpu\""),
        "the README's provider block changed; update hcl_config:\n{block}"
    );
    let block = block
        .replace("~/.kube/config", &kubeconfig.display().to_string())
        .replace("prod-gpu", INSTANCE);
    format!(
        "{block}\nresource \"modelfleet_dataset\" \"readme\" {{\n  name    = \"readme\"\n  version = \"1\"\n  source {{\n    uri = \"s3://datasets/readme/\"\n  }}\n}}\n"
    )
}

#[test]
fn commands_are_found_in_code_spans_and_sh_blocks() {
    let text = "Run `make demo` or `make cluster-up INSTANCE=x`, see `.local/dev/` and `terraform`.\n\
                ```sh\nmake test   # all tests\n# a comment\n```\n\
                ```hcl\nprovider \"x\" {}\n```\n`scripts/x.sh` `acceptance-tests/a.sh`\n";
    let found: Vec<String> = commands(text).into_iter().collect();
    assert_eq!(
        found,
        [
            "acceptance-tests/a.sh",
            "make cluster-up INSTANCE=x",
            "make demo",
            "make test"
        ]
    );
}

#[test]
fn every_readme_command_is_run_here_or_by_a_named_test() {
    let mut problems = Vec::new();
    for command in readme_commands() {
        let here = RUN_HERE.iter().any(|(c, _)| *c == command);
        let there = ELSEWHERE.iter().any(|e| e.command == command);
        if !here && !there {
            problems.push(format!(
                "`{command}` is in a README but not exercised: add it to RUN_HERE or ELSEWHERE in {}",
                file!()
            ));
        }
    }
    let all = readme_commands();
    for stale in RUN_HERE
        .iter()
        .map(|(c, _)| *c)
        .chain(ELSEWHERE.iter().map(|e| e.command))
        .filter(|c| !all.contains(*c))
    {
        problems.push(format!(
            "`{stale}` is no longer in a README: remove it from {}",
            file!()
        ));
    }
    for e in ELSEWHERE {
        if !read(e.file).contains(e.needle) {
            problems.push(format!(
                "`{}` is said to be run by {}, which no longer contains {:?}",
                e.command, e.file, e.needle
            ));
        }
        if let Some(script) = e.make_runs {
            let target = e.command.trim_start_matches("make ");
            let out = Command::new("make")
                .args(["-n", target])
                .current_dir(repo_root())
                .output()
                .expect("make -n");
            let printed = String::from_utf8_lossy(&out.stdout);
            if !out.status.success() || !printed.contains(script) {
                problems.push(format!(
                    "`make -n {target}` should run {script}, printed: {printed}{}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

struct Down;
impl Drop for Down {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
            .args(["down", INSTANCE])
            .output();
    }
}

#[test]
fn the_readme_commands_work_as_written() {
    let _down = Down;
    let root = repo_root();
    let hcl_dir = tempfile::tempdir().unwrap();
    std::fs::write(
        hcl_dir.path().join("main.tf"),
        hcl_config(&root.join(".local").join(INSTANCE).join("kubeconfig")),
    )
    .unwrap();
    // `kubectl`, `terraform` and `model-fleet-operator` on PATH, as a user would have them.
    let tools = tempfile::tempdir().unwrap();
    let link = |name: &str, target: &Path| {
        std::os::unix::fs::symlink(target, tools.path().join(name)).unwrap();
    };
    link(
        "kubectl",
        &root.join(".local").join(INSTANCE).join("bin/kubectl"),
    );
    link("terraform", &terraform_binary().unwrap());
    link(
        "model-fleet-operator",
        &workspace_binary("model-fleet-operator").unwrap(),
    );

    let readme = readme_commands();
    let mut script = String::from("set -euo pipefail\nexec 2>&1\n");
    for (as_written, run_as) in RUN_HERE {
        assert!(readme.contains(*as_written), "{as_written} not in a README");
        script.push_str(&format!(
            "echo '>>> {as_written}'\n{run_as} || {{ echo 'FAILED: {as_written}' >&2; exit 1; }}\n"
        ));
    }
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(&root)
        .env(
            "PATH",
            format!(
                "{}:{}",
                tools.path().display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .env("HCL_DIR", hcl_dir.path())
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .env_remove("KUBECONFIG")
        .env_remove("TF_CLI_CONFIG_FILE")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    let section = |as_written: &str| -> &str {
        let start = text
            .find(&format!(">>> {as_written}\n"))
            .unwrap_or_else(|| panic!("no output for {as_written}:\n{text}"));
        let rest = &text[start + 5 + as_written.len()..];
        &rest[..rest.find(">>> ").unwrap_or(rest.len())]
    };
    let nodes = section(".local/dev/bin/kubectl get nodes -L modelfleet.io/gpu-class");
    assert!(
        nodes
            .lines()
            .any(|l| l.starts_with("kwok-gpu-80gi") && l.trim_end().ends_with("80gi")),
        "{nodes}"
    );
    assert!(
        section("make cluster-status INSTANCE=dev").contains("kube-apiserver"),
        "{text}"
    );
    assert!(
        section("kubectl apply --server-side -f charts/model-fleet-operator/crds/")
            .contains("inferenceservices.modelfleet.io serverside-applied"),
        "{text}"
    );
    assert!(
        section("model-fleet-operator render -f FILE").contains("kind: Deployment"),
        "{text}"
    );
    assert!(
        section(
            "model-fleet-operator render -f examples/dataset-corpus.yaml -f examples/training-pytorch.yaml"
        )
        .contains("kind: Job"),
        "{text}"
    );
    assert!(
        section("terraform plan").contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{text}"
    );
    assert!(
        !root.join(".local").join(INSTANCE).exists(),
        "make cluster-down left .local/{INSTANCE}"
    );
}
