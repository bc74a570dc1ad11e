//! The end state every drill checks: each object the burst left converges to its spec, nothing the burst deleted
//! remains, no owner has two Deployments or Jobs, no child outlives its owner, no status went back, and no run got
//! its Job created twice (audit log).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::ListParams;
use serde_json::Value;

use super::burst::{Fleet, KINDS, image};
use crate::audit::{AuditEvent, AuditMark};
use crate::modelfleet;

/// What one look at the namespace found.
#[derive(Debug, Default, Clone)]
pub struct Look {
    /// Objects the burst left that are not converged yet (kind/name: why).
    pub pending: Vec<String>,
    /// Objects the burst left that are gone or carry another UID.
    pub lost: usize,
    /// Owners with two Deployments or two Jobs.
    pub duplicates: usize,
    /// Children whose owner is not live, or without an owner.
    pub orphans: usize,
}

impl Look {
    /// Whether everything converged and nothing is lost, doubled or orphaned.
    pub fn clean(&self) -> bool {
        self.pending.is_empty() && self.lost == 0 && self.duplicates == 0 && self.orphans == 0
    }
}

/// The live objects of the three kinds in `namespace` as (kind, name) -> object.
async fn live_objects(
    client: &kube::Client,
    namespace: &str,
) -> anyhow::Result<BTreeMap<(String, String), Value>> {
    let mut live = BTreeMap::new();
    for kind in KINDS {
        for object in modelfleet::api(client, namespace, kind)
            .list(&ListParams::default())
            .await?
        {
            let name = object.metadata.name.clone().unwrap_or_default();
            live.insert((kind.to_owned(), name), serde_json::to_value(object)?);
        }
    }
    Ok(live)
}

/// One look at `namespace` against what `fleet` says.
///
/// Errors: a list failed.
pub async fn look(client: &kube::Client, namespace: &str, fleet: &Fleet) -> anyhow::Result<Look> {
    let live = live_objects(client, namespace).await?;
    let deployments = Api::<Deployment>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let jobs = Api::<Job>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let services = Api::<Service>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await?
        .items;
    let live_uids: BTreeSet<String> = live
        .values()
        .filter_map(|o| o["metadata"]["uid"].as_str().map(str::to_owned))
        .collect();
    let mut look = Look::default();
    let metas = deployments
        .iter()
        .map(|d| &d.metadata)
        .chain(jobs.iter().map(|j| &j.metadata))
        .chain(services.iter().map(|s| &s.metadata));
    look.orphans = metas.filter(|m| !owned_by_live(m, &live_uids)).count();
    look.duplicates = doubled(deployments.iter().map(|d| &d.metadata))
        + doubled(jobs.iter().map(|j| &j.metadata));
    for ((kind, name), expected) in &fleet.objects {
        let object = live.get(&(kind.clone(), name.clone()));
        let Some(expected) = expected else {
            if object.is_some() {
                look.pending
                    .push(format!("{kind}/{name}: deleted, still present"));
            }
            continue;
        };
        let Some(object) = object.filter(|o| o["metadata"]["uid"] == expected.uid.as_str()) else {
            look.lost += 1;
            continue;
        };
        if let Some(why) = unconverged(kind, object, expected.version, &deployments, &jobs) {
            look.pending.push(format!("{kind}/{name}: {why}"));
        }
    }
    Ok(look)
}

/// Why `object` (at spec `version`) is not converged yet, or None.
fn unconverged(
    kind: &str,
    object: &Value,
    version: u64,
    deployments: &[Deployment],
    jobs: &[Job],
) -> Option<String> {
    let generation = &object["metadata"]["generation"];
    if object["status"]["observedGeneration"] != *generation {
        return Some(format!(
            "observedGeneration {} != generation {generation}",
            object["status"]["observedGeneration"]
        ));
    }
    let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
    let owned = |m: &ObjectMeta| owner_uids(m).contains(&uid.to_owned());
    match kind {
        "InferenceService" => {
            let Some(deployment) = deployments.iter().find(|d| owned(&d.metadata)) else {
                return Some("no Deployment".into());
            };
            let live = deployment
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.clone())
                .unwrap_or_default();
            (live != image(version)).then(|| format!("Deployment image {live}"))
        }
        "TrainingRun" => {
            let Some(job) = jobs.iter().find(|j| owned(&j.metadata)) else {
                return Some("no Job".into());
            };
            let suspend = job.spec.as_ref().and_then(|s| s.suspend).unwrap_or(false);
            (suspend != (version % 2 == 1)).then(|| format!("Job suspend {suspend}"))
        }
        _ => None,
    }
}

/// The UIDs of `meta`'s ownerReferences, in their order.
pub fn owner_uids(meta: &ObjectMeta) -> Vec<String> {
    meta.owner_references
        .iter()
        .flatten()
        .map(|o| o.uid.clone())
        .collect()
}

/// A child is orphaned when it has no owner, or an owner of ours that is not live. (The drill's namespace holds
/// nothing else: the `kubernetes`-like Services of the namespace do not exist in a test namespace.)
fn owned_by_live(meta: &ObjectMeta, live: &BTreeSet<String>) -> bool {
    let owners = meta.owner_references.clone().unwrap_or_default();
    !owners.is_empty()
        && owners
            .iter()
            .all(|o| o.api_version != "modelfleet.io/v1alpha1" || live.contains(&o.uid))
}

/// Owners with more than one of these children.
fn doubled<'a>(metas: impl Iterator<Item = &'a ObjectMeta>) -> usize {
    let mut per_owner: BTreeMap<String, usize> = BTreeMap::new();
    for meta in metas {
        for uid in owner_uids(meta) {
            *per_owner.entry(uid).or_default() += 1;
        }
    }
    per_owner.values().filter(|n| **n > 1).count()
}

/// Looks until the namespace is clean or `timeout` passes; returns the time it took and the last look.
///
/// Errors: a list failed for longer than the timeout.
pub async fn converge(
    client: &kube::Client,
    namespace: &str,
    fleet: &Fleet,
    timeout: Duration,
) -> anyhow::Result<(Duration, Look)> {
    let started = Instant::now();
    loop {
        match look(client, namespace, fleet).await {
            Ok(look) if look.clean() || started.elapsed() > timeout => {
                return Ok((started.elapsed(), look));
            }
            Err(e) if started.elapsed() > timeout => return Err(e),
            _ => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// TrainingRun names whose Jobs were created (a `create`, or an apply answered 201) more often than the name had
/// incarnations, since `mark`: a run whose Job was created twice. One entry per such name: the counts and the audit
/// trail of its Job and run (every write: time, verb, user, answer), the evidence a failing drill leaves in its panic
/// message (and on stderr, one write per line).
///
/// Errors: the audit log could not be read.
pub fn jobs_created_twice(
    mark: &AuditMark,
    namespace: &str,
    fleet: &Fleet,
) -> anyhow::Result<Vec<String>> {
    let mut creates: BTreeMap<String, usize> = BTreeMap::new();
    let writes = mark.writes()?;
    for event in &writes {
        let Some(object) = &event.object_ref else {
            continue;
        };
        let created = event.verb == "create"
            || (event.verb == "patch"
                && event
                    .response_status
                    .as_ref()
                    .is_some_and(|s| s["code"] == 201));
        let is_job = object["resource"] == "jobs" && object["namespace"] == namespace;
        let success = event
            .response_status
            .as_ref()
            .is_some_and(|s| s["code"].as_u64().is_some_and(|c| c < 300));
        if created && is_job && success {
            let name = object["name"].as_str().unwrap_or_default().to_owned();
            *creates.entry(name).or_default() += 1;
        }
    }
    let mut evidence = Vec::new();
    for (name, created) in &creates {
        let incarnations = fleet.run_incarnations.get(name).copied().unwrap_or(0);
        if *created <= incarnations {
            continue;
        }
        let trail: Vec<String> = writes
            .iter()
            .filter(|e| {
                e.object_ref.as_ref().is_some_and(|o| {
                    o["namespace"] == namespace
                        && o["name"] == name.as_str()
                        && (o["resource"] == "jobs" || o["resource"] == "trainingruns")
                })
            })
            .map(trail_line)
            .collect();
        let head = format!(
            "Job {namespace}/{name} created {created} times for {incarnations} incarnation(s)"
        );
        eprintln!("DRILL evidence: {head}; writes on it and its run:");
        for line in &trail {
            eprintln!("  {line}");
        }
        evidence.push(format!("{head}: {}", trail.join("; ")));
    }
    Ok(evidence)
}

/// One audit entry as `time verb resource[/subresource] by user -> code`.
fn trail_line(event: &AuditEvent) -> String {
    let object = event.object_ref.as_ref().expect("filtered on it");
    format!(
        "{} {} {}{} by {} -> {}",
        event.stage_timestamp.as_deref().unwrap_or("?"),
        event.verb,
        object["resource"].as_str().unwrap_or_default(),
        object["subresource"]
            .as_str()
            .map(|s| format!("/{s}"))
            .unwrap_or_default(),
        event.effective_user(),
        event
            .response_status
            .as_ref()
            .map_or("?".to_owned(), |s| s["code"].to_string())
    )
}

/// A background sampler of status regressions: every second it lists the three kinds and counts an object whose
/// `status.observedGeneration` went back, or whose finished phase (`Succeeded`, `Failed`) changed, per UID.
#[derive(Debug, Clone, Default)]
pub struct Regressions {
    seen: Arc<Mutex<Seen>>,
}

/// Per UID the last observedGeneration and phase, and the regressions seen (kind/name: from -> to).
type Seen = (BTreeMap<String, (i64, String)>, Vec<String>);

impl Regressions {
    /// Starts sampling `namespace` until the returned handle is aborted.
    pub fn sample(&self, client: kube::Client, namespace: String) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                if let Ok(live) = live_objects(&client, &namespace).await {
                    me.record(live.values());
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    }

    fn record<'a>(&self, objects: impl Iterator<Item = &'a Value>) {
        let mut guard = self.seen.lock().expect("regressions lock");
        let (seen, count) = &mut *guard;
        for object in objects {
            let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
            let generation = object["status"]["observedGeneration"]
                .as_i64()
                .unwrap_or(-1);
            let phase = object["status"]["phase"].as_str().unwrap_or_default();
            if let Some((last_generation, last_phase)) = seen.get(uid) {
                let finished = matches!(last_phase.as_str(), "Succeeded" | "Failed");
                if generation < *last_generation || (finished && phase != last_phase) {
                    count.push(format!(
                        "{}/{}: observedGeneration {last_generation} -> {generation}, phase {last_phase:?} -> {phase:?}",
                        object["kind"].as_str().unwrap_or_default(),
                        object["metadata"]["name"].as_str().unwrap_or_default()
                    ));
                }
            }
            seen.insert(uid.to_owned(), (generation, phase.to_owned()));
        }
    }

    /// Regressions counted so far.
    pub fn count(&self) -> usize {
        self.seen.lock().expect("regressions lock").1.len()
    }

    /// The regressions seen so far, one line each (kind/name: what went back).
    pub fn details(&self) -> Vec<String> {
        self.seen.lock().expect("regressions lock").1.clone()
    }
}
