//! Issue 21, the workload template catalog on the control plane (`make examples-check`): each manifest under
//! `examples/huggingface/` and `examples/qwen/` applies as a user would apply it (its claims, ConfigMaps and Jobs
//! included; a claim is bound to a pre-made volume, as the test cluster has no provisioner) and reaches its expected
//! state: capacity class, conditions, the node its pods land on, a run's phase. The catalog's Terraform examples
//! apply and then plan clean. (Every example also renders with `render -f`: `operator/tests/render.rs`; the older
//! examples have their own tests: `operator_examples.rs`, `provider_*.rs`, `demo.rs`.)

use std::time::Duration;

use acceptance_tests::inference::{self, create_gateway, route_resource};
use acceptance_tests::modelfleet::{bound_claim, example, wait_for_object};
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::terraform::Terraform;
use acceptance_tests::{Cluster, OperatorProcess, TestNamespace, wait_for};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::ListParams;
use serde_json::{Value, json};

/// A namespace with the catalog's prerequisites (the token Secret, the Gateway) and an operator for it.
struct Setup {
    cluster: Cluster,
    ns: TestNamespace,
    client: kube::Client,
    operator: OperatorProcess,
}

async fn setup(prefix: &str) -> anyhow::Result<Setup> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace(prefix).await?;
    let client = cluster.client().await?;
    create_gateway(&client, ns.name()).await?;
    cluster.kubectl_ok(&[
        "-n",
        ns.name(),
        "create",
        "secret",
        "generic",
        "huggingface-read-token",
        "--from-literal=token=hf_not_a_real_token",
    ])?;
    let gateway = format!("{}/shared", ns.name());
    let operator = OperatorProcess::start(
        &cluster,
        &operator_kubeconfig(&cluster)?,
        ns.name(),
        "fleet",
        &["--default-gateway", &gateway, "--resync-seconds", "2"],
        &[],
    )?;
    Ok(Setup {
        cluster,
        ns,
        client,
        operator,
    })
}

impl Setup {
    /// Applies every document of `examples/<file>` into the namespace; each claim (and each claim a Dataset names)
    /// is bound to a pre-made volume of its access mode.
    fn apply(&self, file: &str) -> anyhow::Result<()> {
        let ns = self.ns.name();
        let mut items = Vec::new();
        for doc in example(file, ns)? {
            let name = doc["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            match doc["kind"].as_str() {
                Some("PersistentVolumeClaim") => {
                    let mode = doc["spec"]["accessModes"][0]
                        .as_str()
                        .unwrap_or("ReadWriteOnce");
                    bound_claim(&self.cluster, ns, &name, mode)?;
                }
                Some("Dataset") => {
                    if let Some(claim) = doc["spec"]["pvc"]["claimName"].as_str() {
                        bound_claim(&self.cluster, ns, claim, "ReadOnlyMany")?;
                    }
                    items.push(doc);
                }
                _ => items.push(doc),
            }
        }
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        self.cluster.kubectl_apply(&list, &["--server-side"])?;
        Ok(())
    }

    /// Waits until InferenceService `name` is Ready for its current generation; returns its status.
    async fn ready(&self, name: &str) -> anyhow::Result<Value> {
        let object = wait_for_object(
            &self.client,
            self.ns.name(),
            "InferenceService",
            name,
            &format!("{name} Ready"),
            &self.operator,
            |o| {
                o["status"]["observedGeneration"] == o["metadata"]["generation"]
                    && acceptance_tests::modelfleet::condition(o, "Ready")["status"] == "True"
            },
        )
        .await?;
        Ok(object["status"].clone())
    }

    /// The nodes of the pods labelled `selector`, once there are `count` of them and all are Running.
    async fn running_on(&self, selector: &str, count: usize) -> anyhow::Result<Vec<String>> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), self.ns.name());
        wait_for(
            &format!("{count} pods {selector} running"),
            Duration::from_secs(90),
            || async {
                let list = pods.list(&ListParams::default().labels(selector)).await?;
                let phase = |p: &Pod| p.status.as_ref().and_then(|s| s.phase.clone());
                let running = list
                    .items
                    .iter()
                    .filter(|p| phase(p).as_deref() == Some("Running"));
                let nodes: Vec<String> = running
                    .filter_map(|p| p.spec.as_ref().and_then(|s| s.node_name.clone()))
                    .collect();
                Ok((nodes.len() == count).then_some(nodes))
            },
        )
        .await
    }
}

fn route_reason(status: &Value) -> String {
    status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "RouteReady")
        .map(|c| c["reason"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn huggingface_prefetch_offline_serves_from_the_shared_volume() -> anyhow::Result<()> {
    let s = setup("cat-hf-prefetch").await?;
    s.apply("huggingface/prefetch-offline.yaml")?;
    let status = s.ready("qwen-small").await?;
    assert_eq!(status["capacityClass"], "16gi");
    // 16gi fits every larger class; the test cluster has no 16gi node (the preferred class), so it lands on one of
    // the larger GPU nodes, never on a CPU node.
    let nodes = s
        .running_on("modelfleet.io/inference-service=qwen-small", 1)
        .await?;
    assert!(nodes[0].starts_with("kwok-gpu-"), "{nodes:?}");
    let deployment = s.cluster.kubectl_ok(&[
        "-n",
        s.ns.name(),
        "get",
        "deployment",
        "qwen-small",
        "-o",
        "json",
    ])?;
    let deployment: Value = serde_json::from_str(&deployment)?;
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["initContainers"][0]["name"], "prefetch");
    let server_env = pod["containers"][0]["env"].to_string();
    assert!(server_env.contains("HF_HUB_OFFLINE"), "{server_env}");
    assert!(
        !server_env.contains("huggingface-read-token"),
        "the server never sees the token: {server_env}"
    );
    Ok(())
}

#[tokio::test]
async fn huggingface_pvc_cache_is_shared_read_only_by_two_replicas() -> anyhow::Result<()> {
    let s = setup("cat-hf-pvc").await?;
    s.apply("huggingface/pvc-cache.yaml")?;
    let status = s.ready("qwen-7b").await?;
    assert_eq!(status["capacityClass"], "24gi");
    assert_eq!(status["readyReplicas"], 2);
    s.cluster
        .kubectl_ok(&["-n", s.ns.name(), "get", "job", "hf-cache-fill-qwen-7b"])?;
    let deployment = s.cluster.kubectl_ok(&[
        "-n",
        s.ns.name(),
        "get",
        "deployment",
        "qwen-7b",
        "-o",
        "json",
    ])?;
    let deployment: Value = serde_json::from_str(&deployment)?;
    let mounts =
        deployment["spec"]["template"]["spec"]["containers"][0]["volumeMounts"].to_string();
    assert!(mounts.contains(r#""readOnly":true"#), "{mounts}");
    Ok(())
}

#[tokio::test]
async fn qwen_routing_serves_two_models_behind_one_hostname() -> anyhow::Result<()> {
    let s = setup("cat-qwen-routing").await?;
    s.apply("qwen/routing.yaml")?;
    let routes = inference::api(&s.client, s.ns.name(), &route_resource());
    for (name, prefix) in [("qwen-7b", "/qwen-7b"), ("qwen-small", "/qwen-small")] {
        let status = s.ready(name).await?;
        // The Gateway exists but no controller answers here: waiting for it, never a conflict.
        assert_eq!(route_reason(&status), "NotAccepted", "{name}: {status}");
        assert_eq!(status["url"], format!("http://chat.example.test{prefix}"));
        let route = routes.get(name).await?;
        let rule = &route.data["spec"]["rules"][0];
        assert_eq!(rule["matches"][0]["path"]["value"], prefix);
        assert_eq!(
            rule["filters"][0]["urlRewrite"]["path"]["replacePrefixMatch"],
            "/"
        );
    }
    Ok(())
}

#[tokio::test]
async fn qwen_32b_fit_lands_on_the_80gi_node_with_its_kv_cache_in_the_status() -> anyhow::Result<()>
{
    let s = setup("cat-qwen-fit").await?;
    s.apply("qwen/fit-32b.yaml")?;
    let status = s.ready("qwen-32b").await?;
    assert_eq!(status["capacityClass"], "80gi");
    assert_eq!(status["perGpuMemoryGiB"], 54);
    assert_eq!(
        status["kvCache"],
        json!([{"module": "qwen2.5-32b-instruct", "totalMiB": 32768, "perGpuMiB": 16384}])
    );
    assert_eq!(
        s.running_on("modelfleet.io/inference-service=qwen-32b", 1)
            .await?,
        ["kwok-gpu-80gi"]
    );
    Ok(())
}

#[tokio::test]
async fn qwen_vision_lora_run_reads_its_dataset_and_succeeds_on_a_gpu_node() -> anyhow::Result<()> {
    let s = setup("cat-qwen-lora").await?;
    // The run's ServiceAccount, which the Dataset's allowlist names.
    s.cluster
        .kubectl_ok(&["-n", s.ns.name(), "create", "serviceaccount", "trainer"])?;
    s.apply("qwen/vision-lora.yaml")?;
    let run = wait_for_object(
        &s.client,
        s.ns.name(),
        "TrainingRun",
        "qwen-vl-lora",
        "qwen-vl-lora Succeeded",
        &s.operator,
        |o| o["status"]["phase"] == "Succeeded",
    )
    .await?;
    assert_eq!(run["status"]["capacityClass"], "16gi");
    let job = s.cluster.kubectl_ok(&[
        "-n",
        s.ns.name(),
        "get",
        "job",
        "qwen-vl-lora",
        "-o",
        "json",
    ])?;
    let job: Value = serde_json::from_str(&job)?;
    let mounts = job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"].to_string();
    assert!(
        mounts.contains("/data/captions") && mounts.contains("/checkpoints"),
        "{mounts}"
    );
    Ok(())
}

#[tokio::test]
async fn catalog_terraform_examples_apply_then_plan_clean() -> anyhow::Result<()> {
    let s = setup("cat-terraform").await?;
    bound_claim(&s.cluster, s.ns.name(), "hf-cache", "ReadWriteMany")?;
    for dir in ["hf-prefetch-offline", "hf-pvc-cache", "qwen-routing"] {
        let main_tf = std::fs::read_to_string(
            acceptance_tests::cluster::repo_root()
                .join("examples/terraform")
                .join(dir)
                .join("main.tf"),
        )?;
        let tf = Terraform::new(&main_tf)?;
        tf.write(
            "terraform.tfvars",
            &format!(
                "kubeconfig_path = \"{}\"\nnamespace = \"{}\"\n",
                s.cluster.kubeconfig.display(),
                s.ns.name()
            ),
        )?;
        tf.apply()
            .map_err(|e| e.context(format!("{dir}: apply\n{}", s.operator.log_tail())))?;
        let (code, text) = tf.plan_exit_code()?;
        assert_eq!(code, 0, "{dir}: a plan after apply shows changes:\n{text}");
        tf.ok(&["destroy", "-auto-approve", "-no-color", "-input=false"])?;
    }
    Ok(())
}
