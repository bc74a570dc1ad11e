//! `model-fleet-api`: the shared, pure core of Model Fleet (DESIGN.md sections 2-4), used by the
//! operator (`model-fleet-operator`) and the Terraform provider (`terraform-provider-modelfleet`).
//!
//! No I/O and no runtime: everything here is a function of its inputs, so the operator's
//! controllers and the provider's plans agree by construction.
//!
//! - [`v1alpha1`] (re-exported at the crate root): the custom resource types of group
//!   `modelfleet.io`, their CEL rules and the generated CRDs ([`crds`]);
//! - [`validate`]: the CRDs' structural schema checked without an API server;
//! - [`conditions`]: the condition vocabulary (types and reasons as enums) and the merge of desired conditions;
//! - [`exact`] and [`quantity`]: exact rationals and Kubernetes quantities compared by amount;
//! - [`names`]: child names, label values and DNS name rules;
//! - [`ownership`]: the never-adopt rule (a child name held by an object the resource does not own);
//! - [`capacity`]: the GPU fit budget and capacity classes;
//! - [`render`]: a custom resource in, its desired children and status facts out;
//! - [`status`]: facts and live children in, the desired status and conditions out;
//! - [`routing`]: which InferenceService holds a hostname and path on a Gateway (the others get `HostnameConflict`);
//! - [`schedule`]: scheduled suspend (`spec.schedule.expiresAt`): the effective intent at an instant;
//! - [`reference`]: the documentation site's API reference pages, generated from the CRDs.

pub mod capacity;
pub mod conditions;
pub mod exact;
pub mod names;
pub mod ownership;
pub mod quantity;
pub mod reference;
pub mod render;
pub mod routing;
pub mod schedule;
pub mod status;
pub mod v1alpha1;
pub mod validate;

pub use v1alpha1::*;
