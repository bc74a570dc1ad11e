//! Watching convergence: when every InferenceService's status describes its generation and every child exists.
//!
//! Watches (not polls), so the moment is exact to the event and the benchmark adds one watch per kind to the API
//! server's load, the same in the operator phase and the floor. Children are watched metadata-only with the
//! operator's label (`modelfleet.io/inference-service`), as the operator's own child watches are.

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::api::{DynamicObject, PartialObjectMeta};
use kube::core::Resource;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, ResourceExt};
use model_fleet_api::render::LABEL_INFERENCE;
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

use acceptance_tests::inference::{isvc_resource, observed_current_generation, route_resource};

/// One change a watch reports, with the watcher's restarts folded away.
pub enum Change<K> {
    /// Added or modified (also every object of a (re)list).
    Apply(K),
    /// Deleted.
    Delete(K),
    /// The (re)list finished.
    Synced,
}

/// Runs a watch of `api` until the handle is aborted, feeding each change to `on` under `state`'s lock. Watch
/// errors are retried with kube's default backoff and counted in `errors`.
pub fn spawn_watch<K, S, F>(
    api: Api<K>,
    config: watcher::Config,
    state: Arc<Mutex<S>>,
    errors: Arc<Mutex<Vec<String>>>,
    mut on: F,
) -> JoinHandle<()>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    S: Send + 'static,
    F: FnMut(&mut S, Change<K>) + Send + 'static,
{
    tokio::spawn(async move {
        let mut stream = watcher::watcher(api, config).default_backoff().boxed();
        while let Some(item) = stream.next().await {
            let change = match item {
                Ok(Event::Apply(k) | Event::InitApply(k)) => Change::Apply(k),
                Ok(Event::Delete(k)) => Change::Delete(k),
                Ok(Event::InitDone) => Change::Synced,
                Ok(Event::Init) => continue,
                Err(error) => {
                    lock(&errors).push(error.to_string());
                    continue;
                }
            };
            on(&mut lock(&state), change);
        }
    })
}

/// Locks `mutex`, ignoring poisoning (a panicking watch task is reported by the missing progress).
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How far convergence got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// InferenceServices whose `status.observedGeneration` equals `metadata.generation`.
    pub observed: usize,
    /// Deployments, Services and HTTPRoutes with the operator's label.
    pub children: [usize; 3],
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [deployments, services, routes] = self.children;
        write!(
            f,
            "{} statuses current, {deployments} Deployments, {services} Services, {routes} HTTPRoutes",
            self.observed
        )
    }
}

#[derive(Default)]
struct State {
    target: usize,
    current: HashMap<String, bool>,
    children: [HashSet<String>; 3],
    synced: usize,
    done_at: Option<Instant>,
}

impl State {
    fn progress(&self) -> Progress {
        Progress {
            observed: self.current.values().filter(|current| **current).count(),
            children: [0, 1, 2].map(|k| self.children[k].len()),
        }
    }

    fn note(&mut self) {
        let progress = self.progress();
        let done =
            progress.observed >= self.target && progress.children.iter().all(|c| *c >= self.target);
        if done && self.done_at.is_none() && self.target > 0 {
            self.done_at = Some(Instant::now());
        }
    }

    fn isvc(&mut self, change: Change<DynamicObject>) {
        match change {
            Change::Apply(object) => {
                self.current
                    .insert(object.name_any(), observed_current_generation(&object));
            }
            Change::Delete(object) => {
                self.current.remove(&object.name_any());
            }
            Change::Synced => self.synced += 1,
        }
        self.note();
    }

    fn child<K: Resource>(&mut self, kind: usize, change: Change<K>) {
        match change {
            Change::Apply(object) => {
                self.children[kind].insert(object.name_any());
            }
            Change::Delete(object) => {
                self.children[kind].remove(&object.name_any());
            }
            Change::Synced => self.synced += 1,
        }
        self.note();
    }
}

/// Watches of one namespace's InferenceServices and children; stopped on drop.
pub struct Tracker {
    state: Arc<Mutex<State>>,
    errors: Arc<Mutex<Vec<String>>>,
    tasks: Vec<JoinHandle<()>>,
}

/// Number of watches a [`Tracker`] runs.
const WATCHES: usize = 4;

impl Tracker {
    /// Starts the watches of `ns` and waits until each has finished its initial list, so nothing created afterwards
    /// is missed and the watches are not racing the clock.
    ///
    /// Errors: the watches did not sync within 60 s.
    pub async fn start(client: &kube::Client, ns: &str) -> anyhow::Result<Tracker> {
        let state = Arc::new(Mutex::new(State::default()));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let labelled = watcher::Config::default().labels(LABEL_INFERENCE);
        let isvcs = Api::<DynamicObject>::namespaced_with(client.clone(), ns, &isvc_resource());
        let deployments = Api::<PartialObjectMeta<Deployment>>::namespaced(client.clone(), ns);
        let services = Api::<PartialObjectMeta<Service>>::namespaced(client.clone(), ns);
        let routes = Api::<DynamicObject>::namespaced_with(client.clone(), ns, &route_resource());
        let (s, e) = (&state, &errors);
        let tasks = vec![
            spawn_watch(
                isvcs,
                watcher::Config::default(),
                s.clone(),
                e.clone(),
                State::isvc,
            ),
            spawn_watch(
                deployments,
                labelled.clone(),
                s.clone(),
                e.clone(),
                |st, c| st.child(0, c),
            ),
            spawn_watch(services, labelled.clone(), s.clone(), e.clone(), |st, c| {
                st.child(1, c)
            }),
            spawn_watch(routes, labelled, s.clone(), e.clone(), |st, c| {
                st.child(2, c)
            }),
        ];
        let tracker = Tracker {
            state,
            errors,
            tasks,
        };
        let synced = || async { Ok((lock(&tracker.state).synced >= WATCHES).then_some(())) };
        acceptance_tests::wait_for(
            "the benchmark's watches synced",
            Duration::from_secs(60),
            synced,
        )
        .await?;
        Ok(tracker)
    }

    /// Waits until `n` InferenceServices have a current status and `n` of each child exist; returns the moment the
    /// last of them was seen.
    ///
    /// Errors: `timeout` passed first (the progress and any watch errors are in the message).
    pub async fn wait_converged(&self, n: usize, timeout: Duration) -> anyhow::Result<Instant> {
        {
            let mut state = lock(&self.state);
            state.target = n;
            state.note();
        }
        let deadline = Instant::now() + timeout;
        let mut last_report = Instant::now();
        loop {
            if let Some(at) = lock(&self.state).done_at {
                return Ok(at);
            }
            if Instant::now() >= deadline {
                anyhow::bail!(
                    "not converged after {timeout:?}: {}; watch errors: {:?}",
                    self.progress(),
                    lock(&self.errors)
                );
            }
            if last_report.elapsed() >= Duration::from_secs(15) {
                eprintln!("   ... {}", self.progress());
                last_report = Instant::now();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The current progress.
    pub fn progress(&self) -> Progress {
        lock(&self.state).progress()
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}
