//! Issue 18, security: what the pods the operator renders may do, proved on the API server's own admission.
//!
//! * Pod Security admission (built into kube-apiserver) on namespaces labelled `pod-security.kubernetes.io/enforce`:
//!   with `baseline` the ReplicaSet controller creates the InferenceService's pods (no `FailedCreate`); with
//!   `restricted` it is refused (the InferenceService's and a TrainingRun's `Ready` say so), and the refusal names exactly the settings
//!   docs/security.md lists as missing, unless
//!   the object asks for `podSecurity.level: restricted`: then its pods are admitted (InferenceService and TrainingRun).
//! * The pods carry no ServiceAccount token: `automountServiceAccountToken: false` and no projected token volume.
//! * An InferenceService cannot smuggle a privileged container, hostPath, hostNetwork or hostPID: the CRD has no such
//!   fields, so a strict server-side apply is refused naming them, a non-strict one has them pruned, and the
//!   rendered pods have none.

use std::time::Duration;

use acceptance_tests::inference::{api, apply, isvc_resource, operator};
use acceptance_tests::modelfleet::{self, create, wait_for_ready_message};
use acceptance_tests::{Cluster, wait_for};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

/// A small InferenceService (the echo example without a route).
fn echo() -> Value {
    json!({
        "model": {"name": "echo"},
        "container": {
            "image": "hashicorp/http-echo:1.0",
            "args": ["-listen=:8080"],
            "port": 8080,
            "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
        },
        "replicas": {"min": 1, "max": 1},
    })
}

/// The messages of `ReplicaFailure` conditions of the ReplicaSets in `ns` (the ReplicaSet controller's
/// `FailedCreate`, e.g. a Pod Security refusal).
async fn replica_failures(client: &kube::Client, ns: &str) -> Vec<String> {
    Api::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("list ReplicaSets")
        .items
        .into_iter()
        .flat_map(|rs| rs.status.and_then(|s| s.conditions).unwrap_or_default())
        .filter(|c| c.type_ == "ReplicaFailure" && c.status == "True")
        .map(|c| c.message.unwrap_or_default())
        .collect()
}

/// The pods of `ns` once there are some.
async fn pods(client: &kube::Client, ns: &str) -> Vec<Pod> {
    let pods = Api::<Pod>::namespaced(client.clone(), ns);
    wait_for(
        "the InferenceService's pods",
        Duration::from_secs(90),
        || async {
            let list = pods.list(&ListParams::default()).await?.items;
            Ok((!list.is_empty()).then_some(list))
        },
    )
    .await
    .unwrap()
}

/// What no rendered pod may have: a token, host namespaces, host paths, privileged or escalating containers.
fn assert_unprivileged(pod: &Pod) {
    let spec = pod.spec.as_ref().expect("pod spec");
    assert_eq!(spec.automount_service_account_token, Some(false));
    assert_eq!(spec.host_network, None);
    assert_eq!(spec.host_pid, None);
    assert_eq!(spec.host_ipc, None);
    for volume in spec.volumes.iter().flatten() {
        assert!(
            volume.host_path.is_none(),
            "hostPath volume {}",
            volume.name
        );
        assert!(
            volume.projected.is_none() && !volume.name.starts_with("kube-api-access"),
            "a ServiceAccount token volume was mounted: {}",
            volume.name
        );
    }
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    for container in containers {
        let context = container.security_context.clone().unwrap_or_default();
        assert_ne!(context.privileged, Some(true), "{}", container.name);
        assert_ne!(context.allow_privilege_escalation, Some(true));
        assert!(context.capabilities.and_then(|c| c.add).is_none());
    }
}

async fn labelled_namespace(
    cluster: &Cluster,
    prefix: &str,
    level: &str,
) -> acceptance_tests::TestNamespace {
    let ns = cluster.model_fleet_namespace(prefix).await.unwrap();
    cluster
        .kubectl_ok(&[
            "label",
            "namespace",
            ns.name(),
            &format!("pod-security.kubernetes.io/enforce={level}"),
            "pod-security.kubernetes.io/enforce-version=latest",
        ])
        .unwrap();
    ns
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rendered_pods_are_admitted_under_baseline_and_carry_no_token() {
    let cluster = Cluster::for_tests();
    let ns = labelled_namespace(&cluster, "sec-pss-baseline", "baseline").await;
    let client = cluster.client().await.unwrap();
    let _operator = operator(&cluster, ns.name(), &[]).unwrap();
    apply(&api(&client, ns.name(), &isvc_resource()), "echo", echo())
        .await
        .unwrap();
    let pods = pods(&client, ns.name()).await;
    assert_eq!(
        replica_failures(&client, ns.name()).await,
        Vec::<String>::new()
    );
    for pod in &pods {
        assert_unprivileged(pod);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restricted_refuses_exactly_the_settings_the_docs_list() {
    let cluster = Cluster::for_tests();
    let ns = labelled_namespace(&cluster, "sec-pss-restricted", "restricted").await;
    let client = cluster.client().await.unwrap();
    let operator = operator(&cluster, ns.name(), &[]).unwrap();
    apply(&api(&client, ns.name(), &isvc_resource()), "echo", echo())
        .await
        .unwrap();
    let failures = wait_for(
        "the ReplicaSet's FailedCreate",
        Duration::from_secs(90),
        || async {
            let failures = replica_failures(&client, ns.name()).await;
            Ok((!failures.is_empty()).then_some(failures))
        },
    )
    .await
    .unwrap();
    let message = failures.join("\n");
    eprintln!("figure: restricted refuses the rendered pod: {message}");
    // docs/security.md, "Pod Security Standards": the four restricted settings the rendered pods leave to the image.
    for missing in [
        "allowPrivilegeEscalation != false",
        "unrestricted capabilities",
        "runAsNonRoot != true",
        "seccompProfile",
    ] {
        assert!(message.contains(missing), "{missing} not in: {message}");
    }
    // ...and none of the baseline checks.
    for baseline in [
        "host namespaces",
        "hostPath",
        "hostPort",
        "privileged (",
        "volume types",
    ] {
        assert!(!message.contains(baseline), "{baseline} in: {message}");
    }
    // The InferenceService says why its rollout is stuck (from the Deployment's ReplicaFailure condition), in the
    // API server's words alone (no pod name), as a TrainingRun does.
    let refused = |m: &str| m.contains("violates PodSecurity");
    let isvc = wait_for_ready_message(
        &client,
        ns.name(),
        "InferenceService",
        "echo",
        &operator,
        refused,
    )
    .await
    .unwrap();
    assert!(
        isvc.message.starts_with(
            "rollout stalled: the ReplicaSet cannot create pods: violates PodSecurity"
        ),
        "{}",
        isvc.message
    );
    // A stall needs a human: Degraded says so, quoting Ready (written in the same status as Ready's message).
    let degraded = modelfleet::condition(&isvc.object, "Degraded");
    assert_eq!(
        (&degraded["status"], &degraded["reason"]),
        (&json!("True"), &json!("NeedsAttention")),
        "{degraded}"
    );
    assert!(
        degraded["message"].as_str().is_some_and(
            |m| m.starts_with("Ready: rollout stalled: the ReplicaSet cannot create pods")
        ),
        "{degraded}"
    );
    // A TrainingRun says it too, from the Job controller's FailedCreate Event (a Job has no such condition).
    let run = json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun", "metadata": {"name": "train"},
        "spec": {"container": {"image": "modelfleet.local/sim:never"}},
    });
    create(&client, ns.name(), run).await.unwrap();
    let run = wait_for_ready_message(
        &client,
        ns.name(),
        "TrainingRun",
        "train",
        &operator,
        refused,
    )
    .await
    .unwrap();
    assert!(
        run.message
            .starts_with("run stalled: the Job cannot create pods: "),
        "{}",
        run.message
    );
}

/// `podSecurity.level: restricted` (docs/security.md): in a namespace enforcing `restricted`, the pods of an
/// InferenceService (through its ReplicaSet) and of a TrainingRun (through its Job) are admitted, each with an init
/// container, and carry the four settings and the user asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_restricted_level_is_admitted_under_restricted() {
    let cluster = Cluster::for_tests();
    let ns = labelled_namespace(&cluster, "sec-pss-opt-in", "restricted").await;
    let client = cluster.client().await.unwrap();
    let _operator = operator(&cluster, ns.name(), &[]).unwrap();
    let security = json!({"level": "restricted", "runAsUser": 65532, "fsGroup": 65532});
    let init = json!([{"name": "fetch", "image": "hashicorp/http-echo:1.0", "args": ["-version"]}]);
    let mut spec = echo();
    spec["podSecurity"] = security.clone();
    spec["initContainers"] = init.clone();
    apply(&api(&client, ns.name(), &isvc_resource()), "echo", spec)
        .await
        .unwrap();
    create(
        &client,
        ns.name(),
        json!({
            "apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun", "metadata": {"name": "train"},
            "spec": {
                "container": {"image": "modelfleet.local/sim:never"},
                "initContainers": init,
                "podSecurity": security,
            },
        }),
    )
    .await
    .unwrap();
    let pods = Api::<Pod>::namespaced(client.clone(), ns.name());
    let owners = |pod: &Pod| -> Vec<String> {
        pod.metadata
            .owner_references
            .iter()
            .flatten()
            .map(|o| o.kind.clone())
            .collect()
    };
    let admitted = wait_for(
        "pods of the ReplicaSet and of the Job",
        Duration::from_secs(90),
        || async {
            let list = pods.list(&ListParams::default()).await?.items;
            let kinds: Vec<String> = list.iter().flat_map(owners).collect();
            let both = kinds.iter().any(|k| k == "ReplicaSet") && kinds.iter().any(|k| k == "Job");
            Ok(both.then_some(list))
        },
    )
    .await;
    let failures = replica_failures(&client, ns.name()).await;
    let admitted = admitted.unwrap_or_else(|e| panic!("{e:#}; ReplicaSet failures: {failures:?}"));
    assert_eq!(failures, Vec::<String>::new());
    for pod in &admitted {
        assert_unprivileged(pod);
        let spec = pod.spec.as_ref().unwrap();
        let context = spec.security_context.clone().unwrap_or_default();
        assert_eq!(
            (
                context.run_as_user,
                context.fs_group,
                context.run_as_non_root
            ),
            (Some(65532), Some(65532), Some(true))
        );
        for container in spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
        {
            let context = container.security_context.clone().unwrap_or_default();
            assert_eq!(
                context.allow_privilege_escalation,
                Some(false),
                "{}",
                container.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inference_service_cannot_smuggle_host_access_or_privilege() {
    let cluster = Cluster::for_tests();
    let ns = cluster.model_fleet_namespace("sec-smuggle").await.unwrap();
    let client = cluster.client().await.unwrap();
    let isvcs = api(&client, ns.name(), &isvc_resource());
    let mut spec = echo();
    spec["hostNetwork"] = json!(true);
    spec["hostPID"] = json!(true);
    spec["securityContext"] = json!({"privileged": true, "runAsUser": 0});
    spec["volumes"] =
        json!([{"name": "root", "mountPath": "/host", "emptyDir": {}, "hostPath": {"path": "/"}}]);
    spec["container"]["securityContext"] =
        json!({"privileged": true, "capabilities": {"add": ["SYS_ADMIN"]}});
    spec["container"]["hostPath"] = json!("/");
    spec["template"] = json!({"spec": {"hostNetwork": true}});
    let everything = json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": "smuggler"}, "spec": spec,
    });

    // Strict field validation (kubectl's default): each field is refused by name.
    let strict = PatchParams {
        field_validation: Some(kube::api::ValidationDirective::Strict),
        ..PatchParams::apply("acceptance-tests")
    };
    let smuggled = [
        ("hostNetwork", json!(true), "hostNetwork"),
        ("hostPID", json!(true), "hostPID"),
        (
            "securityContext",
            json!({"privileged": true}),
            "securityContext",
        ),
        (
            "volumes",
            json!([{"name": "root", "hostPath": {"path": "/"}}]),
            "volumes[0].hostPath",
        ),
        (
            "template",
            json!({"spec": {"hostNetwork": true}}),
            "template",
        ),
    ];
    for (field, value, declared) in &smuggled {
        let mut one = echo();
        one[field] = value.clone();
        let body = json!({
            "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "smuggler"}, "spec": one,
        });
        let refused = isvcs
            .patch("smuggler", &strict, &Patch::Apply(&body))
            .await
            .expect_err("a strict apply with a host field was accepted");
        assert!(
            refused
                .to_string()
                .contains(&format!(".spec.{declared}: field not declared in schema")),
            "{refused}"
        );
    }
    let mut one = echo();
    one["container"]["securityContext"] = json!({"privileged": true});
    let body = json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": "smuggler"}, "spec": one,
    });
    let refused = isvcs
        .patch("smuggler", &strict, &Patch::Apply(&body))
        .await
        .expect_err("a strict apply with a privileged container was accepted");
    assert!(
        refused
            .to_string()
            .contains(".spec.container.securityContext"),
        "{refused}"
    );

    // A server-side apply refuses undeclared fields whatever the validation (it cannot build the typed object); a
    // plain create without strict validation has them pruned: the stored object and the rendered pods have none.
    let _operator = operator(&cluster, ns.name(), &[]).unwrap();
    let object: kube::api::DynamicObject = serde_json::from_value(everything).unwrap();
    isvcs
        .create(&kube::api::PostParams::default(), &object)
        .await
        .unwrap();
    let stored = isvcs.get("smuggler").await.unwrap();
    let stored_spec = stored.data["spec"].to_string();
    for field in [
        "hostNetwork",
        "hostPID",
        "securityContext",
        "hostPath",
        "privileged",
        "SYS_ADMIN",
    ] {
        assert!(
            !stored_spec.contains(field),
            "{field} stored: {stored_spec}"
        );
    }
    for pod in pods(&client, ns.name()).await {
        assert_unprivileged(&pod);
        let text = serde_json::to_string(&pod.spec).unwrap();
        assert!(
            !text.contains("SYS_ADMIN") && !text.contains("hostPath"),
            "{text}"
        );
    }
}
