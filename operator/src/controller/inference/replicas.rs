//! apply, `spec.replicas`: the fixed -> autoscaled hand-over (DESIGN.md section 3, case O-04) before the Deployment
//! is applied.

use k8s_openapi::api::apps::v1::Deployment;
use kube::Resource;
use kube::api::DynamicObject;
use model_fleet_api::InferenceService;
use model_fleet_api::render::{
    FIELD_MANAGER, InferenceChildren, InferenceFacts, LABEL_INFERENCE, LiveReplicas, ReplicaPlan,
    replica_plan,
};

use crate::controller::apply::{self, Child, Live};
use crate::controller::context::Context;
use crate::controller::error::{Error, Result};
use crate::controller::events;
use crate::controller::reconcile::Owner;

/// apply, `spec.replicas` ([`replica_plan`]): the Deployment to apply with the count the operator owns (or none), after
/// handing the live count over to a separate field manager when the autoscaler takes it (fixed or suspended ->
/// autoscaled: dropping the field from our apply would reset it to 1) or when it fell below the autoscaler's floor.
/// Returns the Deployment to apply and what is known of the live one ([`apply::read`]; read again after a
/// hand-over).
pub(super) async fn deployment_with_replicas(
    ctx: &Context,
    isvc: &InferenceService,
    owner: &Owner,
    children: &InferenceChildren,
    facts: &InferenceFacts,
) -> Result<(Child, Live)> {
    let rendered = Child::typed(&children.deployment)?;
    let live = apply::read(&ctx.client, &ctx.children, LABEL_INFERENCE, &rendered).await?;
    // An unseen Deployment is created by a create-only apply: were it there after all, the apply is refused and the
    // next reconcile reads it, so the plan below never drops a count the operator owns.
    let live_replicas = live.object().map(|live| LiveReplicas {
        replicas: live
            .data
            .pointer("/spec/replicas")
            .and_then(|v| v.as_i64())
            .and_then(|n| i32::try_from(n).ok())
            .unwrap_or(1),
        owned_by_operator: apply::owns_spec_replicas(live, FIELD_MANAGER),
    });
    let plan = replica_plan(facts, live_replicas);
    if let ReplicaPlan::HandOver(replicas) = plan {
        tracing::info!(deployment = %rendered.display(), replicas, "handing spec.replicas over");
        apply::hand_over_replicas(
            &ctx.client,
            &rendered.resource,
            &owner.namespace,
            &rendered.name,
            i64::from(replicas),
        )
        .await?;
        let note = format!(
            "{} keeps {replicas} replicas while the autoscaler owns the count",
            rendered.display()
        );
        events::normal(
            &ctx.recorder,
            &isvc.object_ref(&()),
            "ReplicasHandedOver",
            "Autoscale",
            note,
        )
        .await;
    }
    let mut deployment = children.deployment.clone();
    if let Some(spec) = deployment.spec.as_mut() {
        spec.replicas = plan.applied();
    }
    let live = match plan {
        ReplicaPlan::HandOver(_) => Live::Read(apply::get_live(&ctx.client, &rendered).await?),
        ReplicaPlan::Own(_) | ReplicaPlan::Leave => live,
    };
    Ok((Child::typed(&deployment)?, live))
}

pub(super) fn parse(child: &Child, object: DynamicObject) -> Result<Deployment> {
    serde_json::to_value(object)
        .and_then(serde_json::from_value)
        .map_err(|source| Error::apply(child.display(), source))
}
