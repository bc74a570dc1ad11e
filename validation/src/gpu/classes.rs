//! The capacity classes' usable memory, so a Job can say `--class 80gi` instead of a number.

/// `(class, usable MiB)` of every capacity class, smallest first: the table of docs/GPU_CAPACITY.md (a test keeps it
/// equal to the operator's `model_fleet_api::capacity::CLASSES`; the check does not link the operator's crate, to
/// stay a small static binary).
pub const CLASS_USABLE_MIB: &[(&str, u64)] = &[
    ("16gi", 15360),
    ("24gi", 22888),
    ("40gi", 39538),
    ("48gi", 45776),
    ("80gi", 81559),
    ("141gi", 143771),
    ("180gi", 183359),
];

/// The usable MiB of the class named `class`, or `None` for an unknown name.
pub fn usable_mib(class: &str) -> Option<u64> {
    CLASS_USABLE_MIB
        .iter()
        .find(|(name, _)| *name == class)
        .map(|(_, mib)| *mib)
}
