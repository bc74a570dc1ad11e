//! observe: what the pods of a run that awaits them say about why they do not run (the scheduler, the kubelet, the
//! Job controller's refusals), for the pure status module ([`model_fleet_api::status::training::PodFindings`]).

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use model_fleet_api::status::pods as status_pods;
use model_fleet_api::status::training::{self as status, PodFindings};

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

/// observe: why the pods of a run that awaits them do not run. Lists the Job's pods (label
/// `batch.kubernetes.io/controller-uid`, which the API server puts in the template of a Job without
/// `manualSelector`, as the operator renders them) for the scheduler's and the kubelet's word; when the Job has fewer
/// pods than it wants ([`status::missing_pods`]), lists its `FailedCreate` Events (field selector on
/// `involvedObject.uid` and `reason`; the Job controller writes its refusals nowhere else) and keeps the latest since
/// [`status::refusals_since`]. One or two list requests per reconcile, only while the run awaits pods
/// ([`status::needs_pod_scan`]; such a run is requeued every [`super::PENDING_REQUEUE`]).
///
/// Best effort: these reads only explain a wait, so a refused or failed list (RBAC: `pods` and core `events`,
/// `list`) is logged as a warning and the run's status is written without them, not held back by a reconcile error.
pub(super) async fn scan_pods(ctx: &Context, job: &Job) -> PodScan {
    match read(ctx, job).await {
        Ok(scan) => scan,
        Err(error) => {
            tracing::warn!(%error, "cannot read why the run's pods do not run");
            PodScan::default()
        }
    }
}

async fn read(ctx: &Context, job: &Job) -> Result<PodScan> {
    let (Some(namespace), Some(uid)) = (job.namespace(), job.uid()) else {
        return Ok(PodScan::default());
    };
    let what = |kind: &str| format!("{kind} of Job {namespace}/{}", job.name_any());
    let selector = format!("batch.kubernetes.io/controller-uid={uid}");
    let pods = Api::<Pod>::namespaced(ctx.client.clone(), &namespace)
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::fetch(what("pods"), e))?
        .items;
    let scan = PodScan {
        refused: None,
        unschedulable: status_pods::unschedulable_message(&pods),
        stalled: status_pods::stalled_pod_message(&pods),
    };
    if status::missing_pods(job) == 0 {
        return Ok(scan);
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
    let since = status::refusals_since(job, &pods);
    Ok(PodScan {
        refused: status_pods::failed_create_message(&events, since).map(str::to_owned),
        ..scan
    })
}
