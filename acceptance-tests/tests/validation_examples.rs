//! The validation Jobs of issue 21 (`examples/validation/`, docs/MODEL_VALIDATION.md): each is accepted by the
//! control plane's API server (server-side dry-run, then a real apply read back), and each agrees with what it
//! checks: the GPU Job's class, GPU limit and flags name the same capacity class and count, and the OpenAI Job points
//! at the Service the operator makes for the InferenceService of examples/inference-vllm.yaml, with its served name.

use acceptance_tests::Cluster;
use acceptance_tests::cluster::repo_root;
use model_fleet_api::capacity::CLASSES;
use serde_json::Value;

const GPU_CHECK: &str = "examples/validation/gpu-check.yaml";
const OPENAI_CHECK: &str = "examples/validation/openai-check.yaml";

fn load(path: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join(path)).unwrap();
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The value of `--NAME VALUE` or `--NAME=VALUE` in a container's args.
fn flag(args: &[String], name: &str) -> Option<String> {
    let long = format!("--{name}");
    args.iter().enumerate().find_map(|(i, a)| {
        if *a == long {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix(&format!("{long}=")).map(str::to_string)
        }
    })
}

fn container_args(container: &Value) -> Vec<String> {
    container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_gpu_job_asks_for_what_it_checks() {
    let job = load(GPU_CHECK);
    assert_eq!(
        (job["apiVersion"].as_str(), job["kind"].as_str()),
        (Some("batch/v1"), Some("Job"))
    );
    let spec = &job["spec"]["template"]["spec"];
    let class = spec["nodeSelector"]["modelfleet.io/gpu-class"]
        .as_str()
        .expect("a gpu-class nodeSelector");
    let usable = CLASSES
        .iter()
        .find(|c| c.name == class)
        .expect("a known class")
        .usable_mib;
    let check = &spec["containers"][0];
    let args = container_args(check);
    assert_eq!(args[0], "gpu");
    assert_eq!(
        flag(&args, "min-memory-mib"),
        Some(usable.to_string()),
        "the usable MiB of class {class}"
    );
    let limit = check["resources"]["limits"]["nvidia.com/gpu"]
        .as_u64()
        .expect("an nvidia.com/gpu limit");
    assert_eq!(
        flag(&args, "expect-count"),
        Some(limit.to_string()),
        "--expect-count is the GPU limit"
    );
    // The check binary comes from the init container into the volume the check runs from.
    let install = &spec["initContainers"][0];
    assert_eq!(container_args(install), ["install", "/check"]);
    assert_eq!(check["command"][0], "/check/model-fleet-check");
}

#[test]
fn the_openai_job_points_at_the_inference_service() {
    let job = load(OPENAI_CHECK);
    let isvc = load("examples/inference-vllm.yaml");
    let args = container_args(&job["spec"]["template"]["spec"]["containers"][0]);
    assert_eq!(args[0], "openai");
    let (name, namespace) = (
        isvc["metadata"]["name"].as_str().unwrap(),
        isvc["metadata"]["namespace"].as_str().unwrap(),
    );
    // The operator's Service: named after the InferenceService, port 80 (render/service.rs SERVICE_PORT).
    assert_eq!(
        flag(&args, "base-url"),
        Some(format!("http://{name}.{namespace}.svc.cluster.local"))
    );
    assert_eq!(
        flag(&args, "model").as_deref(),
        isvc["spec"]["model"]["servedName"].as_str()
    );
    assert_eq!(job["metadata"]["namespace"], isvc["metadata"]["namespace"]);
}

/// Both Jobs, moved to a test namespace, pass server-side dry-run and then a real apply; the stored Jobs keep the
/// check's arguments.
#[tokio::test]
async fn both_jobs_apply_on_the_local_control_plane() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.namespace("validation-jobs").await?;
    for path in [GPU_CHECK, OPENAI_CHECK] {
        let mut job = load(path);
        job["metadata"]["namespace"] = Value::from(ns.name());
        let name = job["metadata"]["name"].as_str().unwrap();
        let dry = cluster.kubectl_apply(
            &job,
            &[
                "--server-side",
                "--dry-run=server",
                "--field-manager=validation-test",
            ],
        )?;
        assert!(
            dry.contains(&format!(
                "job.batch/{name} serverside-applied (server dry run)"
            )),
            "{path}: {dry}"
        );
        let applied =
            cluster.kubectl_apply(&job, &["--server-side", "--field-manager=validation-test"])?;
        assert!(
            applied.contains(&format!("job.batch/{name} serverside-applied")),
            "{path}: {applied}"
        );
        let stored: Value = serde_json::from_str(&cluster.kubectl_ok(&[
            "get",
            "job",
            name,
            "-n",
            ns.name(),
            "-o",
            "json",
        ])?)?;
        assert_eq!(
            stored["spec"]["template"]["spec"]["containers"][0]["args"],
            job["spec"]["template"]["spec"]["containers"][0]["args"],
            "{path}"
        );
    }
    Ok(())
}
