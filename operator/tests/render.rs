//! Rendering: golden files for every example (insta snapshots under `tests/snapshots/`; review
//! changes with `cargo insta review` or accept with `INSTA_UPDATE=always`), plus the behaviours
//! the goldens protect (cases O-01, O-07, O-08 and the scaling rules of DESIGN.md section 3).

use std::path::PathBuf;

use k8s_openapi::api::core::v1::PodSpec;
use model_fleet_api::conditions::Reason;
use model_fleet_api::names::NameRule;
use model_fleet_api::render::{
    GatewayRef, InferenceChildren, InferenceFacts, RenderConfig, RenderError, TrainingChildren,
    TrainingFacts, render_inference, render_training,
};
use model_fleet_api::{Dataset, InferenceService, TrainingRun};
use model_fleet_operator::manifests::render_manifests;

/// The facts and children of an InferenceService that renders (its children are `Ok`).
#[derive(Debug)]
struct Inference {
    facts: InferenceFacts,
    children: InferenceChildren,
}

fn inference(isvc: &InferenceService, config: &RenderConfig) -> Result<Inference, RenderError> {
    let rendered = render_inference(isvc, config);
    let facts = rendered.facts;
    rendered
        .children
        .map(|children| Inference { facts, children })
}

/// The facts and children of a TrainingRun that renders.
#[derive(Debug)]
struct Training {
    facts: TrainingFacts,
    children: TrainingChildren,
}

fn training(
    run: &TrainingRun,
    datasets: &[Dataset],
    config: &RenderConfig,
) -> Result<Training, RenderError> {
    let rendered = render_training(run, datasets, config);
    let facts = rendered.facts;
    rendered
        .children
        .map(|children| Training { facts, children })
}

fn example(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn config() -> RenderConfig {
    RenderConfig {
        default_gateway: Some("model-fleet-system/model-fleet".parse().unwrap()),
        ..RenderConfig::default()
    }
}

fn golden(name: &str, files: &[&str]) {
    let text: Vec<String> = files.iter().map(|f| example(f)).collect();
    let out = render_manifests(&text.join("\n---\n"), "default", &config())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    insta::assert_snapshot!(name, out);
}

#[test]
fn golden_inference_kind() {
    golden("inference-kind", &["inference-kind.yaml"]);
}

#[test]
fn golden_inference_vllm() {
    golden("inference-vllm", &["inference-vllm.yaml"]);
}

#[test]
fn golden_inference_multi_gpu_fit() {
    golden("inference-multi-gpu-fit", &["inference-multi-gpu-fit.yaml"]);
}

#[test]
fn golden_training_pytorch() {
    golden(
        "training-pytorch",
        &["dataset-corpus.yaml", "training-pytorch.yaml"],
    );
}

#[test]
fn golden_datasets_render_no_children() {
    for f in ["dataset-corpus.yaml", "dataset-remote.yaml"] {
        assert_eq!(
            render_manifests(&example(f), "default", &config()).unwrap(),
            "",
            "{f}"
        );
    }
}

/// Every manifest under examples/ (subfolders included, but not the Slack app's files) renders on its own (a new example without a golden still
/// gets checked); a TrainingRun's Datasets come from the same folder, as a user would pass them with a second -f.
#[test]
fn every_example_renders() {
    fn yaml_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            // examples/slack holds a Slack app manifest and Helm values, not Kubernetes manifests.
            if path.is_dir() && !path.ends_with("slack") {
                yaml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    yaml_files(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples"),
        &mut files,
    );
    let datasets: String = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .filter(|text| text.contains("kind: Dataset"))
        .collect::<Vec<_>>()
        .join("\n---\n");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        // Datasets of the other files, minus this file's own (duplicates are fine for render).
        let input = format!("{text}\n---\n{datasets}");
        render_manifests(&input, "default", &config())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn objects_of_other_api_groups_are_listed_not_rendered() {
    let out =
        render_manifests(&example("huggingface/pvc-cache.yaml"), "default", &config()).unwrap();
    assert!(
        out.starts_with(
            "# document 1: PersistentVolumeClaim \"hf-cache\" is not a Model Fleet object"
        ),
        "{out}"
    );
    assert!(
        out.contains("# document 2: Job \"hf-cache-fill-qwen-7b\""),
        "{out}"
    );
    assert!(out.contains("kind: Deployment"), "{out}");
}

#[test]
fn strip_path_prefix_renders_a_url_rewrite_filter() {
    let routing = render_manifests(&example("qwen/routing.yaml"), "default", &config()).unwrap();
    assert_eq!(
        routing.matches("type: ReplacePrefixMatch").count(),
        2,
        "{routing}"
    );
    assert_eq!(
        routing.matches("replacePrefixMatch: /").count(),
        2,
        "{routing}"
    );
    // Without the flag, or with the prefix `/`, no filter.
    let kind = render_manifests(&example("inference-kind.yaml"), "default", &config()).unwrap();
    assert!(!kind.contains("URLRewrite"), "{kind}");
}

fn isvc(yaml: &str) -> InferenceService {
    serde_yaml::from_str(yaml).unwrap()
}

const BASE: &str = "apiVersion: modelfleet.io/v1alpha1\nkind: InferenceService\nmetadata: {name: m, namespace: ns, uid: u-1}\nspec:\n  model: {name: m}\n  container: {image: img}\n";

#[test]
fn multi_gpu_fit_status_facts() {
    let r = inference(&isvc(&example("inference-multi-gpu-fit.yaml")), &config()).unwrap();
    assert_eq!(r.facts.capacity_class(), Some("80gi"));
    assert_eq!(r.facts.per_gpu_memory_gib(), Some(54));
    let pod = r.children.deployment.spec.unwrap().template.spec.unwrap();
    let shm = pod
        .volumes
        .unwrap()
        .into_iter()
        .find(|v| v.name == "dshm")
        .expect("/dev/shm for count > 1");
    assert_eq!(shm.empty_dir.unwrap().medium.as_deref(), Some("Memory"));
}

// The hunt's finding: a spec mounting its own /dev/shm on a multi-GPU pod got a second mount at that path, which the
// API server refuses (ReconcileError at every retry). A writable emptyDir there is kept and the operator adds none;
// anything else there is refused at render, naming the field.
#[test]
fn a_spec_that_mounts_its_own_dev_shm_keeps_it_on_a_multi_gpu_pod() {
    let with = |volume: &str| format!("{BASE}  gpu: {{count: 2}}\n  volumes:\n  - {volume}\n");
    for path in ["/dev/shm", "/dev/shm/"] {
        let spec = with(&format!(
            "{{name: shm, mountPath: {path}, emptyDir: {{medium: Memory, sizeLimit: 8Gi}}}}"
        ));
        let r = inference(&isvc(&spec), &config()).unwrap();
        let pod = r.children.deployment.spec.unwrap().template.spec.unwrap();
        let mounts: Vec<String> = pod.containers[0]
            .volume_mounts
            .iter()
            .flatten()
            .map(|m| format!("{}={}", m.name, m.mount_path))
            .collect();
        assert_eq!(mounts, [format!("shm={path}")]);
        assert!(pod.volumes.unwrap().iter().all(|v| v.name != "dshm"));
    }
    let claim =
        with("{name: shm, mountPath: /dev/shm, persistentVolumeClaim: {claimName: scratch}}");
    let refused = inference(&isvc(&claim), &config()).expect_err("refused");
    assert!(
        refused.to_string().contains("spec.volumes[].mountPath")
            && refused.to_string().contains("writable emptyDir"),
        "{refused}"
    );
}

// The hunt's finding: `nvidia.com/gpu` in `resources` beside `gpu.count` got its limit replaced by `gpu.count` and
// kept its request, which the API server refuses (request != limit). The CRD now refuses the name there; a spec stored
// before that rule renders with `gpu` as the authority: its limit, and no request of its own.
#[test]
fn gpu_sets_the_gpu_resource_over_the_containers_own() {
    let spec = format!("{BASE}  gpu: {{count: 2}}\n").replace(
        "container: {image: img}",
        "container: {image: img, resources: {requests: {cpu: '1', nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: '1'}}}",
    );
    let r = inference(&isvc(&spec), &config()).unwrap();
    let pod = r.children.deployment.spec.unwrap().template.spec.unwrap();
    let resources = pod.containers[0].resources.clone().unwrap();
    let requests = resources.requests.unwrap();
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["cpu"]);
    assert_eq!(resources.limits.unwrap()["nvidia.com/gpu"].0, "2");
}

// The hunt's finding: KEDA's webhook refuses a ScaledObject whose HPA, `keda-hpa-<name>`, would be named over 63
// characters, so a service of 55 characters or more never got one. Such a service names its HPA itself; a shorter one
// keeps KEDA's default (no change to its HPA).
#[test]
fn a_long_service_names_its_hpa_within_kedas_limit() {
    let hpa = |name: &str| {
        let spec = format!(
            "{BASE}  scaling:\n    triggers:\n    - type: kafka\n      metadata: {{topic: t}}\n"
        )
        .replace("name: m, namespace", &format!("name: {name}, namespace"));
        let r = inference(&isvc(&spec), &config()).unwrap();
        let so = r.children.scaled_object.expect("a ScaledObject");
        assert_eq!(so.metadata.name.as_deref(), Some(name));
        so.spec
            .advanced
            .map(|a| a.horizontal_pod_autoscaler_config.name)
    };
    assert_eq!(
        hpa(&"a".repeat(54)),
        None,
        "keda-hpa- and 54 characters fit in 63"
    );
    let long = hpa(&"a".repeat(55)).expect("an HPA name");
    assert!(
        long.len() <= 63 && long.starts_with("keda-hpa-aaa"),
        "{long}"
    );
    assert_ne!(hpa(&"a".repeat(56)), Some(long), "names stay distinct");
}

#[test]
fn scaled_object_only_with_triggers_and_then_no_replicas() {
    let fixed = inference(
        &isvc(&format!("{BASE}  replicas: {{min: 2, max: 5}}\n")),
        &config(),
    )
    .unwrap();
    assert!(fixed.children.scaled_object.is_none());
    assert_eq!(fixed.children.deployment.spec.unwrap().replicas, Some(2));

    let scaled = inference(
        &isvc(&format!("{BASE}  replicas: {{min: 1, max: 5}}\n  scaling:\n    triggers:\n    - type: kafka\n      metadata: {{topic: t}}\n")),
        &config(),
    )
    .unwrap();
    let so = scaled
        .children
        .scaled_object
        .expect("ScaledObject with triggers");
    assert_eq!(
        (so.spec.min_replica_count, so.spec.max_replica_count),
        (1, 5)
    );
    assert_eq!(
        scaled.children.deployment.spec.unwrap().replicas,
        None,
        "KEDA owns replicas"
    );
    assert!(so.metadata.annotations.is_none());
}

#[test]
fn suspended_pauses_keda_or_sets_zero() {
    let paused = inference(
        &isvc(&format!("{BASE}  intent: suspended\n  scaling:\n    triggers:\n    - type: kafka\n      metadata: {{topic: t}}\n")),
        &config(),
    )
    .unwrap();
    let ann = paused
        .children
        .scaled_object
        .unwrap()
        .metadata
        .annotations
        .unwrap();
    assert_eq!(ann["autoscaling.keda.sh/paused-replicas"], "0");
    let zero = inference(&isvc(&format!("{BASE}  intent: suspended\n")), &config()).unwrap();
    assert_eq!(zero.children.deployment.spec.unwrap().replicas, Some(0));
}

#[test]
fn route_uses_default_gateway_and_url() {
    let r = inference(
        &isvc(&format!(
            "{BASE}  gateway: {{hostnames: [a.example.com], pathPrefix: /v1}}\n"
        )),
        &config(),
    )
    .unwrap();
    assert_eq!(r.facts.url.as_deref(), Some("http://a.example.com/v1"));
    // A wildcard is no address a client can use: the first exact hostname, else no url.
    let url = |hostnames: &str| {
        inference(
            &isvc(&format!("{BASE}  gateway: {{hostnames: [{hostnames}]}}\n")),
            &config(),
        )
        .unwrap()
        .facts
        .url
    };
    assert_eq!(
        url("'*.example.com', b.example.com").as_deref(),
        Some("http://b.example.com/")
    );
    assert_eq!(url("'*.example.com'"), None);
    let route = r.children.http_route.unwrap();
    assert_eq!(route.spec.parent_refs[0].namespace, "model-fleet-system");
    assert_eq!(route.spec.parent_refs[0].name, "model-fleet");
    let none = RenderConfig::default();
    let err = inference(
        &isvc(&format!(
            "{BASE}  gateway: {{hostnames: [a.example.com]}}\n"
        )),
        &none,
    )
    .unwrap_err();
    assert_eq!(err, RenderError::NoGateway);
    let _: GatewayRef = "a/b".parse().unwrap();
    assert!("a".parse::<GatewayRef>().is_err());
}

#[test]
fn owner_reference_labels_and_token_defaults() {
    let r = inference(&isvc(BASE), &config()).unwrap();
    let d = r.children.deployment;
    let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("InferenceService", "u-1")
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    let labels = d.metadata.labels.unwrap();
    assert_eq!(
        labels["app.kubernetes.io/managed-by"],
        "model-fleet-operator"
    );
    assert_eq!(labels["modelfleet.io/inference-service"], "m");
    let pod: PodSpec = d.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.automount_service_account_token, Some(false));
    assert_eq!(pod.service_account_name.as_deref(), Some("default"));
    let main = &pod.containers[0];
    assert_eq!(
        main.startup_probe.as_ref().unwrap().failure_threshold,
        Some(180),
        "30 minutes for model loading"
    );
    assert!(main.readiness_probe.is_some());
}

/// `podSecurity` (docs/security.md, "Pod Security Standards"): absent or `baseline` sets no security context; the
/// user and groups go to the pod; `restricted` adds exactly the four settings the restricted level requires, on the
/// pod and on every container (init containers too), for both kinds.
#[test]
fn pod_security_levels_render_the_settings_they_promise() {
    use k8s_openapi::api::core::v1::Container;
    let init = "  initContainers: [{name: fetch, image: img}]\n";
    let pod_of = |security: &str| -> [PodSpec; 2] {
        let isvc = inference(&isvc(&format!("{BASE}{init}{security}")), &config()).unwrap();
        let run = training(&run(&format!("{RUN}{init}{security}")), &[], &config()).unwrap();
        [
            isvc.children
                .deployment
                .spec
                .unwrap()
                .template
                .spec
                .unwrap(),
            run.children.job.spec.unwrap().template.spec.unwrap(),
        ]
    };
    let containers = |pod: &PodSpec| -> Vec<Container> {
        pod.containers
            .iter()
            .chain(pod.init_containers.iter().flatten())
            .cloned()
            .collect()
    };
    for pod in pod_of("")
        .iter()
        .chain(&pod_of("  podSecurity: {level: baseline}\n"))
    {
        assert_eq!(pod.security_context, None);
        assert!(containers(pod).iter().all(|c| c.security_context.is_none()));
    }
    for pod in pod_of("  podSecurity: {runAsUser: 1000, runAsGroup: 2000, fsGroup: 3000}\n") {
        let context = pod.security_context.clone().unwrap();
        assert_eq!(
            (context.run_as_user, context.run_as_group, context.fs_group),
            (Some(1000), Some(2000), Some(3000))
        );
        assert_eq!(
            context.fs_group_change_policy.as_deref(),
            Some("OnRootMismatch")
        );
        assert_eq!(
            (context.run_as_non_root, context.seccomp_profile),
            (None, None)
        );
        assert!(
            containers(&pod)
                .iter()
                .all(|c| c.security_context.is_none())
        );
    }
    for pod in pod_of("  podSecurity: {level: restricted, runAsUser: 65532}\n") {
        let context = pod.security_context.clone().unwrap();
        assert_eq!(context.run_as_user, Some(65532));
        assert_eq!(context.run_as_non_root, Some(true));
        assert_eq!(context.seccomp_profile.unwrap().type_, "RuntimeDefault");
        let containers = containers(&pod);
        assert_eq!(containers.len(), 2, "main and the init container");
        for container in containers {
            let context = container.security_context.unwrap();
            assert_eq!(
                context.allow_privilege_escalation,
                Some(false),
                "{}",
                container.name
            );
            assert_eq!(
                context.capabilities.unwrap().drop,
                Some(vec!["ALL".to_string()])
            );
            assert_eq!(context.privileged, None);
        }
    }
}

// Case O-01: long and digit-leading names give valid, distinct child names.
#[test]
fn o01_child_names_are_valid_for_their_kind() {
    let a = "a".repeat(70);
    let b = format!("{}{}", "a".repeat(63), "b".repeat(17));
    let render = |name: &str| {
        inference(
            &isvc(&BASE.replace("name: m, namespace", &format!("name: {name}, namespace"))),
            &config(),
        )
        .unwrap()
    };
    let (ra, rb) = (render(&a), render(&b));
    let name = |o: &Option<String>| o.clone().unwrap();
    assert_ne!(
        name(&ra.children.deployment.metadata.name),
        name(&rb.children.deployment.metadata.name)
    );
    assert_ne!(
        name(&ra.children.service.metadata.name),
        name(&rb.children.service.metadata.name)
    );
    for r in [&ra, &rb, &render("7b-chat")] {
        assert!(NameRule::Dns1123Label.is_valid(&name(&r.children.deployment.metadata.name)));
        assert!(NameRule::Dns1035Label.is_valid(&name(&r.children.service.metadata.name)));
        for v in r
            .children
            .deployment
            .metadata
            .labels
            .as_ref()
            .unwrap()
            .values()
        {
            assert!(NameRule::LabelValue.is_valid(v), "{v}");
        }
    }
    assert_eq!(
        render("7b-chat")
            .children
            .deployment
            .metadata
            .name
            .as_deref(),
        Some("7b-chat")
    );
}

fn run(yaml: &str) -> TrainingRun {
    serde_yaml::from_str(yaml).unwrap()
}

fn dataset(yaml: &str) -> Dataset {
    serde_yaml::from_str(yaml).unwrap()
}

const RUN: &str = "apiVersion: modelfleet.io/v1alpha1\nkind: TrainingRun\nmetadata: {name: ft-1, namespace: team-a}\nspec:\n  container: {image: img}\n";
const CORPUS: &str = "apiVersion: modelfleet.io/v1alpha1\nkind: Dataset\nmetadata: {name: corpus, namespace: team-a}\nspec:\n  version: \"3\"\n  source: {uri: s3://b/c}\n  pvc: {claimName: corpus-v3}\n  allowedServiceAccounts: [default, trainer]\n";

// Case O-07: the dataset PVC is read-only at the volume and at every mount.
#[test]
fn o07_dataset_pvc_is_read_only_everywhere() {
    let r = run(&format!(
        "{RUN}  initContainers: [{{name: fetch, image: busybox}}]\n  datasets: [{{name: corpus, version: \"3\", mountPath: /data}}]\n"
    ));
    let out = training(&r, &[dataset(CORPUS)], &config()).unwrap();
    let pod = out.children.job.spec.unwrap().template.spec.unwrap();
    let vol = pod
        .volumes
        .unwrap()
        .into_iter()
        .find(|v| v.persistent_volume_claim.is_some())
        .unwrap();
    assert_eq!(
        vol.persistent_volume_claim.as_ref().unwrap().read_only,
        Some(true)
    );
    let containers = pod
        .containers
        .iter()
        .chain(pod.init_containers.iter().flatten());
    let mut mounts = 0;
    for c in containers {
        for m in c
            .volume_mounts
            .iter()
            .flatten()
            .filter(|m| m.name == vol.name)
        {
            assert_eq!(
                m.read_only,
                Some(true),
                "{} mounts the dataset writable",
                c.name
            );
            mounts += 1;
        }
    }
    assert_eq!(mounts, 2);
    let env = pod.containers[0]
        .env
        .as_ref()
        .unwrap()
        .iter()
        .find(|e| e.name == "MODEL_FLEET_DATASETS_JSON")
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(env.value.as_deref().unwrap()).unwrap();
    assert_eq!(json[0]["version"], "3");
    assert_eq!(json[0]["mountPath"], "/data");
    assert_eq!(json[0]["uri"], "s3://b/c");
}

// The hunt's finding: the datasets' description goes into one environment variable of every container, and Linux
// refuses to start a process with an entry over 128 KiB (MAX_ARG_STRLEN). Datasets with many long split URIs made
// such a Job, whose containers could never start; it is refused at render (InvalidSpec), naming the fix.
#[test]
fn datasets_too_large_for_one_environment_variable_or_the_job_are_refused() {
    let datasets: Vec<Dataset> = (0..4)
        .map(|d| {
            let splits: serde_json::Map<String, serde_json::Value> = (0..16)
                .map(|s| {
                    (
                        format!("s{s}"),
                        serde_json::json!({"uri": format!("s3://{}", "x".repeat(2040))}),
                    )
                })
                .collect();
            serde_json::from_value(serde_json::json!({
                "apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset",
                "metadata": {"name": format!("d{d}"), "namespace": "team-a"},
                "spec": {"version": "1", "source": {"uri": "s3://b"}, "splits": splits,
                    "allowedServiceAccounts": ["default"]}}))
            .unwrap()
        })
        .collect();
    let reading = |n: usize| {
        let refs: Vec<String> = (0..n)
            .map(|d| format!("{{name: d{d}, version: \"1\", mountPath: /d{d}}}"))
            .collect();
        run(&format!("{RUN}  datasets: [{}]\n", refs.join(", ")))
    };
    let three = training(&reading(3), &datasets, &config()).expect("about 100 KB fits");
    let pod = three.children.job.spec.unwrap().template.spec.unwrap();
    let env = pod.containers[0].env.as_ref().unwrap();
    let json = env
        .iter()
        .find(|e| e.name == "MODEL_FLEET_DATASETS_JSON")
        .unwrap();
    assert!(json.value.as_ref().unwrap().len() > 96 * 1024);

    let err = training(&reading(4), &datasets, &config()).unwrap_err();
    assert!(matches!(err, RenderError::DatasetsTooLarge(_)), "{err}");
    assert_eq!(err.reason(), Reason::InvalidSpec);
    assert!(
        err.to_string()
            .starts_with("spec.datasets: the 4 datasets describe themselves in ")
            && err
                .to_string()
                .contains("over the 131072 bytes Linux lets one environment variable hold"),
        "{err}"
    );
    // The hunt's second finding: each copy fits, but one per container (8 init containers) beside long args makes a
    // Job over the 1.5 MiB the API server stores ("etcdserver: request is too large" at every retry).
    let long_args = |n: usize| {
        format!(
            "[{}]",
            vec![format!("'{}'", "a".repeat(4096)); n].join(", ")
        )
    };
    let inits: Vec<String> = (0..8)
        .map(|i| format!("{{name: i{i}, image: img, args: {}}}", long_args(16)))
        .collect();
    let crowded = |datasets: &str| {
        run(
            &format!("{RUN}  initContainers: [{}]\n{datasets}", inits.join(", ")).replace(
                "container: {image: img}",
                &format!("container: {{image: img, args: {}}}", long_args(128)),
            ),
        )
    };
    let refs = "  datasets: [{name: d0, version: \"1\", mountPath: /d0}, {name: d1, version: \"1\", mountPath: /d1}, \
                {name: d2, version: \"1\", mountPath: /d2}]\n";
    let err = training(&crowded(refs), &datasets, &config()).unwrap_err();
    assert!(matches!(err, RenderError::DatasetsTooLarge(_)), "{err}");
    assert!(
        err.to_string()
            .starts_with("spec.datasets: the Job would be ")
            && err
                .to_string()
                .contains("over the 1572864 bytes the API server stores")
            && err
                .to_string()
                .contains("copied into each of its 9 containers"),
        "{err}"
    );
    training(&crowded(""), &datasets, &config()).expect("the same run without datasets fits");
}

#[test]
fn o07_writable_dataset_mount_is_refused() {
    let asked = run(&format!(
        "{RUN}  datasets: [{{name: corpus, version: \"3\", mountPath: /data, readOnly: false}}]\n"
    ));
    assert!(matches!(
        training(&asked, &[dataset(CORPUS)], &config()),
        Err(RenderError::WritableDatasetMount(_))
    ));
    let sneaky = run(&format!(
        "{RUN}  datasets: [{{name: corpus, version: \"3\", mountPath: /data}}]\n  volumes: [{{name: raw, mountPath: /raw, persistentVolumeClaim: {{claimName: corpus-v3}}}}]\n"
    ));
    let err = training(&sneaky, &[dataset(CORPUS)], &config()).unwrap_err();
    assert!(matches!(err, RenderError::WritableDatasetMount(_)), "{err}");
}

// Case O-08: confused deputy through the allowlist.
#[test]
fn o08_dataset_access() {
    let reason = |yaml: String| match training(&run(&yaml), &[dataset(CORPUS)], &config()) {
        Err(RenderError::Datasets(r)) => Some(r.reason),
        Ok(_) => None,
        Err(e) => panic!("{e}"),
    };
    let cross = RUN.replace("team-a", "team-b")
        + "  serviceAccountName: trainer\n  datasets: [{name: corpus, version: \"3\", mountPath: /d, namespace: team-a}]\n";
    assert_eq!(reason(cross), Some(Reason::CrossNamespace));
    let intruder = format!(
        "{RUN}  serviceAccountName: intruder\n  datasets: [{{name: corpus, version: \"3\", mountPath: /d}}]\n"
    );
    assert_eq!(reason(intruder), Some(Reason::AccessDenied));
    let default_sa =
        format!("{RUN}  datasets: [{{name: corpus, version: \"3\", mountPath: /d}}]\n");
    assert_eq!(
        reason(default_sa),
        None,
        "absent serviceAccountName is checked as default"
    );
    let wrong_version =
        format!("{RUN}  datasets: [{{name: corpus, version: \"4\", mountPath: /d}}]\n");
    assert_eq!(reason(wrong_version), Some(Reason::VersionMismatch));
    let missing = format!("{RUN}  datasets: [{{name: other, version: \"3\", mountPath: /d}}]\n");
    assert_eq!(reason(missing), Some(Reason::DatasetNotFound));
}

#[test]
fn job_shape_and_suspend() {
    let r = run(&format!(
        "{RUN}  retries: 2\n  deadlineSeconds: 60\n  ttlSecondsAfterFinished: 30\n  intent: suspended\n"
    ));
    let out = training(&r, &[], &config()).unwrap();
    assert!(out.facts.suspend);
    assert_eq!(out.facts.job_name, "ft-1");
    let spec = out.children.job.spec.unwrap();
    assert_eq!(
        (
            spec.backoff_limit,
            spec.active_deadline_seconds,
            spec.ttl_seconds_after_finished
        ),
        (Some(2), Some(60), Some(30))
    );
    assert_eq!(spec.suspend, Some(true));
    let rule = &spec.pod_failure_policy.unwrap().rules[0];
    assert_eq!(rule.action, "Ignore");
    assert_eq!(
        rule.on_pod_conditions.as_ref().unwrap()[0].type_,
        "DisruptionTarget"
    );
    assert_eq!(
        spec.template.spec.unwrap().restart_policy.as_deref(),
        Some("Never")
    );
    let cancelled = training(&run(&format!("{RUN}  cancel: true\n")), &[], &config()).unwrap();
    assert!(cancelled.facts.suspend && cancelled.facts.cancelled);
    assert!(cancelled.children.headless_service.is_none());
}

#[test]
fn invalid_input_names_the_field() {
    let bad = format!("{BASE}  replicas: {{min: -1}}\n  intent: sometimes\n  bogus: 1\n");
    let err = render_manifests(&bad, "default", &config()).unwrap_err();
    assert!(
        err.contains("spec.replicas.min: Invalid value: -1"),
        "{err}"
    );
    assert!(
        err.contains("spec.intent: Unsupported value: \"sometimes\""),
        "{err}"
    );
    assert!(err.contains("unknown field \"spec.bogus\""), "{err}");
}

// Case O-01 for Jobs: an Indexed run's pods are named `<job>-<index>`, so the Job name leaves room.
#[test]
fn indexed_job_names_leave_room_for_the_index() {
    let long = "r".repeat(80);
    let spec = run(&format!(
        "{RUN}  completionMode: Indexed\n  completions: 16\n  parallelism: 16\n"
    ))
    .spec;
    let name = model_fleet_api::render::job_name(&long, &spec);
    assert!(name.len() <= 63 - 3, "{name}");
    assert!(NameRule::Dns1123Label.is_valid(&name));
    assert_eq!(model_fleet_api::render::job_name("ft-1", &spec), "ft-1");
    let plain = run(RUN).spec;
    assert_eq!(model_fleet_api::render::job_name(&long, &plain).len(), 63);
}

// `render -f` evaluates the CRDs' CEL rules too, with the API server's paths and messages.
#[test]
fn invalid_input_reports_cel_rules() {
    let bad =
        format!("{BASE}  replicas: {{min: 3, max: 2}}\n  volumes: [{{name: v, mountPath: /v}}]\n");
    let err = render_manifests(&bad, "default", &config()).unwrap_err();
    assert!(
        err.contains("spec.replicas.min: Invalid value: replicas.min must not exceed replicas.max"),
        "{err}"
    );
    assert!(
        err.contains("spec.volumes[0]: Invalid value: volumes[]: set exactly one of"),
        "{err}"
    );
}
