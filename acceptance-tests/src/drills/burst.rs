//! A seeded burst of creates, updates and deletes across InferenceService, TrainingRun and Dataset, and the model of
//! what each object's spec says afterwards (what the checks compare the cluster with).

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::Rng;
use crate::modelfleet;

/// The three kinds of the burst.
pub const KINDS: [&str; 3] = ["InferenceService", "TrainingRun", "Dataset"];

/// What the burst left for one name: its UID and the version of its spec (what the children must show).
#[derive(Debug, Clone)]
pub struct Expected {
    /// The UID of the live incarnation.
    pub uid: String,
    /// The spec version written last (image tag, suspend toggle, allowed accounts).
    pub version: u64,
}

/// The burst's model: per (kind, name) the live incarnation (None once deleted) and how many incarnations a name had.
#[derive(Debug, Default)]
pub struct Fleet {
    /// Live objects as the burst left them.
    pub objects: BTreeMap<(String, String), Option<Expected>>,
    /// Incarnations (successful creates) per TrainingRun name: the most Jobs that name may ever get.
    pub run_incarnations: BTreeMap<String, usize>,
    /// Operations the API server refused (e.g. a create while the last incarnation still terminates).
    pub refused: usize,
    /// Operations sent.
    pub sent: usize,
}

/// The manifest of `kind/name` at spec version `version`.
pub fn manifest(kind: &str, name: &str, version: u64) -> Value {
    let spec = spec(kind, version);
    json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec})
}

/// The spec of `kind` at `version`: an InferenceService's image tag, a TrainingRun's intent (odd: suspended), a
/// Dataset's allowed accounts.
pub fn spec(kind: &str, version: u64) -> Value {
    match kind {
        "InferenceService" => json!({"model": {"name": "m"},
            "container": {"image": image(version)}}),
        "TrainingRun" => json!({"container": {"image": "modelfleet.local/sim:never"},
            "intent": if version % 2 == 1 { "suspended" } else { "automatic" }}),
        _ => json!({"version": "1", "source": {"uri": "s3://drills/corpus/"},
            "allowedServiceAccounts": ["default", format!("trainer-{version}")]}),
    }
}

/// The InferenceService image of spec `version`.
pub fn image(version: u64) -> String {
    format!("hashicorp/http-echo:1.{version}")
}

impl Fleet {
    /// Sends `ops` random operations over `names` names per kind in `namespace`, waiting 0..`gap_ms` between two;
    /// a name that does not exist is created, one that exists is updated (60 %) or deleted (40 %, background
    /// propagation: the garbage collector removes the children).
    ///
    /// Errors: a request failed for another reason than a refusal by the API server (transport errors are retried
    /// for up to 60 s, so a burst survives an API server restart).
    pub async fn burst(
        &mut self,
        client: &kube::Client,
        namespace: &str,
        rng: &mut Rng,
        ops: usize,
        names: usize,
        gap_ms: u64,
    ) -> anyhow::Result<()> {
        for _ in 0..ops {
            let kind = KINDS[rng.below(3) as usize];
            let name = format!("{}-{}", short(kind), rng.below(names as u64));
            let roll = rng.below(10);
            // Transport and server-side errors (API server restarting, etcd away) are retried for up to 60 s.
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                match self.step(client, namespace, kind, &name, roll).await {
                    Ok(()) => break,
                    Err(e) if std::time::Instant::now() < deadline && transient(&e) => {
                        tokio::time::sleep(Duration::from_millis(250)).await;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            self.sent += 1;
            tokio::time::sleep(rng.millis(0, gap_ms)).await;
        }
        Ok(())
    }

    async fn step(
        &mut self,
        client: &kube::Client,
        namespace: &str,
        kind: &str,
        name: &str,
        roll: u64,
    ) -> Result<(), kube::Error> {
        let api = modelfleet::api(client, namespace, kind);
        let key = (kind.to_owned(), name.to_owned());
        let current = self.objects.get(&key).cloned().flatten();
        let outcome = match current.clone() {
            None => {
                let object = serde_json::from_value(manifest(kind, name, 0)).expect("manifest");
                api.create(&Default::default(), &object).await.map(|o| {
                    let uid = o.metadata.uid.unwrap_or_default();
                    self.objects
                        .insert(key.clone(), Some(Expected { uid, version: 0 }));
                    if kind == "TrainingRun" {
                        *self.run_incarnations.entry(name.to_owned()).or_default() += 1;
                    }
                })
            }
            Some(live) if roll < 6 => {
                let version = live.version + 1;
                let patch = json!({"spec": spec(kind, version)});
                api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map(|_| {
                        self.objects.insert(
                            key.clone(),
                            Some(Expected {
                                uid: live.uid,
                                version,
                            }),
                        );
                    })
            }
            Some(_) => api
                .delete(name, &DeleteParams::background())
                .await
                .map(|_| {
                    self.objects.insert(key.clone(), None);
                }),
        };
        match outcome {
            // A create whose answer was lost (API server restarting) and was retried: the object is ours.
            Err(kube::Error::Api(e)) if e.code == 409 && current.is_none() => {
                let live = api.get(name).await?;
                if live.metadata.deletion_timestamp.is_none() {
                    let uid = live.metadata.uid.unwrap_or_default();
                    self.objects.insert(key, Some(Expected { uid, version: 0 }));
                    if kind == "TrainingRun" {
                        *self.run_incarnations.entry(name.to_owned()).or_default() += 1;
                    }
                } else {
                    self.refused += 1;
                }
                Ok(())
            }
            Err(kube::Error::Api(e)) if e.code == 409 || e.code == 404 => {
                self.refused += 1;
                Ok(())
            }
            other => other,
        }
    }
}

/// `isvc`, `run`, `ds`: the name prefix of each kind.
pub fn short(kind: &str) -> &'static str {
    match kind {
        "InferenceService" => "isvc",
        "TrainingRun" => "run",
        _ => "ds",
    }
}

/// Whether `e` may pass: a transport error or a server-side one (5xx, 429).
fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(status) => status.code >= 500 || status.code == 429,
        _ => true,
    }
}
