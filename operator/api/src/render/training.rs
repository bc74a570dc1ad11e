//! TrainingRun -> one batch/v1 Job (plus a headless Service for Indexed multi-pod runs), with datasets injected
//! read-only (DESIGN.md section 3, TrainingRun; cases O-05, O-07). This module decides the facts (Job name, suspend,
//! budget) and checks the datasets; [`super::job`] builds the children.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;

use super::datasets::{check_datasets, refuse_dataset_claim_mounts};
use super::inference::to_value;
use super::job;
use super::meta::{LABEL_TRAINING, Owner, labels};
use super::pod::DEFAULT_SERVICE_ACCOUNT;
use super::{RenderConfig, RenderError};
use crate::capacity::{self, CapacityError, FitBudget};
use crate::names::{MAX_LEN, NameRule, child_name, child_name_within, label_value};
use crate::{CompletionMode, Dataset, Intent, TrainingRun, TrainingRunSpec};

pub use super::job::DATASETS_ENV;

/// The children of a TrainingRun.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingChildren {
    /// The Job. `spec.suspend` is the desired value at creation; afterwards the controller toggles it with its own
    /// field manager (DESIGN.md section 5).
    pub job: Job,
    /// Headless Service for `Indexed` runs with more than one pod (rendezvous host names `<job>-<index>.<service>`).
    pub headless_service: Option<Service>,
}

impl TrainingChildren {
    /// Every child as JSON, in apply order.
    pub fn to_values(&self) -> Vec<serde_json::Value> {
        let mut out: Vec<_> = self.headless_service.iter().map(to_value).collect();
        out.push(to_value(&self.job));
        out
    }
}

/// What the status should say, independent of the cluster: known for every spec, even one whose Job cannot be
/// rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingFacts {
    /// Name of the Job.
    pub job_name: String,
    /// Whether the Job should be suspended (`intent: suspended` or `cancel`).
    pub suspend: bool,
    /// Whether the run is cancelled (terminal).
    pub cancelled: bool,
    /// The fit budget, when `gpu.fit` is given and fits a class.
    pub budget: Option<FitBudget>,
    /// Effective ServiceAccount.
    pub service_account_name: String,
}

impl TrainingFacts {
    /// Smallest fitting capacity class, e.g. `80gi`.
    pub fn capacity_class(&self) -> Option<&'static str> {
        self.budget.as_ref().map(|b| b.class().name)
    }

    /// Per-GPU budget rounded up to whole GiB.
    pub fn per_gpu_memory_gib(&self) -> Option<i64> {
        self.budget.as_ref().map(FitBudget::per_gpu_memory_gib)
    }
}

/// The facts, and the children or why they cannot be rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedTraining {
    /// Status facts.
    pub facts: TrainingFacts,
    /// Desired children, or the refusal (a dataset refusal: no Job is created; a writable dataset mount; a fit too
    /// big; reserved names).
    pub children: Result<TrainingChildren, RenderError>,
}

/// The identity the run's children share.
pub(crate) struct Run<'a> {
    /// The run.
    pub run: &'a TrainingRun,
    /// Its owner data.
    pub owner: Owner,
    /// Labels of every child and pod.
    pub labels: BTreeMap<String, String>,
    /// The pod selector (`modelfleet.io/training-run`).
    pub selector: BTreeMap<String, String>,
    /// Pods the Job runs at most at once (`max(parallelism, completions)`).
    pub pods: i32,
    /// The headless Service's name, for Indexed runs of more than one pod.
    pub headless_name: Option<String>,
}

/// The Job name of a run named `run_name` (the provider computes `job_name` at plan time with it). A DNS-1123 label
/// of at most 63 characters; for an Indexed run shorter still, so that pod host names `<job>-<index>` stay within 63.
pub fn job_name(run_name: &str, spec: &TrainingRunSpec) -> String {
    job_name_of(
        run_name,
        spec.completion_mode,
        spec.completions,
        spec.parallelism,
    )
}

/// [`job_name`] from the three spec fields it reads (what the provider knows at plan time).
pub fn job_name_of(
    run_name: &str,
    completion_mode: Option<CompletionMode>,
    completions: Option<i32>,
    parallelism: Option<i32>,
) -> String {
    let indexed = completion_mode == Some(CompletionMode::Indexed);
    let max_index = completions.unwrap_or(1).max(parallelism.unwrap_or(1)) - 1;
    let reserve = if indexed {
        1 + max_index.max(0).to_string().len()
    } else {
        0
    };
    child_name_within(run_name, NameRule::Dns1123Label, MAX_LEN - reserve)
}

/// Renders a TrainingRun. `datasets` are the Datasets fetched from the run's namespace.
pub fn render_training(
    run: &TrainingRun,
    datasets: &[Dataset],
    config: &RenderConfig,
) -> RenderedTraining {
    let budget = match &run.spec.gpu {
        Some(gpu) => capacity::plan(gpu),
        None => Ok(None),
    };
    let facts = facts(run, budget.clone());
    let children = children(run, &facts, budget, datasets, config);
    RenderedTraining { facts, children }
}

fn children(
    run: &TrainingRun,
    facts: &TrainingFacts,
    budget: Result<Option<FitBudget>, CapacityError>,
    datasets: &[Dataset],
    config: &RenderConfig,
) -> Result<TrainingChildren, RenderError> {
    let resolved = check_datasets(run, datasets).map_err(RenderError::Datasets)?;
    refuse_dataset_claim_mounts(run, datasets, &resolved)?;
    budget?;
    let owner = Owner::of(run);
    let selector = BTreeMap::from([(LABEL_TRAINING.to_string(), label_value(&owner.name))]);
    let pods = run
        .spec
        .parallelism
        .unwrap_or(1)
        .max(run.spec.completions.unwrap_or(1));
    let indexed = run.spec.completion_mode == Some(CompletionMode::Indexed);
    let identity = Run {
        run,
        labels: labels(&owner, "training", &selector),
        headless_name: (indexed && pods > 1)
            .then(|| child_name(&owner.name, NameRule::Dns1035Label)),
        owner,
        selector,
        pods,
    };
    Ok(TrainingChildren {
        job: job::job(&identity, facts, &resolved, &config.training_default_env)?,
        headless_service: job::headless_service(&identity),
    })
}

fn facts(run: &TrainingRun, budget: Result<Option<FitBudget>, CapacityError>) -> TrainingFacts {
    let spec = &run.spec;
    let cancelled = spec.cancel == Some(true);
    TrainingFacts {
        job_name: job_name(&run.metadata.name.clone().unwrap_or_default(), spec),
        suspend: cancelled || spec.intent.unwrap_or_default() == Intent::Suspended,
        cancelled,
        budget: budget.ok().flatten(),
        service_account_name: spec
            .service_account_name
            .clone()
            .unwrap_or_else(|| DEFAULT_SERVICE_ACCOUNT.to_string()),
    }
}
