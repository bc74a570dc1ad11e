//! Issue 18, security: secrets stay where they are. Canary values (random per run) are planted in a Secret that a
//! workload's env refers to (the Hugging Face token pattern) and in the provider's bearer token, then looked for
//! everywhere they must not be:
//! * the operator never reads a Secret: the audit log (the local policy records every request on `secrets`, reads
//!   included) shows no request on secrets by the operator's user while it reconciles a service that refers to one,
//!   and the value appears in neither the custom resource, the Deployment nor the operator's log;
//! * the provider's `token` (authenticating as a ServiceAccount) and the Secret's value never reach the Terraform
//!   state, the plan or apply output, `terraform show -json`, or the provider's debug log.

use std::time::Duration;

use acceptance_tests::inference::{api, apply, isvc_resource, operator};
use acceptance_tests::process::OPERATOR_USER;
use acceptance_tests::{Cluster, Terraform, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use serde_json::json;

/// A value nobody else writes: `prefix` and a random suffix.
fn canary(prefix: &str) -> String {
    format!("{prefix}-canary-{:016x}", rand_u64())
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    hasher.finish()
}

/// Creates Secret `name` with `key: value` in `ns`.
fn create_secret(cluster: &Cluster, ns: &str, name: &str, key: &str, value: &str) {
    cluster
        .kubectl_ok(&[
            "create",
            "secret",
            "generic",
            name,
            "-n",
            ns,
            &format!("--from-literal={key}={value}"),
        ])
        .expect("create the Secret");
}

#[tokio::test]
async fn the_operator_never_reads_a_secret_and_its_value_is_nowhere() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("secrets-operator").await?;
    let client = cluster.client().await?;
    let value = canary("hf");
    let mark = cluster.audit_log().mark()?;
    create_secret(
        &cluster,
        ns.name(),
        "huggingface-read-token",
        "token",
        &value,
    );
    let operator = operator(&cluster, ns.name(), &[])?;
    let spec = json!({
        "model": {"name": "echo"},
        "container": {
            "image": "hashicorp/http-echo:1.0",
            "args": ["-listen=:8080"],
            "port": 8080,
            "env": [{"name": "HF_TOKEN",
                     "secretKeyRef": {"name": "huggingface-read-token", "key": "token"}}],
        },
        "replicas": {"min": 1, "max": 1},
    });
    let isvcs = api(&client, ns.name(), &isvc_resource());
    apply(&isvcs, "echo", spec).await?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let deployment = wait_for("the Deployment", Duration::from_secs(60), || async {
        Ok(deployments.get_opt("echo").await?)
    })
    .await
    .map_err(|e| e.context(operator.log_tail()))?;
    // The reference is passed through, never resolved.
    let env =
        &serde_json::to_value(&deployment)?["spec"]["template"]["spec"]["containers"][0]["env"];
    assert_eq!(
        env[0]["valueFrom"]["secretKeyRef"],
        json!({"name": "huggingface-read-token", "key": "token"}),
        "{env}"
    );
    // A few reconciles (the status follows the rollout) before looking.
    tokio::time::sleep(Duration::from_secs(5)).await;

    let requests = mark.requests_on("secrets")?;
    let by_operator: Vec<_> = requests
        .iter()
        .filter(|e| e.effective_user() == OPERATOR_USER)
        .map(|e| format!("{} {}", e.verb, e.request_u_r_i))
        .collect();
    assert!(
        by_operator.is_empty(),
        "the operator read Secrets: {by_operator:?}"
    );
    // The policy does record requests on secrets: the kubectl create above is one.
    assert!(
        requests.iter().any(|e| e.verb == "create"),
        "the audit log recorded no request on secrets at all: is the policy's secrets rule gone?"
    );
    let object = isvcs.get("echo").await?;
    let places = [
        ("the InferenceService", serde_json::to_string(&object)?),
        (
            "the Deployment",
            serde_json::to_string(&deployments.get("echo").await?)?,
        ),
        (
            "the operator's log",
            std::fs::read_to_string(&operator.log)?,
        ),
    ];
    for (place, text) in places {
        assert!(!text.contains(&value), "the Secret's value is in {place}");
    }
    Ok(())
}

#[tokio::test]
async fn the_provider_token_and_secret_values_never_reach_state_plan_or_logs() -> anyhow::Result<()>
{
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("secrets-provider").await?;
    let value = canary("hf");
    create_secret(
        &cluster,
        ns.name(),
        "huggingface-read-token",
        "token",
        &value,
    );
    // The provider authenticates with a bearer token: a ServiceAccount's (cluster-admin here: the provider also reads
    // the cluster's identity, a cluster-scoped object).
    cluster.kubectl_ok(&["create", "serviceaccount", "deployer", "-n", ns.name()])?;
    let binding = format!("{}-deployer", ns.name());
    cluster.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={}:deployer", ns.name()),
    ])?;
    let token = cluster
        .kubectl_ok(&[
            "create",
            "token",
            "deployer",
            "-n",
            ns.name(),
            "--duration=1h",
        ])?
        .trim()
        .to_owned();
    let config: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&cluster.kubeconfig)?)?;
    let server = config["clusters"][0]["cluster"]["server"]
        .as_str()
        .expect("server")
        .to_owned();
    let ca = cluster.dir.join("pki/ca.crt");
    assert!(ca.exists(), "{}", ca.display());
    let provider = format!(
        r#"
terraform {{
  required_providers {{
    modelfleet = {{ source = "modelfleet/modelfleet" }}
  }}
}}

provider "modelfleet" {{
  host                   = "{server}"
  token                  = "{token}"
  cluster_ca_certificate = file("{ca}")
  namespace              = "{ns}"
}}
"#,
        ca = ca.display(),
        ns = ns.name(),
    );
    let main_tf = format!(
        r#"{provider}
resource "modelfleet_inference" "echo" {{
  name = "echo"
  model {{
    name = "echo"
  }}
  container {{
    image = "hashicorp/http-echo:1.0"
    args  = ["-listen=:8080"]
    port  = 8080
    env {{
      name = "HF_TOKEN"
      secret_key_ref {{
        name = "huggingface-read-token"
        key  = "token"
      }}
    }}
  }}
  replicas {{
    min = 1
    max = 1
  }}
}}
"#
    );
    let tf = Terraform::new(&main_tf)?;
    let log = tf.path().join("provider.log");
    let with_log = |args: &[&str]| {
        let out = tf
            .command(args)
            .env("TF_LOG_PROVIDER", "DEBUG")
            .env("TF_LOG_PATH", &log)
            .output()
            .expect("run terraform");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "terraform {args:?} failed:\n{text}");
        text
    };
    let applied = with_log(&["apply", "-auto-approve", "-input=false", "-no-color"]);
    let planned = with_log(&["plan", "-input=false", "-no-color"]);
    let shown = tf.ok(&["show", "-json"])?;
    let state = std::fs::read_to_string(tf.path().join("terraform.tfstate"))?;
    let provider_log = std::fs::read_to_string(&log)?;
    assert!(!provider_log.is_empty(), "the provider wrote no debug log");
    for (place, text) in [
        ("the apply output", &applied),
        ("the plan output", &planned),
        ("terraform show -json", &shown),
        ("the state", &state),
        ("the provider's debug log", &provider_log),
    ] {
        assert!(!text.contains(&token), "the provider token is in {place}");
        assert!(!text.contains(&value), "the Secret's value is in {place}");
    }
    // The reference itself is in the state (it is configuration, not a secret).
    assert!(state.contains("huggingface-read-token"), "{state}");
    tf.ok(&["destroy", "-auto-approve", "-input=false", "-no-color"])?;
    cluster.kubectl_ok(&["delete", "clusterrolebinding", &binding])?;
    Ok(())
}
