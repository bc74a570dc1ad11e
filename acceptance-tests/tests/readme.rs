//! Every command the READMEs give a newcomer is exercised (issue 8: "every command in the README
//! is exercised by a test or by CI"). A command is either run here, in README order, from the
//! README's own words (only the instance name and placeholders are swapped), or mapped to the test
//! or CI script that runs it, and that script is checked to contain it. A command added to a README
//! without either fails `every_readme_command_is_run_here_or_by_a_named_test`.
//!
//! The documentation site (issue 20) is held to the same rule, block by block: every shell block
//! (```sh, ```shell, ```bash, ```console) of a page under `docs/` either has every command mapped
//! the same way (RUN_HERE or ELSEWHERE), or is marked by an HTML comment right above it,
//! `<!-- not run: REASON -->`, saying why it cannot run here (a cloud, kind, the reader's own
//! cluster). Pages this project does not hand-edit (generated, or owned by another change) are
//! marked in [`MARKED_HERE`] instead. An unmarked, untested block fails
//! `every_docs_command_block_is_run_or_marked`.

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
        "kubectl get isvc,trun,mfds,deploy,svc,scaledobject,httproute,job,pods -n demo -o wide",
        "kubectl get isvc,trun,mfds,deploy,svc,scaledobject,httproute,job,pods -n demo -o wide",
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

/// The documentation site's pages: every `.md` under `docs/` (its build output left out).
const DOCS_DIR: &str = "docs";

/// Shell blocks of pages that carry no mark of their own: (page, the block's first command, why it is not run).
/// Generated pages are rewritten by `make docs-generate`; GPU_CAPACITY.md is edited by another change, so its
/// marks live here until it carries its own.
const MARKED_HERE: &[(&str, &str, &str)] = &[
    (
        "docs/GPU_CAPACITY.md",
        "kubectl label node kind-worker2 modelfleet.io/gpu-class=80gi nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3",
        "a kind cluster's worker node; the local control plane's kwok GPU nodes get these labels, taint and capacity from their manifests",
    ),
    (
        "docs/GPU_CAPACITY.md",
        "kubectl label node gpu-01 modelfleet.io/gpu-class=80gi",
        "a bare-metal GPU node of the reader's cluster",
    ),
    (
        "docs/GPU_CAPACITY.md",
        "gcloud container node-pools create h100 --cluster my-cluster \\",
        "needs a GKE cluster and gcloud credentials",
    ),
    (
        "docs/resources/training.md",
        "terraform import modelfleet_training.example ml/example",
        "no test imports a TrainingRun; import is the shared code of resources/object.rs, run end to end for modelfleet_inference and modelfleet_dataset",
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
const CHART_INSTALL_TEST: &str = "acceptance-tests/tests/chart_install.rs";
const REAL_NODE_TEST: &str = "acceptance-tests/tests/real_node.rs";
const DEMO_SH: &str = "acceptance-tests/cluster/scripts/demo.sh";
const TEST_SH: &str = "acceptance-tests/cluster/scripts/test.sh";
const CI: &str = ".ci/run";
const PROVIDER_CLI_TEST: &str = "provider/tests/terraform_cli.rs";
const INFRA_TEST: &str = "acceptance-tests/tests/infra.rs";

const ELSEWHERE: &[Elsewhere] = &[
    // docs/MODEL_VALIDATION.md (issue 21): the OpenAI check end to end against llama-cpp-python's server.
    elsewhere(
        "make validation-check",
        Some("cargo test -p model-fleet-check --test openai_conformance"),
        "validation/tests/openai_conformance.rs",
        "fn protocol_checks_pass_on_llama_cpp_server_and_fail_on_a_broken_schema",
    ),
    // The chart install of the README's real-cluster section: the install test runs helm upgrade --install with the
    // image of make image; every profile is rendered and applied (server-side dry-run) by chart.rs.
    elsewhere(
        "make image",
        Some("images/operator.sh build"),
        CHART_INSTALL_TEST,
        "operator_image(&[\"build\"])",
    ),
    elsewhere(
        "make image && make image-push REGISTRY=ghcr.io/your-org",
        None,
        CHART_INSTALL_TEST,
        "operator_image(&[\"push\"",
    ),
    elsewhere(
        "helm upgrade --install model-fleet charts/model-fleet-operator \\",
        None,
        CHART_INSTALL_TEST,
        "\"upgrade\",\n            \"--install\"",
    ),
    elsewhere(
        "--namespace model-fleet-system --create-namespace --set profile=microk8s \\",
        None,
        "acceptance-tests/tests/chart.rs",
        "every_profile_applies_with_server_side_dry_run",
    ),
    elsewhere(
        "--set image.repository=ghcr.io/your-org/model-fleet-operator",
        None,
        "acceptance-tests/src/chart.rs",
        "image.repository=",
    ),
    // The demo prints it; its test runs what it printed.
    elsewhere("kubectl scale", None, DEMO_TEST, "wake_vllm_as_printed"),
    elsewhere(
        "kubectl scale deployment/vllm -n demo --replicas=1",
        None,
        DEMO_TEST,
        "wake_vllm_as_printed",
    ),
    elsewhere("make demo", Some("demo.sh up"), DEMO_TEST, "demo(\"up\")"),
    elsewhere(
        "make demo-down",
        Some("demo.sh down"),
        DEMO_TEST,
        "demo(\"down\")",
    ),
    elsewhere("make test", Some("test.sh"), CI, "make test"),
    // The fault drills: CI runs the bounded subset after make test; make drills runs the same script with every drill.
    elsewhere(
        "make drills-ci",
        Some("drills.sh drills-ci"),
        CI,
        "make drills-ci",
    ),
    elsewhere(
        "make drills",
        Some("drills.sh drills"),
        CI,
        "make drills-ci",
    ),
    // Without a container engine (this machine, CI) the refusal is what runs.
    elsewhere(
        "make kind-up",
        Some("kind.sh up"),
        INFRA_TEST,
        "cmd.arg(\"kind-up\")",
    ),
    elsewhere(
        "make kind-status",
        Some("kind.sh status"),
        INFRA_TEST,
        "(\"kind-status\", ",
    ),
    elsewhere(
        "make kind-down",
        Some("kind.sh down"),
        INFRA_TEST,
        "(\"kind-down\", ",
    ),
    elsewhere(
        "terraform fmt -check",
        None,
        "acceptance-tests/infra/scripts/check.sh",
        "fmt -check -recursive",
    ),
    elsewhere(
        "terraform validate",
        None,
        "acceptance-tests/infra/scripts/check.sh",
        "validate -no-color",
    ),
    elsewhere(
        "make infra-check",
        Some("check.sh"),
        INFRA_TEST,
        "scripts/check.sh",
    ),
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
    // docs/OPENTOFU.md: make test reruns the provider's end-to-end binaries with OpenTofu.
    elsewhere(
        "MODEL_FLEET_TF_CLI=tofu cargo test -p acceptance-tests --test provider_dataset",
        None,
        TEST_SH,
        "MODEL_FLEET_TF_CLI=tofu cargo test --workspace --no-fail-fast \"${provider_e2e[@]}\"",
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
    // The real node (issue 14): its script, our image helper, the loopback route to a Service.
    elsewhere(
        "acceptance-tests/cluster/scripts/node.sh",
        None,
        "acceptance-tests/src/real_node.rs",
        "acceptance-tests/cluster/scripts/node.sh",
    ),
    elsewhere(
        "images/image.sh build BINARY ENTRYPOINT modelfleet.local/NAME:TAG IMAGE.tar",
        None,
        REAL_NODE_TEST,
        "image_sh(\"build\"",
    ),
    elsewhere(
        "images/image.sh load INSTANCE IMAGE.tar modelfleet.local/NAME:TAG",
        None,
        REAL_NODE_TEST,
        "image_sh(\"load\"",
    ),
    elsewhere(
        "kubectl port-forward -n demo service/echo 8080:80",
        None,
        DEMO_TEST,
        "\"port-forward\", \"-n\", \"demo\", \"service/echo\"",
    ),
    elsewhere(
        "model-fleet-operator slack",
        None,
        "acceptance-tests/src/slack_bot.rs",
        "\"slack\"",
    ),
    elsewhere(
        "model-fleet-operator run",
        None,
        "acceptance-tests/src/process.rs",
        "cmd.arg(\"run\")",
    ),
    // The documentation site (issue 20).
    elsewhere(
        "make docs-bootstrap",
        Some("docs.sh bootstrap"),
        CI,
        "make docs-bootstrap",
    ),
    elsewhere(
        "make docs-build",
        Some("docs.sh build"),
        CI,
        "make docs-build",
    ),
    // make docs-generate runs the staleness tests in their update mode.
    elsewhere(
        "make docs-generate",
        Some("UPDATE_DOCS=1 cargo test -p model-fleet-api --test reference_docs"),
        "operator/api/tests/reference_docs.rs",
        "UPDATE_DOCS",
    ),
    // The README test renders this file for `model-fleet-operator render -f FILE`.
    elsewhere(
        "model-fleet-operator render -f examples/inference-vllm.yaml",
        None,
        "acceptance-tests/tests/readme.rs",
        "\"model-fleet-operator render -f examples/inference-vllm.yaml\"",
    ),
    // The registry pages' import sections.
    elsewhere(
        "terraform import modelfleet_inference.example ml/example",
        None,
        "acceptance-tests/tests/provider_inference.rs",
        "\"import\",\n        \"-no-color\",\n        \"modelfleet_inference.echo\"",
    ),
    elsewhere(
        "terraform import modelfleet_dataset.example ml/example",
        None,
        "acceptance-tests/tests/provider_dataset.rs",
        "\"import\",\n        \"-no-color\",\n        \"-input=false\",\n        \"modelfleet_dataset.corpus\"",
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

/// A shell block of a docs page.
#[derive(Debug, PartialEq)]
struct ShellBlock {
    /// 1-based line of its opening fence.
    line: usize,
    /// Its command lines (comments dropped), as [`commands`] reads `sh` blocks.
    commands: Vec<String>,
    /// The reason of the `<!-- not run: REASON -->` comment right above it.
    not_run: Option<String>,
}

/// The shell blocks of a Markdown page, with the mark right above each (the last non-blank line before the fence).
fn shell_blocks(text: &str) -> Vec<ShellBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<ShellBlock> = None;
    let mut in_other_fence = false;
    let mut last_text = "";
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            if let Some(block) = open.take() {
                blocks.push(block);
            } else if in_other_fence {
                in_other_fence = false;
            } else if ["sh", "shell", "bash", "console"].contains(&info.trim()) {
                let not_run = last_text
                    .strip_prefix("<!-- not run:")
                    .and_then(|r| r.strip_suffix("-->"))
                    .map(|r| r.trim().to_owned());
                open = Some(ShellBlock {
                    line: i + 1,
                    commands: Vec::new(),
                    not_run,
                });
            } else {
                in_other_fence = true;
            }
            continue;
        }
        if let Some(block) = open.as_mut() {
            let command = trimmed.split(" #").next().unwrap_or("").trim();
            let command = command.strip_prefix("$ ").unwrap_or(command);
            if !command.is_empty() && !command.starts_with('#') {
                block.commands.push(command.to_owned());
            }
        } else if !trimmed.is_empty() {
            last_text = trimmed;
        }
    }
    blocks
}

/// Every Markdown page of the site (relative to the repository), sorted.
fn docs_pages() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "_build") {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let root = repo_root();
    let mut pages = Vec::new();
    walk(&root.join(DOCS_DIR), &root, &mut pages);
    pages.sort();
    pages
}

/// Commands of the docs' shell blocks that are not marked (those must be run or mapped).
fn docs_commands() -> BTreeSet<String> {
    docs_pages()
        .iter()
        .flat_map(|page| shell_blocks(&read(page)))
        .filter(|b| b.not_run.is_none())
        .flat_map(|b| b.commands)
        .collect()
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
    let mut all = readme_commands();
    all.extend(docs_commands());
    for stale in RUN_HERE
        .iter()
        .map(|(c, _)| *c)
        .chain(ELSEWHERE.iter().map(|e| e.command))
        .filter(|c| !all.contains(*c))
    {
        problems.push(format!(
            "`{stale}` is no longer in a README or a docs page: remove it from {}",
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

#[test]
fn shell_blocks_carry_the_mark_right_above_them() {
    let text = "Intro.\n\n<!-- not run: needs a cloud -->\n```sh\ngcloud x \\\n  --y   # why\n```\n\n```hcl\nx = 1\n```\n\
                ```shell\n$ terraform import a.b ns/n\n```\n";
    assert_eq!(
        shell_blocks(text),
        [
            ShellBlock {
                line: 4,
                commands: vec!["gcloud x \\".into(), "--y".into()],
                not_run: Some("needs a cloud".into()),
            },
            ShellBlock {
                line: 12,
                commands: vec!["terraform import a.b ns/n".into()],
                not_run: None,
            },
        ]
    );
}

#[test]
fn every_docs_command_block_is_run_or_marked() {
    let mut problems = Vec::new();
    let mut used_marks = BTreeSet::new();
    for page in docs_pages() {
        for block in shell_blocks(&read(&page)) {
            let first = block.commands.first().map_or("", String::as_str);
            if let Some(reason) = &block.not_run {
                if reason.is_empty() {
                    problems.push(format!(
                        "{page}:{}: `<!-- not run: -->` needs a reason",
                        block.line
                    ));
                }
                continue;
            }
            if let Some(mark) = MARKED_HERE
                .iter()
                .find(|(p, c, _)| *p == page && *c == first)
            {
                used_marks.insert((mark.0, mark.1));
                continue;
            }
            for command in &block.commands {
                let here = RUN_HERE.iter().any(|(c, _)| c == command);
                let there = ELSEWHERE.iter().any(|e| e.command == command);
                if !here && !there {
                    problems.push(format!(
                        "{page}:{}: `{command}` is neither run by a test (RUN_HERE or ELSEWHERE in {}) nor marked \
                         with `<!-- not run: REASON -->` above its block",
                        block.line,
                        file!()
                    ));
                }
            }
        }
    }
    for (page, first, _) in MARKED_HERE {
        if !used_marks.contains(&(*page, *first)) {
            problems.push(format!(
                "MARKED_HERE names no block of {page} starting with `{first}`: remove it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The troubleshooting page has an entry (a definition term) for every reason of the conditions table, which
/// `operator/api/tests/vocabulary.rs` keeps equal to the code's `Reason` enum.
#[test]
fn troubleshooting_explains_every_condition_reason() {
    let conditions = read("docs/CONDITIONS.md");
    let table = conditions
        .split("## Reasons")
        .nth(1)
        .expect("CONDITIONS.md has a Reasons section");
    let reasons: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert!(reasons.len() > 20, "{reasons:?}");
    let page = read("docs/troubleshooting.md");
    let missing: Vec<&&str> = reasons
        .iter()
        .filter(|r| !page.lines().any(|l| l == format!("`{r}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/troubleshooting.md has no entry for {missing:?}"
    );
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
