//! The KEDA ScaledObject, only when triggers or `scaling.http` are given (the KEDA CRD requires a trigger; DESIGN.md
//! section 3, Scaling): bounds from `replicas` (at least 1 while `active`), triggers passed through plus the HTTP
//! add-on's `external-push` trigger with `scaling.http`, paused at 0 while `suspended`.

use std::collections::BTreeMap;

use super::http_add_on::HttpAddOn;
use super::inference::{InferenceFacts, Workload, triggers};
use super::keda::{
    Advanced, HorizontalPodAutoscalerConfig, PAUSED_REPLICAS_ANNOTATION, ScaleTargetRef,
    ScaledObject, ScaledObjectSpec,
};
use super::wake;
use crate::names::{MAX_LEN, NameRule, child_name};
use crate::{InferenceService, Intent};

/// The ScaledObject of `isvc`, `None` without triggers and `scaling.http`.
pub(crate) fn scaled_object(
    isvc: &InferenceService,
    facts: &InferenceFacts,
    workload: &Workload,
    add_on: &HttpAddOn,
) -> Option<ScaledObject> {
    let mut triggers = triggers(isvc);
    if wake::http_scaling(isvc).is_some() {
        triggers.push(wake::trigger(add_on, &workload.name));
    }
    if triggers.is_empty() {
        return None;
    }
    let scaling = isvc.spec.scaling.clone().unwrap_or_default();
    let mut metadata = workload.child_meta();
    if facts.paused {
        metadata.annotations = Some(BTreeMap::from([(
            PAUSED_REPLICAS_ANNOTATION.to_string(),
            "0".to_string(),
        )]));
    }
    let min_count = facts.autoscaler_floor.unwrap_or(1);
    let max = facts.effective.max_replicas.unwrap_or(min_count.max(1));
    Some(ScaledObject {
        metadata,
        spec: ScaledObjectSpec {
            scale_target_ref: ScaleTargetRef {
                api_version: "apps/v1".to_string(),
                kind: "Deployment".to_string(),
                name: workload.name.clone(),
            },
            polling_interval: scaling.polling_interval,
            cooldown_period: scaling.cooldown_period,
            initial_cooldown_period: scaling.initial_cooldown_period,
            // `active` keeps a replica: no idle count that takes it to 0.
            idle_replica_count: isvc
                .spec
                .replicas
                .as_ref()
                .and_then(|r| r.idle_replica_count)
                .filter(|_| facts.intent != Intent::Active),
            min_replica_count: min_count,
            max_replica_count: max.max(min_count),
            triggers,
            advanced: hpa_name(&workload.name).map(|name| Advanced {
                horizontal_pod_autoscaler_config: HorizontalPodAutoscalerConfig { name },
            }),
        },
    })
}

/// KEDA names the HPA of a ScaledObject `keda-hpa-<name>`, and its admission webhook refuses one whose HPA name
/// would exceed 63 characters (`verifyName`, KEDA v2.20). For a ScaledObject name of 55 characters or more, the
/// name to set instead: that prefix and the name, shortened with a hash ([`child_name`]); `None` otherwise, which
/// leaves every shorter service's HPA as it was.
fn hpa_name(scaled_object: &str) -> Option<String> {
    let keda = format!("keda-hpa-{scaled_object}");
    (keda.len() > MAX_LEN).then(|| child_name(&keda, NameRule::Dns1123Label))
}
