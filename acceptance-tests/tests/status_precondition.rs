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

use acceptance_tests::Cluster;
use acceptance_tests::inference::echo_spec;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use model_fleet_api::{InferenceService, InferenceServiceStatus};
use model_fleet_operator::controller::reconcile::Owner;
use model_fleet_operator::controller::status::write_status;
use model_fleet_operator::controller::written::StatusWrites;
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
    assert!(error.is_status_conflict(), "{error}");
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
    assert!(error.is_status_conflict(), "{error}");
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
