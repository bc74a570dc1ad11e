//! Names of the attributes every `modelfleet_*` resource has besides its spec (the kinds' own computed attributes
//! are named in their files, next to how they are computed).

/// `namespace/name` of the object (computed).
pub const ID: &str = "id";
/// `metadata.name` (required; changing it replaces the object).
pub const NAME: &str = "name";
/// `metadata.namespace` (optional + computed: the provider's `namespace` when null).
pub const NAMESPACE: &str = "namespace";
/// The `timeouts {}` block.
pub const TIMEOUTS: &str = "timeouts";
/// What apply waits for (kinds with waits only).
pub const WAIT_FOR: &str = "wait_for";
