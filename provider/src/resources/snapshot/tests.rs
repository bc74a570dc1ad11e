use std::sync::atomic::{AtomicUsize, Ordering};

use kube::api::ObjectMeta;

use super::*;

fn key() -> Key {
    (
        "modelfleet.io/v1alpha1/inferenceservices".into(),
        "ns".into(),
    )
}

fn object(name: &str) -> DynamicObject {
    DynamicObject {
        types: None,
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: serde_json::json!({"spec": {"replicas": 1}}),
    }
}

/// A snapshot of `names`, taken `age` ago.
fn snapshot(names: &[&str], age: Duration) -> Snapshot {
    Snapshot {
        taken: Instant::now().checked_sub(age).expect("uptime"),
        objects: names.iter().map(|n| ((*n).to_owned(), object(n))).collect(),
    }
}

/// A `list` for [`Snapshots::lookup`] that counts its calls and returns `result`.
async fn counted(calls: &AtomicUsize, result: Option<Snapshot>) -> Option<Snapshot> {
    calls.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    result
}

/// The [`LIST_AFTER`] reads of `key()` that are GETs, so the next read lists.
async fn reach_the_threshold(snapshots: &Snapshots, calls: &AtomicUsize) {
    for _ in 0..LIST_AFTER {
        snapshots.lookup(key(), "a", || counted(calls, None)).await;
    }
}

fn is_listed(lookup: &Lookup, name: &str) -> bool {
    matches!(lookup, Lookup::Listed(o) if o.metadata.name.as_deref() == Some(name))
}

#[tokio::test]
async fn the_first_reads_are_gets_then_one_list_serves_the_rest() {
    let snapshots = Snapshots::default();
    let calls = AtomicUsize::new(0);
    for _ in 0..LIST_AFTER {
        let found = snapshots
            .lookup(key(), "a", || {
                counted(&calls, Some(snapshot(&["a"], Duration::ZERO)))
            })
            .await;
        assert!(matches!(found, Lookup::Get));
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "no LIST for the first reads"
    );
    for name in ["a", "a"] {
        let found = snapshots
            .lookup(key(), name, || {
                counted(&calls, Some(snapshot(&["a"], Duration::ZERO)))
            })
            .await;
        assert!(is_listed(&found, "a"), "{found:?}");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "one LIST serves every later read"
    );
    let missing = snapshots
        .lookup(key(), "gone", || counted(&calls, None))
        .await;
    assert!(
        matches!(missing, Lookup::Get),
        "a name the list lacks is a GET"
    );
    let other_namespace = snapshots
        .lookup(("k".into(), "other".into()), "a", || counted(&calls, None))
        .await;
    assert!(
        matches!(other_namespace, Lookup::Get),
        "counted per kind and namespace"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn reads_arriving_during_a_list_wait_for_it() {
    let snapshots = Snapshots::default();
    let calls = AtomicUsize::new(0);
    reach_the_threshold(&snapshots, &calls).await;
    let reads = (0..5).map(|_| {
        snapshots.lookup(key(), "a", || {
            counted(&calls, Some(snapshot(&["a"], Duration::ZERO)))
        })
    });
    let found = futures::future::join_all(reads).await;
    assert!(found.iter().all(|f| is_listed(f, "a")), "{found:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_list_sends_every_later_read_to_a_get() {
    let snapshots = Snapshots::default();
    let calls = AtomicUsize::new(0);
    for _ in 0..=LIST_AFTER + 3 {
        let found = snapshots.lookup(key(), "a", || counted(&calls, None)).await;
        assert!(matches!(found, Lookup::Get));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "listed once, never again");
}

#[tokio::test]
async fn an_old_snapshot_is_taken_again() {
    let snapshots = Snapshots::default();
    let calls = AtomicUsize::new(0);
    let old = MAX_AGE + Duration::from_secs(1);
    reach_the_threshold(&snapshots, &calls).await;
    let first = snapshots
        .lookup(key(), "a", || counted(&calls, Some(snapshot(&["a"], old))))
        .await;
    assert!(is_listed(&first, "a"));
    let second = snapshots
        .lookup(key(), "b", || {
            counted(&calls, Some(snapshot(&["b"], Duration::ZERO)))
        })
        .await;
    assert!(
        is_listed(&second, "b"),
        "served from the new list: {second:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_write_drops_the_snapshots_and_the_counts() {
    let snapshots = Snapshots::default();
    let calls = AtomicUsize::new(0);
    for _ in 0..=LIST_AFTER {
        snapshots
            .lookup(key(), "a", || {
                counted(&calls, Some(snapshot(&["a"], Duration::ZERO)))
            })
            .await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    snapshots.invalidate();
    let found = snapshots
        .lookup(key(), "a", || {
            counted(&calls, Some(snapshot(&["a"], Duration::ZERO)))
        })
        .await;
    assert!(
        matches!(found, Lookup::Get),
        "counting starts again after a write"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
