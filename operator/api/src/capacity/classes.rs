//! The capacity class table (DESIGN.md section 4): nominal labels, each with the memory its
//! smallest common card actually exposes, in MiB (2^20 bytes) as GPU Feature Discovery reports it
//! in `nvidia.com/gpu.memory`.

/// One capacity class: the value of the node label `modelfleet.io/gpu-class`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityClass {
    /// Label value, e.g. `80gi`.
    pub name: &'static str,
    /// Usable memory of the smallest common card of the class, in MiB (2^20 bytes).
    pub usable_mib: u64,
    /// Example `nvidia.com/gpu.product` values of the class.
    pub example_products: &'static [&'static str],
}

/// Node label carrying the capacity class.
pub const CLASS_LABEL: &str = "modelfleet.io/gpu-class";

/// Node label (from GPU Feature Discovery) carrying the exact product name.
pub const PRODUCT_LABEL: &str = "nvidia.com/gpu.product";

/// All classes, smallest first.
pub const CLASSES: &[CapacityClass] = &[
    CapacityClass {
        name: "16gi",
        usable_mib: 15360,
        example_products: &["Tesla-T4"],
    },
    CapacityClass {
        name: "24gi",
        usable_mib: 22888,
        example_products: &["NVIDIA-A10G", "NVIDIA-L4"],
    },
    CapacityClass {
        name: "40gi",
        usable_mib: 39538,
        example_products: &["NVIDIA-A100-SXM4-40GB"],
    },
    CapacityClass {
        name: "48gi",
        usable_mib: 45776,
        example_products: &["NVIDIA-L40S"],
    },
    CapacityClass {
        name: "80gi",
        usable_mib: 81559,
        example_products: &["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"],
    },
    CapacityClass {
        name: "141gi",
        usable_mib: 143771,
        example_products: &["NVIDIA-H200"],
    },
    CapacityClass {
        name: "180gi",
        usable_mib: 183359,
        example_products: &["NVIDIA-B200"],
    },
];

/// The class named `name`, if any.
pub fn class_named(name: &str) -> Option<&'static CapacityClass> {
    CLASSES.iter().find(|c| c.name == name)
}

/// The largest class.
pub fn largest() -> &'static CapacityClass {
    CLASSES.last().expect("the class table is not empty")
}
