//! `Dataset` (`mfds`): one resource per immutable dataset version (DESIGN.md section 3).
//! Registration never checks that remote data exists and grants no cloud access.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::rules::immutable;

/// Fix text for every immutable Dataset field.
const NEW_VERSION: &str = "a Dataset version never changes, create a new Dataset for a new version";

/// JSON names of the spec fields that may change after creation.
pub const DATASET_MUTABLE_FIELDS: &[&str] = &["allowedServiceAccounts"];

/// JSON names of the spec fields guarded by an immutability rule (every other spec property; a
/// unit test checks the list against the generated schema).
pub const DATASET_IMMUTABLE_FIELDS: &[&str] = &[
    "version",
    "source",
    "format",
    "splits",
    "description",
    "pvc",
];

/// Where the data lives.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatasetSource {
    /// Location, e.g. `s3://bucket/corpus/v3/` or `hf://datasets/org/name`.
    #[schemars(length(min = 1, max = 2048))]
    pub uri: String,
    /// Content digest, e.g. `sha256:...`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub digest: Option<String>,
}

/// One split (e.g. `train`, `validation`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatasetSplit {
    /// Location of the split.
    #[schemars(length(min = 1, max = 2048))]
    pub uri: String,
    /// Number of records.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub records: Option<i64>,
    /// Content digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub digest: Option<String>,
}

/// A PVC holding the data, always mounted read-only.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatasetPvc {
    /// Name of the PersistentVolumeClaim in the Dataset's namespace (an object name: a DNS subdomain).
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
    )]
    pub claim_name: String,
}

/// Desired state of a Dataset.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[kube(
    group = "modelfleet.io",
    version = "v1alpha1",
    kind = "Dataset",
    plural = "datasets",
    shortname = "mfds",
    namespaced,
    derive = "PartialEq",
    status = "DatasetStatus",
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".spec.version"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"In Use","type":"string","jsonPath":".status.usedBy"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = immutable("version", "Dataset", NEW_VERSION))]
#[x_kube(validation = immutable("source", "Dataset", NEW_VERSION))]
#[x_kube(validation = immutable("format", "Dataset", NEW_VERSION))]
#[x_kube(validation = immutable("splits", "Dataset", NEW_VERSION))]
#[x_kube(validation = immutable("description", "Dataset", NEW_VERSION))]
#[x_kube(validation = immutable("pvc", "Dataset", NEW_VERSION))]
pub struct DatasetSpec {
    /// The version this resource describes, e.g. `3`; TrainingRuns must name it.
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = crate::names::VERSION_PATTERN)
    )]
    pub version: String,
    /// Where the data lives.
    pub source: DatasetSource,
    /// Data format, e.g. `parquet`, `jsonl`, `webdataset`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub format: Option<String>,
    /// Splits by name (`train`, `validation`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxProperties" = 16))]
    pub splits: Option<BTreeMap<String, DatasetSplit>>,
    /// Free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096))]
    pub description: Option<String>,
    /// A PVC with the data, mounted read-only into runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pvc: Option<DatasetPvc>,
    /// ServiceAccounts (names in this Dataset's namespace, each a DNS subdomain) whose runs may use
    /// it. The only field that may change.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = 64),
        inner(
            length(min = 1, max = 253),
            regex(pattern = crate::names::DNS_SUBDOMAIN_PATTERN)
        )
    )]
    pub allowed_service_accounts: Option<Vec<String>>,
}

/// Observed state of a Dataset.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DatasetStatus {
    /// `Ready`, and `PVCBound` when a PVC is named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// The `metadata.generation` the status describes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Unfinished TrainingRuns using this Dataset (`namespace/name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_by: Option<Vec<String>>,
}
