//! observe: what a `Pending` run's pods say about why they do not run (the scheduler, the kubelet, the Job
//! controller's refusals), for the pure status module ([`model_fleet_api::status::training::PodFindings`]).

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use model_fleet_api::status::pods as status_pods;
use model_fleet_api::status::training::PodFindings;

use crate::controller::context::Context;
use crate::controller::error::{Error, Result};

/// What [`scan_pods`] read, owned ([`PodFindings`] borrows it).
#[derive(Debug, Default)]
pub(super) struct PodScan {
    refused: Option<String>,
    unschedulable: Option<String>,
    stalled: Option<String>,
}

impl PodScan {
    pub(super) fn findings(&self) -> PodFindings<'_> {
        PodFindings {
            refused: self.refused.as_deref(),
            unschedulable: self.unschedulable.as_deref(),
            stalled: self.stalled.as_deref(),
        }
    }
}

/// observe: why a `Pending` run's pods do not run. Lists the Job's pods (label `batch.kubernetes.io/controller-uid`,
/// which the Job controller sets on every pod of the Job) for the scheduler's and the kubelet's word; when the Job
/// has no pod at all, lists its `FailedCreate` Events (field selector on `involvedObject.uid` and `reason`): the Job
/// controller writes its refusals nowhere else. One or two list requests per reconcile, only while the run is
/// `Pending` ([`model_fleet_api::status::training::needs_pod_scan`]; such a run is requeued every
/// [`super::PENDING_REQUEUE`]).
///
/// # Errors
/// [`Error::fetch`] when a list is refused or fails (the reconcile is retried; RBAC: `pods` and core `events`, `list`).
pub(super) async fn scan_pods(ctx: &Context, job: &Job) -> Result<PodScan> {
    let namespace = job.namespace().unwrap_or_default();
    let uid = job.uid().unwrap_or_default();
    let what = |kind: &str| format!("{kind} of Job {namespace}/{}", job.name_any());
    let selector = format!("batch.kubernetes.io/controller-uid={uid}");
    let pods = Api::<Pod>::namespaced(ctx.client.clone(), &namespace)
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::fetch(what("pods"), e))?
        .items;
    if !pods.is_empty() {
        return Ok(PodScan {
            refused: None,
            unschedulable: status_pods::unschedulable_message(&pods),
            stalled: status_pods::stalled_pod_message(&pods),
        });
    }
    let fields = format!(
        "involvedObject.uid={uid},reason={}",
        status_pods::FAILED_CREATE
    );
    let events = Api::<Event>::namespaced(ctx.client.clone(), &namespace)
        .list(&ListParams::default().fields(&fields))
        .await
        .map_err(|e| Error::fetch(what("FailedCreate events"), e))?
        .items;
    Ok(PodScan {
        refused: status_pods::failed_create_message(&events).map(str::to_owned),
        ..PodScan::default()
    })
}
