//! Reconcile latency under load: from a spec change of an InferenceService to its Deployment showing it.
//!
//! After convergence, `--patches` objects spread over the set get a new container env value (`BENCH_REV`), one every
//! `--patch-interval-ms`, while the others keep resyncing. A watch of the Deployments (full objects: the change is in
//! the pod template) notes when each one carries its new value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use model_fleet_api::render::LABEL_INFERENCE;
use serde::Serialize;
use serde_json::json;

use crate::tracker::{Change, lock, spawn_watch};
use crate::{Args, workload};

/// Name of the environment variable the latency phase changes.
pub const REVISION_ENV: &str = "BENCH_REV";

/// Latencies of the timed spec changes.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Latency {
    /// Milliseconds from each patch request to its Deployment showing the change, sorted.
    pub samples_ms: Vec<f64>,
    /// Changes whose Deployment did not show them within the wait.
    pub missed: usize,
}

impl Latency {
    /// The `p`-th percentile (0..=100, nearest rank), when there is a sample.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.samples_ms.is_empty() {
            return None;
        }
        let rank = (p / 100.0 * self.samples_ms.len() as f64).ceil() as usize;
        Some(self.samples_ms[rank.clamp(1, self.samples_ms.len()) - 1])
    }
}

#[derive(Default)]
struct Pending {
    /// InferenceService name -> (revision it should show, when the patch was sent).
    want: HashMap<String, (String, Instant)>,
    /// InferenceService name -> latency.
    seen: HashMap<String, Duration>,
    synced: bool,
}

impl Pending {
    fn observe(&mut self, change: Change<Deployment>) {
        let deployment = match change {
            Change::Apply(deployment) => deployment,
            Change::Delete(_) => return,
            Change::Synced => {
                self.synced = true;
                return;
            }
        };
        let Some(owner) = deployment.labels().get(LABEL_INFERENCE).cloned() else {
            return;
        };
        let Some((revision, sent)) = self.want.get(&owner) else {
            return;
        };
        if shows(&deployment, revision) && !self.seen.contains_key(&owner) {
            self.seen.insert(owner, sent.elapsed());
        }
    }
}

/// Whether a container of the Deployment's pod template has `BENCH_REV=revision`.
fn shows(deployment: &Deployment, revision: &str) -> bool {
    let containers = deployment
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| p.containers.as_slice())
        .unwrap_or_default();
    containers
        .iter()
        .flat_map(|c| c.env.iter().flatten())
        .any(|e| e.name == REVISION_ENV && e.value.as_deref() == Some(revision))
}

/// Changes `--patches` InferenceServices of `0..n` in `ns` one every `--patch-interval-ms` and times each until its
/// Deployment shows the change (waiting up to 120 s after the last patch).
///
/// Errors: a patch was refused, or the Deployment watch did not sync.
pub async fn measure(
    client: &kube::Client,
    ns: &str,
    n: usize,
    args: &Args,
) -> anyhow::Result<Latency> {
    let pending = Arc::new(Mutex::new(Pending::default()));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let config = watcher::Config::default().labels(LABEL_INFERENCE);
    let watch = spawn_watch(
        deployments,
        config,
        pending.clone(),
        errors,
        Pending::observe,
    );
    let synced = || async { Ok(lock(&pending).synced.then_some(())) };
    acceptance_tests::wait_for(
        "the Deployment watch synced",
        Duration::from_secs(120),
        synced,
    )
    .await?;

    let targets = workload::spread(n, args.patches);
    eprintln!(
        "   latency: {} spec changes, one every {} ms",
        targets.len(),
        args.patch_interval_ms
    );
    let isvcs = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        ns,
        &acceptance_tests::inference::isvc_resource(),
    );
    let mut tick = tokio::time::interval(Duration::from_millis(args.patch_interval_ms));
    let mut patches = Vec::new();
    for (k, i) in targets.iter().enumerate() {
        tick.tick().await;
        let (name, revision) = (workload::name(*i), format!("r{k}"));
        lock(&pending)
            .want
            .insert(name.clone(), (revision.clone(), Instant::now()));
        let isvcs = isvcs.clone();
        patches.push(tokio::spawn(async move {
            change_env(&isvcs, &name, &revision).await
        }));
    }
    for patch in patches {
        patch.await??;
    }
    let all_seen = || async { Ok((lock(&pending).seen.len() >= targets.len()).then_some(())) };
    let waited = acceptance_tests::wait_for(
        "every changed Deployment",
        Duration::from_secs(120),
        all_seen,
    )
    .await;
    watch.abort();
    let pending = lock(&pending);
    if let Err(error) = waited {
        eprintln!("   latency: {error:#}");
    }
    let mut samples_ms: Vec<f64> = pending
        .seen
        .values()
        .map(|d| d.as_secs_f64() * 1000.0)
        .collect();
    samples_ms.sort_by(f64::total_cmp);
    Ok(Latency {
        missed: targets.len() - samples_ms.len(),
        samples_ms,
    })
}

/// Sets the container env of InferenceService `name` to `BENCH_REV=revision` (a JSON merge patch, as `kubectl
/// patch --type merge` sends).
async fn change_env(isvcs: &Api<DynamicObject>, name: &str, revision: &str) -> anyhow::Result<()> {
    let patch =
        json!({"spec": {"container": {"env": [{"name": REVISION_ENV, "value": revision}]}}});
    isvcs
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .with_context(|| format!("changing the env of {name}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let latency = Latency {
            samples_ms: (1..=100).map(f64::from).collect(),
            missed: 0,
        };
        assert_eq!(latency.percentile(50.0), Some(50.0));
        assert_eq!(latency.percentile(99.0), Some(99.0));
        assert_eq!(Latency::default().percentile(50.0), None);
    }
}
