//! The chart's RBAC proved rule by rule (issue 15). The operator runs with the chart's rules
//! (`charts/model-fleet-operator/files/rbac/`) through a scenario that uses every code path that
//! calls the API server; then once per rule with that rule removed, where its log must show the
//! API server refusing a verb of exactly that rule (`cannot VERB resource "RESOURCE"`): no rule is
//! unused. The run with every rule shows no refusal at all: none is missing.
//!
//! The control plane runs the `OwnerReferencesPermissionEnforcement` admission plugin (as
//! OpenShift does), so the `*/finalizers` rule behind `blockOwnerDeletion` is checked too.
//! An `edit` user can create an InferenceService and a `view` user can only read it, through the
//! chart's aggregated roles.

use std::time::Duration;

use acceptance_tests::chart::{Helm, find};
use acceptance_tests::inference::{create_gateway, echo_spec};
use acceptance_tests::modelfleet::{api, bound_claim, create};
use acceptance_tests::namespace::resource_quota;
use acceptance_tests::rbac::{
    http_add_on_rules, kubeconfig_with_exact_rules, lease_rules, operator_rules,
};
use acceptance_tests::{Cluster, OperatorProcess, TestNamespace, wait_for};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(90);

fn object(kind: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec})
}

/// Creates what makes the operator use every rule: a served InferenceService with a KEDA trigger
/// and a route on the namespace's Gateway (Deployment, Service, ScaledObject, HTTPRoute, the
/// Gateway read, events, status), one whose pods cannot be scheduled (the pod list behind
/// `Unschedulable`), a Dataset on a claim (the claim watch) used by a TrainingRun (Job, the
/// in-use finalizer), a TrainingRun whose Job a GPU quota refuses (the Job's pods, then its
/// `FailedCreate` Events).
async fn exercise(cluster: &Cluster, client: &kube::Client, ns: &str) -> anyhow::Result<()> {
    create_gateway(client, ns).await?;
    let mut served = echo_spec();
    served["replicas"] = json!({"min": 1, "max": 2});
    served["scaling"] = json!({"triggers": [{"type": "redis",
        "metadata": {"address": "redis.ml.svc:6379", "listName": "q", "listLength": "5"}}]});
    create(client, ns, object("InferenceService", "served", served)).await?;
    // scaling.http: the InterceptorRoute (cluster-wide rule) and the ReferenceGrant in the add-on's namespace, which
    // each test operator is told is its own namespace (the Role of http-add-on-rules.yaml).
    let mut woken = echo_spec();
    woken["replicas"] = json!({"min": 0, "max": 2});
    woken["scaling"] = json!({"http": {}});
    woken["gateway"]["pathPrefix"] = json!("/woken");
    create(client, ns, object("InferenceService", "woken", woken)).await?;
    let mut pending = echo_spec();
    pending.as_object_mut().unwrap().remove("gateway");
    pending["gpu"] = json!({"count": 0, "nodeSelector": {"modelfleet.io/no-such-node": "true"}});
    create(client, ns, object("InferenceService", "pending", pending)).await?;
    bound_claim(cluster, ns, "corpus-v1", "ReadOnlyMany")?;
    create(
        client,
        ns,
        object(
            "Dataset",
            "corpus",
            json!({"version": "1",
        "source": {"uri": "s3://bucket/corpus/v1/"}, "pvc": {"claimName": "corpus-v1"},
        "allowedServiceAccounts": ["default"]}),
        ),
    )
    .await?;
    create(
        client,
        ns,
        object(
            "TrainingRun",
            "reader",
            json!({"container": {"image": "modelfleet.local/sim:never"},
        "datasets": [{"name": "corpus", "version": "1", "mountPath": "/data/corpus"}]}),
        ),
    )
    .await?;
    resource_quota(client, ns, "no-gpus", ("requests.nvidia.com/gpu", "0")).await?;
    create(
        client,
        ns,
        object(
            "TrainingRun",
            "refused",
            json!({"container": {"image": "modelfleet.local/sim:never"}, "gpu": {"count": 1}}),
        ),
    )
    .await?;
    Ok(())
}

/// The log with JSON string escapes undone, so API server messages read as they were sent.
fn log_text(operator: &OperatorProcess) -> String {
    std::fs::read_to_string(&operator.log)
        .unwrap_or_default()
        .replace("\\\"", "\"")
}

/// `cannot VERB resource "RESOURCE"` for every verb and resource of `rule`: how the API server
/// words a refusal the rule would have allowed.
fn refusals(rule: &Value) -> Vec<String> {
    let list = |k: &str| -> Vec<String> {
        rule[k]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let mut out = Vec::new();
    if list("resources").iter().all(|r| r.ends_with("/finalizers")) {
        // OwnerReferencesPermissionEnforcement's wording for a child with blockOwnerDeletion.
        out.push("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on".to_owned());
    }
    for verb in list("verbs") {
        for resource in list("resources") {
            out.push(format!("cannot {verb} resource \"{resource}\""));
        }
    }
    out
}

struct Variant {
    /// Which rule is removed (`None`: all rules granted).
    removed: Option<(String, Value)>,
    ns: TestNamespace,
    /// The running operator, or, for a variant whose missing rule stops it at start (the lease rule), what it printed
    /// before it exited: whether it exits before or after its metrics server listens is a race.
    operator: Result<OperatorProcess, String>,
}

impl Variant {
    /// The operator's log, as [`log_text`] reads it, or what it printed before exiting at start.
    fn log(&self) -> String {
        match &self.operator {
            Ok(operator) => log_text(operator),
            Err(exited) => exited.replace("\\\"", "\""),
        }
    }

    /// The log tail for failure messages.
    fn tail(&self) -> String {
        match &self.operator {
            Ok(operator) => operator.log_tail(),
            Err(exited) => exited.clone(),
        }
    }
}

async fn start(
    cluster: &Cluster,
    n: usize,
    removed: Option<(String, Value)>,
    rules: Vec<Value>,
) -> anyhow::Result<Variant> {
    let ns = cluster.model_fleet_namespace(&format!("rbac-{n}")).await?;
    let user = format!("model-fleet-rbac-{}", ns.name());
    let kubeconfig = kubeconfig_with_exact_rules(cluster, &user, &rules)?;
    let gateway = format!("--default-gateway={}/shared", ns.name());
    let add_on = format!("--http-add-on-namespace={}", ns.name());
    let operator = OperatorProcess::start(
        cluster,
        &kubeconfig,
        ns.name(),
        "mf",
        &["--resync-seconds", "5", &gateway, &add_on],
        &[],
    );
    // With every rule it must start; without one it may stop at once, and what it printed is checked below.
    let operator = match (operator, &removed) {
        (Ok(operator), _) => Ok(operator),
        (Err(e), Some(_)) => Err(format!("{e:#}")),
        (Err(e), None) => return Err(e),
    };
    Ok(Variant {
        removed,
        ns,
        operator,
    })
}

#[tokio::test]
async fn every_rule_of_the_operator_role_is_needed_and_none_is_missing() -> anyhow::Result<()> {
    let cluster = Cluster::connect()?;
    let client = cluster.client().await?;
    let (operator, lease, add_on) = (operator_rules()?, lease_rules()?, http_add_on_rules()?);
    let mut variants = Vec::new();
    let all: Vec<Value> = operator
        .iter()
        .chain(&lease)
        .chain(&add_on)
        .cloned()
        .collect();
    variants.push(start(&cluster, 0, None, all.clone()).await?);
    for (i, rule) in all.iter().enumerate() {
        let rest: Vec<Value> = all
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, r)| r.clone())
            .collect();
        let label = format!("rule {} ({})", i + 1, rule);
        variants.push(start(&cluster, i + 1, Some((label, rule.clone())), rest).await?);
    }
    for v in &variants {
        exercise(&cluster, &client, v.ns.name()).await?;
    }

    // Each variant without a rule is refused a verb of exactly that rule.
    for v in variants.iter().filter(|v| v.removed.is_some()) {
        let (label, rule) = v.removed.as_ref().unwrap();
        let wanted = refusals(rule);
        wait_for(
            &format!("without {label}: a refusal in the log"),
            TIMEOUT,
            || async {
                let log = v.log();
                Ok(wanted.iter().any(|w| log.contains(w)).then_some(()))
            },
        )
        .await
        .map_err(|e| e.context(format!("wanted one of {wanted:?}\n{}", v.tail())))?;
    }

    // With every rule: everything converges and nothing is refused.
    let full = &variants[0];
    let isvcs = api(&client, full.ns.name(), "InferenceService");
    wait_for(
        "served Ready and pending Unschedulable",
        TIMEOUT,
        || async {
            let reason = |o: &kube::api::DynamicObject| {
                acceptance_tests::inference::condition(o, "Ready").map(|(_, r)| r)
            };
            let served = reason(&isvcs.get("served").await?);
            let pending = reason(&isvcs.get("pending").await?);
            Ok((served.as_deref() == Some("AsExpected")
                && pending.as_deref() == Some("Unschedulable"))
            .then_some(()))
        },
    )
    .await
    .map_err(|e| e.context(full.tail()))?;
    let runs = api(&client, full.ns.name(), "TrainingRun");
    wait_for("the refused run to say why", TIMEOUT, || async {
        let run = runs.get("refused").await?;
        let message = acceptance_tests::inference::condition_message(&run, "Ready");
        Ok(message
            .starts_with("run stalled: the Job cannot create pods: ")
            .then_some(()))
    })
    .await
    .map_err(|e| e.context(full.tail()))?;
    let datasets = api(&client, full.ns.name(), "Dataset");
    wait_for("the dataset held by its run", TIMEOUT, || async {
        let d = serde_json::to_value(datasets.get("corpus").await?)?;
        Ok((d["metadata"]["finalizers"] == json!(["modelfleet.io/dataset-in-use"])).then_some(()))
    })
    .await?;
    let log = full.log();
    assert!(
        !log.contains("forbidden") && !log.contains("cannot "),
        "with every rule granted nothing is refused:\n{}",
        full.tail()
    );
    Ok(())
}

/// Through the chart's aggregated roles, a namespace user bound to the built-in `edit` role
/// creates an InferenceService; one bound to `view` reads it and is refused a create.
#[tokio::test]
async fn an_edit_user_creates_an_inference_service_and_a_view_user_only_reads() -> anyhow::Result<()>
{
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace("rbac-users").await?;
    let objects = Helm::new()?.template("model-fleet", "model-fleet-system", &[])?;
    for name in ["model-fleet-edit", "model-fleet-view"] {
        let role = find(&objects, "ClusterRole", name).expect("aggregated role");
        cluster.kubectl_apply(role, &["--server-side", "--field-manager=chart-test"])?;
    }
    for (user, role) in [("alice", "edit"), ("victor", "view")] {
        cluster.kubectl_ok(&[
            "create",
            "rolebinding",
            user,
            "-n",
            ns.name(),
            &format!("--clusterrole={role}"),
            &format!("--user={user}"),
        ])?;
    }
    let spec = echo_spec();
    // The aggregation controller fills edit/view from the labels: wait for it.
    let alice = cluster.user_client("alice", &[]).await?;
    wait_for(
        "alice (edit) to create an InferenceService",
        TIMEOUT,
        || async {
            Ok(create(
                &alice,
                ns.name(),
                object("InferenceService", "by-alice", spec.clone()),
            )
            .await
            .ok()
            .map(|_| ()))
        },
    )
    .await?;
    let victor = cluster.user_client("victor", &[]).await?;
    let read = api(&victor, ns.name(), "InferenceService")
        .get("by-alice")
        .await?;
    assert_eq!(read.metadata.name.as_deref(), Some("by-alice"));
    let refused = create(
        &victor,
        ns.name(),
        object("InferenceService", "by-victor", spec),
    )
    .await;
    let message = format!("{:#}", refused.expect_err("view must not create"));
    assert!(message.contains("forbidden"), "{message}");
    Ok(())
}

/// `(API group, resources, verbs)` of one rule, sorted, with the core group as `""`.
type Grant = (String, Vec<String>, Vec<String>);

fn grant(group: &str, mut resources: Vec<String>, mut verbs: Vec<String>) -> Grant {
    resources.sort();
    verbs.sort();
    (group.to_owned(), resources, verbs)
}

/// The rows of docs/security.md's table of the operator's permissions: `| group | resources | verbs | why |`.
fn documented_grants() -> anyhow::Result<Vec<Grant>> {
    let docs =
        std::fs::read_to_string(acceptance_tests::cluster::repo_root().join("docs/security.md"))?;
    let section = docs
        .split("## The operator's permissions")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .ok_or_else(|| {
            anyhow::anyhow!("docs/security.md has no section \"The operator's permissions\"")
        })?;
    let spans = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    };
    Ok(section
        .lines()
        .filter(|line| {
            line.starts_with("| ") && !line.starts_with("| API group") && !line.starts_with("| ---")
        })
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let group = cells[0].trim_start_matches("| ").trim_matches('`');
            let verbs = cells[2].split(", ").map(str::to_owned).collect();
            grant(
                if group == "core" { "" } else { group },
                spans(cells[1]),
                verbs,
            )
        })
        .collect())
}

// docs/security.md's table is what users audit before installing: it must be the rule file, row for row.
#[test]
fn the_security_docs_table_lists_exactly_the_operator_rules() -> anyhow::Result<()> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let mut from_rules: Vec<Grant> = operator_rules()?
        .iter()
        .flat_map(|rule| {
            strings(&rule["apiGroups"])
                .into_iter()
                .map(|group| grant(&group, strings(&rule["resources"]), strings(&rule["verbs"])))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut documented = documented_grants()?;
    from_rules.sort();
    documented.sort();
    assert_eq!(
        documented, from_rules,
        "docs/security.md (left) and operator-rules.yaml (right)"
    );
    Ok(())
}
