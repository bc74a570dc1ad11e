//! Scheduling terms for GPU pods (DESIGN.md section 4): required node affinity on the classes that
//! fit, a preferred term for the smallest, exact product names, GPU limits and the GPU taint
//! toleration.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
    PreferredSchedulingTerm, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{CLASS_LABEL, FitBudget, PRODUCT_LABEL};
use crate::Gpu;

/// Extended resource of a GPU when `gpu.resourceName` is absent.
pub const DEFAULT_GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Taint key GPU nodes carry (tolerated with `Exists`, effect `NoSchedule`).
pub const GPU_TAINT_KEY: &str = "nvidia.com/gpu";

/// What a GPU pod needs in its template.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuPlacement {
    /// Node affinity (none when there is neither a fit nor products).
    pub affinity: Option<Affinity>,
    /// The GPU taint toleration followed by the user's tolerations.
    pub tolerations: Vec<Toleration>,
    /// Container limits, e.g. `nvidia.com/gpu: 2` (empty when `count` is 0).
    pub limits: BTreeMap<String, Quantity>,
    /// The user's node selector, passed through.
    pub node_selector: BTreeMap<String, String>,
}

fn requirement(key: &str, values: Vec<String>) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.to_string(),
        operator: "In".to_string(),
        values: Some(values),
    }
}

/// Placement for `gpu` given its budget (from [`super::plan`]).
pub fn placement(gpu: &Gpu, budget: Option<&FitBudget>) -> GpuPlacement {
    let mut required = Vec::new();
    if let Some(b) = budget {
        required.push(requirement(
            CLASS_LABEL,
            b.fitting.iter().map(|c| c.name.to_string()).collect(),
        ));
    }
    if let Some(products) = gpu.products.as_ref().filter(|p| !p.is_empty()) {
        required.push(requirement(PRODUCT_LABEL, products.clone()));
    }
    let preferred = budget.map(|b| {
        vec![PreferredSchedulingTerm {
            weight: 100,
            preference: NodeSelectorTerm {
                match_expressions: Some(vec![requirement(
                    CLASS_LABEL,
                    vec![b.class().name.to_string()],
                )]),
                ..Default::default()
            },
        }]
    });
    let affinity = (!required.is_empty()).then(|| Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(required),
                    ..Default::default()
                }],
            }),
            preferred_during_scheduling_ignored_during_execution: preferred,
        }),
        ..Default::default()
    });

    let mut tolerations = Vec::new();
    let mut limits = BTreeMap::new();
    if gpu.count > 0 {
        tolerations.push(Toleration {
            key: Some(GPU_TAINT_KEY.to_string()),
            operator: Some("Exists".to_string()),
            effect: Some("NoSchedule".to_string()),
            ..Default::default()
        });
        let resource = gpu
            .resource_name
            .clone()
            .unwrap_or_else(|| DEFAULT_GPU_RESOURCE.to_string());
        limits.insert(resource, Quantity(gpu.count.to_string()));
    }
    for t in gpu.tolerations.iter().flatten() {
        tolerations.push(Toleration {
            key: t.key.clone(),
            operator: t.operator.map(|o| format!("{o:?}")),
            value: t.value.clone(),
            effect: t.effect.map(|e| format!("{e:?}")),
            toleration_seconds: t.toleration_seconds,
        });
    }
    GpuPlacement {
        affinity,
        tolerations,
        limits,
        node_selector: gpu.node_selector.clone().unwrap_or_default(),
    }
}
