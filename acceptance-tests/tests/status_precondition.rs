//! Issue 18, the stalled-connection drill's finding, as a direct test: a status computed from an outdated read never
//! lands. The operator's status writer (`controller::status::write_status`) sends the `resourceVersion` it read as a
//! precondition, so against the real API server:
//! (a) an object deleted and re-created under the same name meanwhile (the drill: a reconcile that resumed after a
//!     30 s stall wrote `jobName` of a deleted TrainingRun onto its successor, which then failed `JobDeleted`) is
//!     refused with 409 and its successor keeps an empty status;
//! (b) a status computed for an older generation of the same object is refused the same way (no `observedGeneration`
//!     going back);
//! (c) a write from the current read lands, and the object it returned stands in for the version it replaced
//!     (`controller::written::StatusWrites`) until a cache shows the write.
//!
//! A TrainingRun's Job, whose creation starts pods, is held to it as well: the reconcile creates it only after a fresh
//! read confirms the run is the one it read (`Owner::confirm_current`). The CI stall drill once counted a Job created
//! twice: a reconcile from the cache, outdated after the stall, created a Job for a run deleted meanwhile (its Job
//! already collected); the garbage collector removed it again. An InferenceService's children are held to it the same
//! way: a reconcile reads the service fresh before the first child it creates (a Deployment starts pods, an HTTPRoute
//! claims a hostname).
//!
//! Issue 17's create-only apply (`controller::apply`, `Live::Unseen`: a child the cache does not hold is created
//! without a read first) is held to the same rule: it creates a missing child with the same `Apply` ownership as
//! every later apply, and never changes an object that exists (its own: `Unseen`, a conflict; someone else's:
//! `Foreign`).

use std::future::Future;
use std::sync::Arc;

use acceptance_tests::Cluster;
use acceptance_tests::drills::check::owner_uids;
use acceptance_tests::inference::echo_spec;
use acceptance_tests::modelfleet::create_training_run;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::DeserializeGuard;
use kube::{Api, Resource as _, ResourceExt as _};
use model_fleet_api::render::FIELD_MANAGER;
use model_fleet_api::{InferenceService, InferenceServiceStatus, TrainingRun};
use model_fleet_operator::controller::apply::{self, Child, Live};
use model_fleet_operator::controller::children::ChildCaches;
use model_fleet_operator::controller::reconcile::{Owner, Reconcile, reconcile};
use model_fleet_operator::controller::status::write_status;
use model_fleet_operator::controller::written::StatusWrites;
use model_fleet_operator::controller::{Context, Error, OperatorConfig};
use model_fleet_operator::telemetry::{Health, Metrics};
use serde::de::DeserializeOwned;
use serde_json::json;

fn status(observed_generation: i64) -> InferenceServiceStatus {
    InferenceServiceStatus {
        observed_generation: Some(observed_generation),
        ..Default::default()
    }
}

async fn create(api: &Api<InferenceService>, name: &str) -> anyhow::Result<InferenceService> {
    let object: InferenceService = serde_json::from_value(json!({
        "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": name}, "spec": echo_spec(),
    }))?;
    Ok(api.create(&PostParams::default(), &object).await?)
}

#[tokio::test]
async fn a_status_from_an_outdated_read_is_refused_and_the_current_one_lands() -> anyhow::Result<()>
{
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("status-precondition").await?;
    let client = cluster.client().await?;
    let api: Api<InferenceService> = Api::namespaced(client, ns.name());
    let writes = StatusWrites::default();

    // (a) Read, then the object is deleted and re-created under its name.
    let first = Owner::of(&create(&api, "svc").await?)?;
    api.delete("svc", &DeleteParams::default()).await?;
    let second = create(&api, "svc").await?;
    let error = write_status(&api, &writes, &first, None, &status(1))
        .await
        .expect_err("a status for the deleted object must be refused");
    assert!(error.is_conflict(), "{error}");
    assert_eq!(api.get_status("svc").await?.status, None);

    // (b) Read at generation 1, then the spec changes (generation 2).
    let read_at_1 = Owner::of(&second)?;
    let mut spec = echo_spec();
    spec["container"]["args"] = json!(["-listen=:8080", "-text=changed"]);
    let changed = api
        .patch(
            "svc",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": spec})),
        )
        .await?;
    assert_eq!(changed.metadata.generation, Some(2));
    let error = write_status(&api, &writes, &read_at_1, None, &status(1))
        .await
        .expect_err("a status computed for generation 1 must be refused at generation 2");
    assert!(error.is_conflict(), "{error}");
    assert_eq!(api.get_status("svc").await?.status, None);

    // (c) The current read writes, and the written object stands in for the read until a cache catches up.
    write_status(&api, &writes, &Owner::of(&changed)?, None, &status(2)).await?;
    let stored = api.get_status("svc").await?;
    assert_eq!(stored.status, Some(status(2)));
    let fresher = writes
        .fresher(&changed)
        .expect("the written object replaces the version the write replaced");
    assert_eq!(
        fresher.metadata.resource_version,
        stored.metadata.resource_version
    );
    assert_eq!(fresher.status, Some(status(2)));
    assert!(
        writes.fresher(&stored).is_none(),
        "a cache that caught up is used as it is"
    );
    Ok(())
}

/// A ConfigMap child of `owner` with `data`.
fn config_map(
    owner: &InferenceService,
    name: &str,
    data: serde_json::Value,
) -> anyhow::Result<Child> {
    let object: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "namespace": owner.metadata.namespace,
            "ownerReferences": [owner.controller_owner_ref(&()).expect("the owner has a name and uid")],
        },
        "data": data,
    }))?;
    Ok(Child::typed(&object)?)
}

#[tokio::test]
async fn a_create_only_apply_creates_what_is_missing_and_never_changes_what_exists()
-> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("create-only").await?;
    let client = cluster.client().await?;
    let owner = create(&Api::namespaced(client.clone(), ns.name()), "owner").await?;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns.name());
    let caches = ChildCaches::default();

    // Missing: created, its fields owned through the operator's Apply entry.
    let child = config_map(&owner, "child", json!({"a": "1", "b": "2"}))?;
    apply::apply(&client, &caches, &child, Live::Unseen).await?;
    let created = config_maps.get("child").await?;
    let managers: Vec<_> = created
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(managers, [(FIELD_MANAGER.to_owned(), "Apply".to_owned())]);

    // Its own, but unseen: refused as a conflict, unchanged.
    let changed = config_map(&owner, "child", json!({"a": "changed"}))?;
    let error = apply::apply(&client, &caches, &changed, Live::Unseen)
        .await
        .expect_err("an existing child is never written by a create-only apply");
    assert!(
        matches!(error, Error::Unseen { .. }) && error.is_conflict(),
        "{error}"
    );
    let after = config_maps.get("child").await?;
    assert_eq!(
        after.metadata.resource_version,
        created.metadata.resource_version
    );

    // Someone else's object of the name: reported as foreign, unchanged.
    let theirs: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "theirs"}, "data": {"mine": "yes"},
    }))?;
    let theirs = config_maps.create(&PostParams::default(), &theirs).await?;
    let error = apply::apply(
        &client,
        &caches,
        &config_map(&owner, "theirs", json!({"a": "1"}))?,
        Live::Unseen,
    )
    .await
    .expect_err("someone else's object is never written");
    assert!(matches!(error, Error::Foreign(_)), "{error}");
    let kept = config_maps.get("theirs").await?;
    assert_eq!(
        kept.metadata.resource_version,
        theirs.metadata.resource_version
    );

    // The create's ownership is the apply's: a later apply that drops a key removes it.
    let live = apply::get_live(&client, &changed).await?;
    apply::apply(&client, &caches, &changed, Live::Read(live)).await?;
    let data = config_maps.get("child").await?.data.unwrap_or_default();
    assert_eq!(data, [("a".to_owned(), "changed".to_owned())].into());
    Ok(())
}

/// The operator's reconcile (the frame and the pipeline) of `object` as a cache would hand it over.
async fn reconcile_read<K: Reconcile + Clone>(ctx: &Arc<Context>, object: &K) -> Result<(), Error> {
    reconcile(Arc::new(DeserializeGuard(Ok(object.clone()))), ctx.clone())
        .await
        .map(drop)
}

/// An operator context watching only `namespace`, with nothing started: reconciles are driven by hand.
fn operator_context(client: &kube::Client, namespace: &str) -> Arc<Context> {
    let config = OperatorConfig {
        watch_namespace: Some(namespace.to_owned()),
        ..OperatorConfig::default()
    };
    Arc::new(Context::new(
        client.clone(),
        Metrics::new(),
        Arc::new(Health::new(1)),
        config,
    ))
}

/// Asserts that `error` is the outdated read of `case`: [`Error::Outdated`], counted as a conflict.
fn outdated(error: Error, case: &str) {
    assert!(
        matches!(error, Error::Outdated { .. }) && error.is_conflict(),
        "{case}: {error}"
    );
}

/// `verb uri` of every write since `mark` to `resources` (plural names) in `namespace` (audit log).
fn writes_of(
    mark: &acceptance_tests::audit::AuditMark,
    namespace: &str,
    resources: &[&str],
) -> anyhow::Result<Vec<String>> {
    Ok(mark
        .writes()?
        .into_iter()
        .filter(|e| {
            e.object_ref.as_ref().is_some_and(|o| {
                o["namespace"] == namespace && resources.iter().any(|r| o["resource"] == *r)
            })
        })
        .map(|e| format!("{} {}", e.verb, e.request_u_r_i))
        .collect())
}

/// Drives the operator's reconcile of `K` with three outdated reads of the object `name`, each refused as an
/// outdated read ([`outdated`]): (a) a read of it after it was deleted; (b) the same read after it was re-created
/// under its name (`create` makes it); (c) a read of its generation 1 after its intent became `suspended`. Returns the
/// current object (generation 2, suspended).
async fn outdated_reads<K, F, Fut>(
    ctx: &Arc<Context>,
    api: &Api<K>,
    name: &str,
    create: F,
) -> anyhow::Result<K>
where
    K: Reconcile + Clone + DeserializeOwned,
    F: Fn() -> Fut,
    Fut: Future<Output = anyhow::Result<K>>,
{
    let kind = K::KIND;
    let first = create().await?;
    api.delete(name, &DeleteParams::background()).await?;
    let error = reconcile_read(ctx, &first).await.expect_err("deleted");
    outdated(error, &format!("a read of a deleted {kind}"));

    let second = create().await?;
    let error = reconcile_read(ctx, &first).await.expect_err("re-created");
    outdated(
        error,
        &format!("a read of the {kind}'s previous incarnation"),
    );

    let current = api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"intent": "suspended"}})),
        )
        .await?;
    assert_eq!(current.meta().generation, Some(2));
    let error = reconcile_read(ctx, &second)
        .await
        .expect_err("new generation");
    outdated(error, &format!("a read of an older {kind} generation"));
    Ok(current)
}

#[tokio::test]
async fn children_of_a_service_are_created_only_from_a_current_read() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("isvc-current-read").await?;
    let client = cluster.client().await?;
    let services: Api<InferenceService> = Api::namespaced(client.clone(), ns.name());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let ctx = operator_context(&client, ns.name());
    let mark = cluster.audit_log().mark()?;
    let mut spec = echo_spec();
    spec.as_object_mut().unwrap().remove("gateway");
    let create = || async {
        let object: InferenceService = serde_json::from_value(json!({
            "apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
            "metadata": {"name": "chat"}, "spec": spec,
        }))?;
        anyhow::Ok(services.create(&PostParams::default(), &object).await?)
    };

    let current = outdated_reads(&ctx, &services, "chat", create).await?;
    let children = [
        "deployments",
        "services",
        "scaledobjects",
        "httproutes",
        "interceptorroutes",
    ];
    assert_eq!(
        writes_of(&mark, ns.name(), &children)?,
        Vec::<String>::new(),
        "no child write from an outdated read"
    );

    // The current read creates the children: owned by the live incarnation, suspended as its current spec says.
    reconcile_read(&ctx, &current).await?;
    let created = deployments.list(&ListParams::default()).await?.items;
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(
        owner_uids(&created[0].metadata),
        vec![current.uid().unwrap_or_default()]
    );
    assert_eq!(created[0].spec.as_ref().and_then(|s| s.replicas), Some(0));
    Ok(())
}

#[tokio::test]
async fn a_job_is_created_only_from_a_current_read_of_its_run() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    cluster.install_model_fleet_crds()?;
    let ns = cluster.namespace("job-current-read").await?;
    let client = cluster.client().await?;
    let runs: Api<TrainingRun> = Api::namespaced(client.clone(), ns.name());
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns.name());
    let ctx = operator_context(&client, ns.name());
    let mark = cluster.audit_log().mark()?;

    let current = outdated_reads(&ctx, &runs, "ft", || create_training_run(&runs, "ft")).await?;
    assert_eq!(
        writes_of(&mark, ns.name(), &["jobs"])?,
        Vec::<String>::new(),
        "no Job write from an outdated read"
    );

    // The current read creates the Job: owned by the live incarnation, suspended as its current spec says.
    reconcile_read(&ctx, &current).await?;
    let created = jobs.list(&ListParams::default()).await?.items;
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(
        owner_uids(&created[0].metadata),
        vec![current.uid().unwrap_or_default()]
    );
    assert_eq!(created[0].spec.as_ref().and_then(|s| s.suspend), Some(true));
    Ok(())
}
