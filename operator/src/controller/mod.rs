//! The controller runtime shared by every kind, and the reconcilers.
//!
//! DESIGN.md sections 1 and 5: a reconcile is fetch -> validate -> render (pure) -> apply/prune -> status. This
//! module holds the thin API layer around the pure middle:
//! - [`error`]: the one [`Error`] enum, one variant per step, with `step()` and `metric_label()`;
//! - [`context`]: [`Context`] (client, Event recorder, metrics, health, flags, discovery, backoff);
//! - [`apply`]: server-side apply of children (field manager `model-fleet-operator`, force, `fieldValidation=Strict`),
//!   replica hand-over, pruning by owner UID; [`children`]: metadata-only caches of owned children (owner triggers
//!   and prune without a LIST); [`index`]: secondary indexes kept from a watch (children by owner, route claims);
//! - [`diff`]: the pure zero-writes checks; [`status`]: the status writer (what a status says is computed by
//!   `model_fleet_api::status`); [`written`]: the objects own status writes returned, until the watch delivers them;
//! - [`discovery`]: KEDA / Gateway API CRD presence (`DependencyMissing`);
//! - [`backoff`]: per-object error backoff; [`events`]: Events; [`failpoint`]: crash injection for tests;
//! - [`reconcile`]: the frame around every kind's reconcile (metrics, invalid objects, backoff, error status);
//! - [`leader`] and [`runtime`]: Lease-based leader election and running controllers only while leading;
//! - [`inference`]: the InferenceService controller; [`training`]: the TrainingRun controller; [`dataset`]: the
//!   Dataset controller.

pub mod apply;
pub mod backoff;
pub mod children;
pub mod context;
pub mod dataset;
pub mod diff;
pub mod discovery;
pub mod error;
pub mod events;
pub mod failpoint;
pub mod index;
pub mod inference;
pub mod leader;
pub mod reconcile;
pub mod recreate;
pub mod runtime;
pub mod status;
pub mod training;
pub mod written;

pub use context::{Context, OperatorConfig};
pub use error::{Error, Result};
