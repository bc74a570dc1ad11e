//! Operator load drill of issue 18 (`make drills`, docs/RELIABILITY.md): DRILL_LOAD_SERVICES InferenceServices
//! (default 200; `make drills-full`: 1000) and DRILL_LOAD_RUNS TrainingRuns (default 60; full: 300) on one operator
//! resyncing every 5 s; then DRILL_LOAD_CHANGES spec changes (default 20), one object at a time, each timed until it
//! reaches its child (an image in the Deployment template, a suspend toggle on the Job) while the rest resync. Prints
//! p50/p99; asserts the end state (nothing lost, doubled or orphaned), never a time.

use std::time::{Duration, Instant};

use acceptance_tests::drills::burst::{Expected, Fleet, image, manifest, short, spec};
use acceptance_tests::drills::check::converge;
use acceptance_tests::drills::{Figures, Rng, env_usize, seed};
use acceptance_tests::process::operator_kubeconfig;
use acceptance_tests::{Cluster, OperatorProcess, modelfleet, wait_for};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

/// Creates `count` objects of `kind` (names `<short>-0..`) 16 at a time and records them in `fleet`.
async fn create_all(
    client: &kube::Client,
    ns: &str,
    kind: &str,
    count: usize,
    fleet: &mut Fleet,
) -> anyhow::Result<()> {
    let api = modelfleet::api(client, ns, kind);
    let created: Vec<_> = futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            async move {
                let name = format!("{}-{i}", short(kind));
                let object = serde_json::from_value(manifest(kind, &name, 0))?;
                let object = api.create(&PostParams::default(), &object).await?;
                anyhow::Ok((name, object.metadata.uid.unwrap_or_default()))
            }
        })
        .buffer_unordered(16)
        .try_collect()
        .await?;
    for (name, uid) in created {
        if kind == "TrainingRun" {
            fleet.run_incarnations.insert(name.clone(), 1);
        }
        let expected = Some(Expected { uid, version: 0 });
        fleet.objects.insert((kind.to_owned(), name), expected);
    }
    Ok(())
}

/// The `q` quantile (0..=1) of `sorted` (nearest rank).
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((sorted.len() as f64) * q).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "make drills runs the drills on their own instance: some restart its API server and etcd"]
async fn drill_load_a_spec_change_reaches_its_child_while_the_rest_resync() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("drill-load").await?;
    let ns = ns.name();
    let client = cluster.client().await?;
    let services = env_usize("DRILL_LOAD_SERVICES", 200);
    let runs = env_usize("DRILL_LOAD_RUNS", 60);
    let changes = env_usize("DRILL_LOAD_CHANGES", 20);
    let seed = seed();
    println!("DRILL load seed={seed} services={services} runs={runs} changes={changes}");
    let kubeconfig = operator_kubeconfig(&cluster)?;
    let flags = ["--resync-seconds", "5"];
    let operator = OperatorProcess::start(&cluster, &kubeconfig, ns, "fleet", &flags, &[])?;
    let started = Instant::now();
    let mut fleet = Fleet::default();
    create_all(&client, ns, "InferenceService", services, &mut fleet).await?;
    create_all(&client, ns, "TrainingRun", runs, &mut fleet).await?;
    let (first, look) = converge(&client, ns, &fleet, Duration::from_secs(900)).await?;
    assert!(look.clean(), "not converged: {:?}", look.pending);
    let created = started.elapsed() - first;

    let mut rng = Rng::new(seed);
    let mut latencies = Vec::new();
    for change in 0..changes {
        let (kind, count) = if change % 2 == 0 {
            ("InferenceService", services)
        } else {
            ("TrainingRun", runs)
        };
        let name = format!("{}-{}", short(kind), rng.below(count as u64));
        let key = (kind.to_owned(), name.clone());
        let expected = fleet.objects[&key].clone().expect("created");
        let version = expected.version + 1;
        let patch = json!({"spec": spec(kind, version)});
        let sent = Instant::now();
        modelfleet::api(&client, ns, kind)
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        let what = format!("{kind}/{name} version {version} in its child");
        wait_for(&what, Duration::from_secs(120), || {
            reached(&client, ns, kind, &name, version)
        })
        .await
        .map_err(|e| e.context(operator.log_tail()))?;
        latencies.push(sent.elapsed());
        fleet.objects.insert(
            key,
            Some(Expected {
                version,
                ..expected
            }),
        );
    }
    let (_, look) = converge(&client, ns, &fleet, Duration::from_secs(240)).await?;
    latencies.sort();
    let figures = Figures {
        converge: first,
        lost: look.lost,
        duplicates: look.duplicates,
        orphans: look.orphans,
        ..Figures::default()
    };
    figures.print(
        "load",
        &format!(
            "seed={seed} services={services} runs={runs} create_s={:.1} changes={changes} p50_s={:.2} p99_s={:.2} \
             max_s={:.2}",
            created.as_secs_f64(),
            quantile(&latencies, 0.5).as_secs_f64(),
            quantile(&latencies, 0.99).as_secs_f64(),
            latencies.last().copied().unwrap_or_default().as_secs_f64()
        ),
    );
    assert!(look.pending.is_empty(), "not converged: {:?}", look.pending);
    figures.assert_zeros("load");
    Ok(())
}

/// Whether `kind/name`'s child shows spec `version` (Deployment image, Job suspend).
async fn reached(
    client: &kube::Client,
    ns: &str,
    kind: &str,
    name: &str,
    version: u64,
) -> anyhow::Result<Option<()>> {
    let shown = if kind == "InferenceService" {
        let deployment = Api::<Deployment>::namespaced(client.clone(), ns)
            .get(name)
            .await?;
        let live = deployment
            .spec
            .and_then(|s| s.template.spec)
            .and_then(|s| s.containers.first().and_then(|c| c.image.clone()));
        live == Some(image(version))
    } else {
        let job = Api::<Job>::namespaced(client.clone(), ns).get(name).await?;
        job.spec.and_then(|s| s.suspend).unwrap_or(false) == (version % 2 == 1)
    };
    Ok(shown.then_some(()))
}
