//! The Slack bot (issue 19) against the control plane and a local Slack (`acceptance_tests::slack::FakeSlack`, on
//! loopback, speaking Socket Mode's envelope protocol): every command from a slash command, a mention and a DM with
//! the object really changed (and the operator acting on it); refusals of both authorization layers (allowlists,
//! then Kubernetes RBAC through impersonation), each with a clear message and nothing changed; a RoleBinding of the
//! impersonated group granting what no user binding does; a Terraform-owned
//! `intent` refused without `force`; redelivered envelopes handled once; a reconnect mid-command losing nothing;
//! credentials never in the logs (canary values grepped over every run).
//!
//! The bot runs as user `model-fleet-slack` bound to `charts/model-fleet-operator/files/slack-rbac.yaml`; the
//! mapped Slack users get per-namespace RoleBindings like an admin would write them.

use std::time::Duration;

use acceptance_tests::inference::{self, echo_spec, isvc_resource, wait_reconciled};
use acceptance_tests::modelfleet::{self, create};
use acceptance_tests::process::workspace_binary;
use acceptance_tests::slack::{Envelope, FakeSlack, Posted};
use acceptance_tests::slack_bot::{GROUP, SlackBot, bind, bot_kubeconfig};
use acceptance_tests::{Cluster, TestNamespace, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::events::v1::Event;
use kube::Api;
use kube::api::{DynamicObject, ListParams};
use serde_json::{Value, json};

const ADMIN: &str = "U0ADMIN";
const VIEWER: &str = "U0VIEWER";
const STRANGER: &str = "U0STRANGER";
/// The Slack users the bot may impersonate (the same list in every test: the ClusterRole is cluster-wide).
const MAPPED: [&str; 2] = [ADMIN, VIEWER];
const FLEET: &str = "C0FLEET";
const WAIT: Duration = Duration::from_secs(30);

struct Setup {
    cluster: Cluster,
    ns: TestNamespace,
    client: kube::Client,
    fake: FakeSlack,
    bot: SlackBot,
    kubeconfig: std::path::PathBuf,
    secrets: Vec<String>,
}

/// Values no log may contain: unique per test run.
fn canaries(test: &str) -> [String; 3] {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let nonce = format!("{test}-{}-{nanos}", std::process::id());
    [
        format!("xoxb-canary-bot-{nonce}"),
        format!("xapp-canary-app-{nonce}"),
        format!("canary-signing-{nonce}"),
    ]
}

/// A namespace with the admin mapped to the editor role and the viewer to the viewer role, a fake Slack and the
/// bot, allowlisting ADMIN and VIEWER, with `env` and `flags` added.
async fn setup(prefix: &str, env: &[(&str, &str)], flags: &[&str]) -> anyhow::Result<Setup> {
    let started = std::time::Instant::now();
    let cluster = Cluster::connect()?;
    let ns = cluster.model_fleet_namespace(prefix).await?;
    bind(
        &cluster,
        ns.name(),
        ("User", &format!("slack:{ADMIN}")),
        "model-fleet-slack-editor",
    )?;
    bind(
        &cluster,
        ns.name(),
        ("User", &format!("slack:{VIEWER}")),
        "model-fleet-slack-viewer",
    )?;
    let [bot_token, app_token, signing] = canaries(prefix);
    let fake = FakeSlack::start(&bot_token, &app_token)?;
    let kubeconfig = bot_kubeconfig(&cluster, &MAPPED)?;
    let allowed = MAPPED.join(",");
    let mut all_env = vec![
        ("SLACK_ALLOWED_USER_IDS", allowed.as_str()),
        ("DEFAULT_WORKLOAD_NAMESPACE", ns.name()),
        ("SLACK_SIGNING_SECRET", signing.as_str()),
    ];
    all_env.extend_from_slice(env);
    println!(
        "{prefix}: cluster, namespace, RBAC and fake Slack in {:?}",
        started.elapsed()
    );
    let bot = SlackBot::start(&cluster, &kubeconfig, &fake, &all_env, flags)?;
    println!("{prefix}: bot connected after {:?}", started.elapsed());
    Ok(Setup {
        client: cluster.client().await?,
        cluster,
        ns,
        fake,
        bot,
        kubeconfig,
        secrets: vec![bot_token, app_token, signing],
    })
}

impl Setup {
    fn ns(&self) -> &str {
        self.ns.name()
    }

    /// Sends `envelope` and returns its ack payload's text and blocks (empty for events).
    async fn ack_text(&self, envelope: &Envelope) -> anyhow::Result<String> {
        self.fake.deliver(envelope, 0)?;
        let ack = self.fake.ack(envelope).await?;
        println!(
            "ack of `{}` after {:?}",
            envelope.frame["payload"]["text"], ack.latency
        );
        Ok(ack
            .payload
            .map(|p| format!("{} {}", p["text"], p["blocks"]))
            .unwrap_or_default())
    }

    /// Sends `envelope` and waits for its reply.
    async fn reply(&self, envelope: &Envelope) -> anyhow::Result<Posted> {
        self.fake.deliver(envelope, 0)?;
        self.fake.ack(envelope).await?;
        self.fake
            .reply(envelope)
            .await
            .map_err(|e| e.context(self.bot.tail()))
    }

    fn isvcs(&self) -> Api<DynamicObject> {
        inference::api(&self.client, self.ns(), &isvc_resource())
    }

    fn runs(&self) -> Api<DynamicObject> {
        modelfleet::api(&self.client, self.ns(), "TrainingRun")
    }

    /// Events the bot wrote about `name`: `(reason, note)`, once per occurrence (the Event recorder counts a repeated
    /// reason on the same object in one Event's `series`).
    async fn slack_events(&self, name: &str) -> anyhow::Result<Vec<(String, String)>> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), self.ns());
        Ok(events
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|e| e.reporting_controller.as_deref() == Some("model-fleet-slack"))
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .flat_map(|e| {
                let count = e.series.as_ref().map_or(1, |s| s.count.max(1)) as usize;
                vec![(e.reason.unwrap_or_default(), e.note.unwrap_or_default()); count]
            })
            .collect())
    }

    /// The whole log holds none of the credentials.
    fn assert_no_secrets(&self) {
        let log = self.bot.log_text();
        assert!(
            log.lines().count() > 10,
            "the bot logged almost nothing:\n{log}"
        );
        for secret in &self.secrets {
            assert!(
                !log.contains(secret.as_str()),
                "a credential is in {}",
                self.bot.log.display()
            );
        }
    }
}

fn llama() -> Value {
    let mut spec = echo_spec();
    spec.as_object_mut().map(|s| s.remove("gateway"));
    spec
}

async fn spec_field(api: &Api<DynamicObject>, name: &str, field: &str) -> anyhow::Result<Value> {
    Ok(api.get(name).await?.data["spec"][field].clone())
}

/// Field managers owning `spec.intent`.
fn intent_owners(object: &DynamicObject) -> Vec<String> {
    object
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|m| {
            m.fields_v1
                .as_ref()
                .is_some_and(|f| f.0.pointer("/f:spec/f:intent").is_some())
        })
        .filter_map(|m| m.manager.clone())
        .collect()
}

async fn deployment_replicas(client: &kube::Client, ns: &str, expect: i32) -> anyhow::Result<()> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    wait_for(
        &format!("Deployment llama at {expect} replicas"),
        WAIT,
        || async {
            let replicas = deployments
                .get("llama")
                .await?
                .spec
                .and_then(|s| s.replicas);
            Ok((replicas == Some(expect)).then_some(()))
        },
    )
    .await
}

async fn job_suspended(client: &kube::Client, ns: &str, expect: bool) -> anyhow::Result<()> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    wait_for(&format!("Job ft suspend={expect}"), WAIT, || async {
        let suspend = jobs
            .get("ft")
            .await?
            .spec
            .and_then(|s| s.suspend)
            .unwrap_or(false);
        Ok((suspend == expect).then_some(()))
    })
    .await
}

async fn create_fleet(s: &Setup) -> anyhow::Result<()> {
    inference::apply(&s.isvcs(), "llama", llama()).await?;
    let run = json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "TrainingRun", "metadata": {"name": "ft"},
        "spec": {"container": {"image": "modelfleet.local/sim:never"}}});
    create(&s.client, s.ns(), run).await?;
    let dataset = json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "corpus"},
        "spec": {"version": "3", "source": {"uri": "s3://bucket/corpus"}}});
    create(&s.client, s.ns(), dataset).await?;
    Ok(())
}

#[tokio::test]
async fn every_command_works_from_a_slash_command_a_mention_and_a_dm() -> anyhow::Result<()> {
    let s = setup("slack-e2e", &[], &[]).await?;
    let ns = s.ns().to_owned();
    create_fleet(&s).await?;
    let _operator = inference::operator(&s.cluster, &ns, &[])?;
    wait_reconciled(&s.isvcs(), "llama").await?;
    let commands_started = std::time::Instant::now();

    let help = s.ack_text(&s.fake.slash(ADMIN, FLEET, "help")).await?;
    assert!(help.contains("/fleet inventory [NAMESPACE]"), "{help}");
    assert!(
        s.fake.posted().is_empty(),
        "help is answered in the ack alone"
    );

    let inventory = s.fake.slash(VIEWER, FLEET, "inventory");
    assert!(
        s.ack_text(&inventory)
            .await?
            .contains("Working on `inventory`")
    );
    let listed = s.fake.reply(&inventory).await?;
    assert_eq!(listed.body["response_type"], "ephemeral");
    let text = listed.all_text();
    for expected in [
        format!("Inventory of {ns}"),
        "llama".into(),
        "ft".into(),
        "corpus  3".into(),
    ] {
        assert!(text.contains(&expected), "{expected} missing from {text}");
    }

    // A mention: the public reply goes to the mention's thread; the change is an apply of spec.intent only.
    let audit = s.cluster.audit_log().mark()?;
    let stop = s.fake.mention(ADMIN, FLEET, "stop llama");
    let stopped = s.reply(&stop).await?;
    assert_eq!(stopped.method, "chat.postMessage");
    assert!(
        stopped
            .all_text()
            .contains(&format!("<@{ADMIN}> stopped InferenceService {ns}/llama")),
        "{}",
        stopped.all_text()
    );
    let object = s.isvcs().get("llama").await?;
    assert_eq!(object.data["spec"]["intent"], "suspended");
    assert_eq!(intent_owners(&object), vec!["model-fleet-slack".to_owned()]);
    let patches: Vec<_> = audit
        .writes_by(&format!("slack:{ADMIN}"))?
        .into_iter()
        .filter(|e| e.verb == "patch" && e.request_u_r_i.contains(&format!("/namespaces/{ns}/")))
        .collect();
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(
        patches[0].user.username, "model-fleet-slack",
        "made by the bot, impersonating"
    );
    let events = s.slack_events("llama").await?;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "SlackStopped");
    assert!(
        events[0].1.contains(ADMIN) && events[0].1.contains("automatic → suspended"),
        "{events:?}"
    );
    deployment_replicas(&s.client, &ns, 0).await?;

    let start = s.fake.direct(ADMIN, "D0ADMIN", "start llama");
    let started = s.reply(&start).await?;
    assert_eq!(
        (started.method.as_str(), started.target.as_str()),
        ("chat.postMessage", "D0ADMIN")
    );
    assert_eq!(spec_field(&s.isvcs(), "llama", "intent").await?, "active");
    let events = s.slack_events("llama").await?;
    assert!(
        events.iter().any(|(reason, note)| reason == "SlackStarted"
            && note.contains(ADMIN)
            && note.contains("suspended → active")),
        "{events:?}"
    );
    deployment_replicas(&s.client, &ns, 1).await?;

    let suspended = s
        .reply(&s.fake.slash(ADMIN, FLEET, "training suspend ft"))
        .await?;
    assert_eq!(
        suspended.body["response_type"],
        "in_channel",
        "changes are public: {}",
        suspended.all_text()
    );
    assert_eq!(spec_field(&s.runs(), "ft", "intent").await?, "suspended");
    job_suspended(&s.client, &ns, true).await?;
    let status = s
        .reply(&s.fake.slash(ADMIN, FLEET, "training status ft"))
        .await?;
    assert!(
        status.all_text().contains("*Intent:* suspended"),
        "{}",
        status.all_text()
    );
    s.reply(&s.fake.slash(ADMIN, FLEET, "training resume ft"))
        .await?;
    assert_eq!(spec_field(&s.runs(), "ft", "intent").await?, "active");
    job_suspended(&s.client, &ns, false).await?;
    let list = s
        .reply(&s.fake.slash(VIEWER, FLEET, "training list"))
        .await?;
    assert!(
        list.all_text().contains(&format!("Training runs in {ns}")),
        "{}",
        list.all_text()
    );

    let unconfirmed = s
        .ack_text(&s.fake.slash(ADMIN, FLEET, "training cancel ft"))
        .await?;
    assert!(
        unconfirmed.contains("is final") && unconfirmed.contains("training cancel ft confirm"),
        "{unconfirmed}"
    );
    assert_eq!(spec_field(&s.runs(), "ft", "cancel").await?, Value::Null);
    s.reply(&s.fake.slash(ADMIN, FLEET, "training cancel ft confirm"))
        .await?;
    assert_eq!(spec_field(&s.runs(), "ft", "cancel").await?, true);
    assert_eq!(
        spec_field(&s.runs(), "ft", "intent").await?,
        "active",
        "cancelling keeps the intent the bot wrote before"
    );
    let events = s.slack_events("ft").await?;
    let reasons: Vec<&str> = events.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(reasons.len(), 3, "{events:?}");
    for reason in ["SlackSuspended", "SlackResumed", "SlackCancelled"] {
        assert!(reasons.contains(&reason), "{events:?}");
    }

    for feature in ["cost", "snapshot", "quota"] {
        let answer = s.ack_text(&s.fake.slash(VIEWER, FLEET, feature)).await?;
        assert!(
            answer.contains(&format!("`{feature}` is not enabled")),
            "{answer}"
        );
    }
    assert_eq!(s.fake.refused_tokens(), 0);
    s.assert_no_secrets();
    println!(
        "every command: {:?} from the first ack to the last",
        commands_started.elapsed()
    );
    Ok(())
}

/// The reply's text, or the ack's when the bot answered in the ack (refusals of a slash command).
async fn answer(s: &Setup, envelope: &Envelope) -> anyhow::Result<String> {
    let acked = s.ack_text(envelope).await?;
    if !acked.is_empty() && !acked.contains("Working on") {
        return Ok(acked);
    }
    Ok(s.fake.reply(envelope).await?.all_text())
}

#[tokio::test]
async fn refusals_say_what_to_type_and_change_nothing() -> anyhow::Result<()> {
    let s = setup(
        "slack-refuse",
        &[("SLACK_ALLOWED_CHANNEL_IDS", "C0FLEET,D0ADMIN")],
        &[],
    )
    .await?;
    let ns = s.ns().to_owned();
    let other = s.cluster.model_fleet_namespace("slack-other").await?;
    inference::apply(&s.isvcs(), "llama", llama()).await?;
    // Past its expiresAt the operator keeps a service suspended whatever its intent: `start` must not pretend.
    let mut expired = llama();
    expired["schedule"] = json!({"expiresAt": "2026-01-01T00:00:00Z"});
    inference::apply(&s.isvcs(), "expired", expired).await?;
    inference::apply(
        &inference::api(&s.client, other.name(), &isvc_resource()),
        "llama2",
        llama(),
    )
    .await?;
    // Terraform's provider applies with its own field manager and owns `intent` when the configuration sets it.
    let mut terraform_spec = llama();
    terraform_spec["intent"] = json!("active");
    let body = json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": "InferenceService",
        "metadata": {"name": "tf-llama"}, "spec": terraform_spec});
    s.isvcs()
        .patch(
            "tf-llama",
            &kube::api::PatchParams::apply("terraform-modelfleet"),
            &kube::api::Patch::Apply(&body),
        )
        .await?;
    let versions = |api: Api<DynamicObject>, name: &'static str| async move {
        anyhow::Ok(api.get(name).await?.metadata.resource_version)
    };
    let before = (
        versions(s.isvcs(), "llama").await?,
        versions(s.isvcs(), "tf-llama").await?,
        versions(s.isvcs(), "expired").await?,
        versions(
            inference::api(&s.client, other.name(), &isvc_resource()),
            "llama2",
        )
        .await?,
    );

    let other_ns = other.name();
    let cases: Vec<(Envelope, String)> = vec![
        (
            s.fake.slash(STRANGER, FLEET, "stop llama"),
            format!("<@{STRANGER}> is not in SLACK_ALLOWED_USER_IDS"),
        ),
        (
            s.fake.slash(ADMIN, "C0OTHER", "stop llama"),
            "do not run in <#C0OTHER>".into(),
        ),
        (
            s.fake.slash(ADMIN, FLEET, "restart llama"),
            "I do not know the command `restart`.".into(),
        ),
        (
            s.fake.slash(ADMIN, FLEET, "stop Llama"),
            "Try `/fleet stop llama`".into(),
        ),
        (
            s.fake.slash(VIEWER, FLEET, "stop llama"),
            format!(
                "Kubernetes RBAC does not let slack:{VIEWER} patch inferenceservices in namespace {ns}."
            ),
        ),
        (
            s.fake.slash(ADMIN, FLEET, "stop nosuch"),
            format!("There is no InferenceService `nosuch` in namespace `{ns}`."),
        ),
        (
            s.fake.slash(ADMIN, FLEET, "stop llama2"),
            "Try `/fleet stop NAMESPACE/llama2`".into(),
        ),
        (
            s.fake
                .slash(ADMIN, FLEET, &format!("stop {other_ns}/llama2")),
            format!(
                "Kubernetes RBAC does not let slack:{ADMIN} get inferenceservices in namespace {other_ns}."
            ),
        ),
        (
            s.fake.slash(ADMIN, FLEET, "stop tf-llama"),
            format!(
                "`spec.intent` of `{ns}/tf-llama` is managed by Terraform (`terraform-modelfleet`)"
            ),
        ),
        (
            s.fake.slash(ADMIN, FLEET, "start expired"),
            format!(
                "`{ns}/expired` stays suspended: its `spec.schedule.expiresAt` (2026-01-01T00:00:00Z) has passed"
            ),
        ),
        (
            s.fake.slash(ADMIN, FLEET, "training cancel nosuch confirm"),
            "Try `/fleet training cancel NAMESPACE/nosuch confirm`".into(),
        ),
        (
            s.fake
                .slash(STRANGER, FLEET, &format!("inventory {other_ns}")),
            format!("`{other_ns}` is not open to people outside SLACK_ALLOWED_USER_IDS"),
        ),
        (
            s.fake.mention(STRANGER, FLEET, "stop llama"),
            "You may look but not change anything".into(),
        ),
        (
            s.fake.direct(STRANGER, "D0STRANGER", "inventory"),
            "do not run in <#D0STRANGER>".into(),
        ),
    ];
    for (envelope, expected) in &cases {
        let text = answer(&s, envelope).await?;
        println!("{} -> {text}", envelope.frame["payload"]);
        assert!(
            text.contains(expected.as_str()),
            "expected `{expected}` in: {text}"
        );
    }
    // The default namespace is open to everyone (SLACK_PUBLIC_READ_NAMESPACES unset): read as the bot.
    let public = answer(&s, &s.fake.slash(STRANGER, FLEET, "inventory")).await?;
    assert!(
        public.contains(&format!("Inventory of {ns}")) && public.contains("llama"),
        "{public}"
    );
    let known = answer(&s, &s.fake.slash(ADMIN, FLEET, "stop nosuch")).await?;
    assert!(
        known.contains("InferenceServices in `") && known.contains("llama"),
        "{known}"
    );
    let conflict = answer(&s, &s.fake.slash(ADMIN, FLEET, "stop tf-llama")).await?;
    assert!(
        conflict.contains(&format!("Try `/fleet stop {ns}/tf-llama force`")),
        "{conflict}"
    );
    let private = s
        .fake
        .posted()
        .into_iter()
        .find(|p| p.method == "chat.postEphemeral");
    assert!(
        private.is_some_and(|p| p.body["user"] == STRANGER),
        "a refused mention is answered to the person only"
    );

    let after = (
        versions(s.isvcs(), "llama").await?,
        versions(s.isvcs(), "tf-llama").await?,
        versions(s.isvcs(), "expired").await?,
        versions(
            inference::api(&s.client, other.name(), &isvc_resource()),
            "llama2",
        )
        .await?,
    );
    assert_eq!(before, after, "a refusal changes nothing");
    assert!(s.slack_events("llama").await?.is_empty());

    // `force` is never implied: typed, it takes spec.intent over from Terraform (and says so), nothing else.
    let forced = s
        .reply(&s.fake.slash(ADMIN, FLEET, "stop tf-llama force"))
        .await?;
    assert!(
        forced
            .all_text()
            .contains("Taken over from terraform-modelfleet"),
        "{}",
        forced.all_text()
    );
    let object = s.isvcs().get("tf-llama").await?;
    assert_eq!(object.data["spec"]["intent"], "suspended");
    assert_eq!(intent_owners(&object), vec!["model-fleet-slack".to_owned()]);
    let terraform_fields = object.metadata.managed_fields.iter().flatten().any(|m| {
        m.manager.as_deref() == Some("terraform-modelfleet")
            && m.fields_v1
                .as_ref()
                .is_some_and(|f| f.0.pointer("/f:spec/f:model").is_some())
    });
    assert!(terraform_fields, "Terraform keeps the rest of the spec");
    let events = s.slack_events("tf-llama").await?;
    assert!(
        events.len() == 1
            && events[0]
                .1
                .contains("taken over from terraform-modelfleet with force"),
        "{events:?}"
    );

    // Groups: every impersonated user also carries SLACK_IMPERSONATION_GROUPS (default GROUP), so one RoleBinding of
    // that group grants what no user binding does: ADMIN, refused in the other namespace above, may stop llama2 there
    // once the group is bound (RBAC takes a binding in within moments: the command is retried until it is).
    bind(
        &s.cluster,
        other_ns,
        ("Group", GROUP),
        "model-fleet-slack-editor",
    )?;
    let command = format!("stop {other_ns}/llama2");
    let stopped = wait_for(
        "the group's RoleBinding to let ADMIN stop llama2",
        WAIT,
        || async {
            let text = answer(&s, &s.fake.slash(ADMIN, FLEET, &command)).await?;
            Ok((!text.contains("Kubernetes RBAC does not let")).then_some(text))
        },
    )
    .await?;
    let others = inference::api(&s.client, other_ns, &isvc_resource());
    assert_eq!(
        spec_field(&others, "llama2", "intent").await?,
        json!("suspended"),
        "{stopped}"
    );
    s.assert_no_secrets();
    Ok(())
}

#[tokio::test]
async fn redelivery_runs_once_and_a_reconnect_loses_nothing() -> anyhow::Result<()> {
    // Every command waits 2 s before its Kubernetes calls, so redeliveries and disconnects land mid-command.
    let mut s = setup("slack-socket", &[], &["--test-command-delay-seconds", "2"]).await?;
    inference::apply(&s.isvcs(), "llama", llama()).await?;

    // Slack redelivers an envelope it saw no ack for in time, with the same envelope_id and a higher retry_attempt.
    let stop = s.fake.slash(ADMIN, FLEET, "stop llama");
    s.fake.deliver(&stop, 0)?;
    let ack = s.fake.ack(&stop).await?;
    s.fake.deliver(&stop, 1)?;
    s.fake
        .wait("a second ack", WAIT, |f| {
            (f.acks(&stop.id).len() == 2).then_some(())
        })
        .await?;
    let reply = s.fake.reply(&stop).await?;
    println!(
        "ack after {:?}; reply {:?} after the ack",
        ack.latency,
        reply.at - ack.at
    );
    assert!(ack.at < reply.at, "the ack does not wait for the work");
    s.bot.wait_for_log(
        "redelivered envelope: acknowledged again, not run again",
        1,
        WAIT,
    )?;
    // A slash command answered in its ack (help, a refusal) is answered again on redelivery: Slack redelivers because
    // it saw no ack, so the lost ack may have carried the only answer.
    let help = s.fake.slash(ADMIN, FLEET, "help");
    s.fake.deliver(&help, 0)?;
    s.fake.deliver(&help, 1)?;
    let acks = s
        .fake
        .wait("both acks of help", WAIT, |f| {
            let acks = f.acks(&help.id);
            (acks.len() == 2).then_some(acks)
        })
        .await?;
    let first = acks[0]
        .payload
        .clone()
        .expect("help is answered in its ack");
    assert!(first.to_string().contains("stop"), "{first}");
    assert_eq!(
        acks[1].payload.as_ref(),
        Some(&first),
        "the same answer again"
    );
    assert!(
        s.fake.acks(&stop.id)[1].payload.is_none(),
        "a command that runs is not announced twice: its result is posted"
    );
    // A second run would have started with the redelivery, before this command, and posted before its reply.
    let later = s.fake.slash(ADMIN, FLEET, "inventory");
    s.reply(&later).await?;
    let replies = s
        .fake
        .posted()
        .into_iter()
        .filter(|p| p.target == stop.id)
        .count();
    assert_eq!(replies, 1, "one reply for one envelope");
    assert_eq!(
        s.slack_events("llama").await?.len(),
        1,
        "one effect for one envelope"
    );

    // `disconnect` (refresh_requested) mid-command: a new connection, and the command still completes.
    let start = s.fake.slash(ADMIN, FLEET, "start llama");
    s.fake.deliver(&start, 0)?;
    s.fake.ack(&start).await?;
    s.fake.disconnect("refresh_requested")?;
    s.fake
        .wait("a new connection", WAIT, |f| {
            (f.connections_opened() == 3 && f.open_connections() == 1).then_some(())
        })
        .await?;
    s.bot.wait_for_log("slack socket mode connected", 2, WAIT)?;
    let started = s.fake.reply(&start).await?;
    assert!(
        started.all_text().contains("started InferenceService"),
        "{}",
        started.all_text()
    );
    assert_eq!(spec_field(&s.isvcs(), "llama", "intent").await?, "active");

    // A connection cut right after an envelope: whether or not the bot saw it, Slack redelivers it on the next
    // connection, and it runs exactly once.
    let again = s.fake.slash(ADMIN, FLEET, "stop llama");
    s.fake.deliver(&again, 0)?;
    s.fake.close_connection()?;
    s.fake
        .wait("a reconnect", WAIT, |f| {
            (f.connections_opened() == 4 && f.open_connections() == 1).then_some(())
        })
        .await?;
    s.bot.wait_for_log("slack socket mode connected", 3, WAIT)?;
    s.fake.deliver(&again, 1)?;
    s.fake
        .wait("the redelivery's ack", WAIT, |f| {
            f.acks(&again.id).into_iter().find(|a| a.connection == 3)
        })
        .await?;
    s.fake.reply(&again).await?;
    let check = s.fake.slash(ADMIN, FLEET, "inventory");
    s.reply(&check).await?;
    assert_eq!(
        s.fake
            .posted()
            .into_iter()
            .filter(|p| p.target == again.id)
            .count(),
        1
    );
    assert_eq!(
        spec_field(&s.isvcs(), "llama", "intent").await?,
        "suspended"
    );
    let reasons: Vec<String> = s
        .slack_events("llama")
        .await?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(reasons.len(), 3, "stop, start, stop: {reasons:?}");

    // SIGTERM mid-command (a pod being rolled): the bot closes its connections but lets the running command finish
    // (each command waits 2 s here), so the change still gets its Event and its reply.
    let last = s.fake.slash(ADMIN, FLEET, "start llama");
    s.fake.deliver(&last, 0)?;
    s.fake.ack(&last).await?;
    let status = s.bot.terminate()?;
    assert!(status.success(), "{status}");
    let reply = s.fake.reply(&last).await?;
    assert!(
        reply.all_text().contains("started InferenceService"),
        "{}",
        reply.all_text()
    );
    assert_eq!(spec_field(&s.isvcs(), "llama", "intent").await?, "active");
    assert_eq!(
        s.slack_events("llama").await?.len(),
        4,
        "the Event of the last change"
    );
    s.assert_no_secrets();
    Ok(())
}

/// Runs `model-fleet-operator slack` expecting it to fail at start; returns its stderr.
fn failed_start(s: &Setup, env: &[(&str, &str)]) -> anyhow::Result<String> {
    let out = std::process::Command::new(workspace_binary("model-fleet-operator")?)
        .args([
            "slack",
            "--slack-api-url",
            &s.fake.api_url,
            "--log-format",
            "text",
            "--kubeconfig",
        ])
        .arg(&s.kubeconfig)
        .env_remove("SLACK_BOT_TOKEN")
        .env_remove("SLACK_APP_TOKEN")
        .env("RUST_LOG", "trace")
        .envs(env.iter().copied())
        .output()?;
    assert!(
        !out.status.success(),
        "the bot started with bad credentials"
    );
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn credentials_never_reach_the_logs_even_at_trace_level() -> anyhow::Result<()> {
    let trace = [("RUST_LOG", "trace,hyper=info,h2=info,rustls=info")];
    let mut s = setup("slack-secrets", &trace, &[]).await?;
    inference::apply(&s.isvcs(), "llama", llama()).await?;
    s.reply(&s.fake.slash(ADMIN, FLEET, "inventory")).await?;
    s.reply(&s.fake.mention(ADMIN, FLEET, "stop llama")).await?;
    s.reply(&s.fake.slash(VIEWER, FLEET, "stop llama")).await?;
    s.fake.disconnect("refresh_requested")?;
    s.bot.wait_for_log("slack socket mode connected", 2, WAIT)?;
    s.reply(&s.fake.direct(ADMIN, "D0ADMIN", "start llama"))
        .await?;
    assert!(s.bot.terminate()?.success());
    s.assert_no_secrets();

    // Bad credentials: the bot stops with the variable's name, never the value. Each case: the environment, what
    // the error says, what it never shows.
    let (bot, app) = (s.secrets[0].as_str(), s.secrets[1].as_str());
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a [&'a str]);
    let cases: [Case; 4] = [
        // A bot token Slack refuses.
        (
            &[
                ("SLACK_BOT_TOKEN", "xoxb-wrong-canary-1234"),
                ("SLACK_APP_TOKEN", app),
            ],
            &["SLACK_BOT_TOKEN was refused by auth.test", "invalid_auth"],
            &["wrong-canary", app],
        ),
        // Swapped tokens.
        (
            &[("SLACK_BOT_TOKEN", app), ("SLACK_APP_TOKEN", bot)],
            &["SLACK_BOT_TOKEN does not start with `xoxb-`"],
            &[bot, app],
        ),
        // An app token Slack refuses (well formed, wrong): named at start instead of retried forever.
        (
            &[
                ("SLACK_BOT_TOKEN", bot),
                ("SLACK_APP_TOKEN", "xapp-wrong-canary-5678"),
            ],
            &[
                "SLACK_APP_TOKEN was refused by apps.connections.open",
                "invalid_auth",
            ],
            &["wrong-canary", bot],
        ),
        (&[], &["SLACK_BOT_TOKEN is not set"], &[]),
    ];
    for (env, says, hides) in cases {
        let error = failed_start(&s, env)?;
        assert!(says.iter().all(|m| error.contains(m)), "{error}");
        assert!(!hides.iter().any(|h| error.contains(h)), "{error}");
    }
    Ok(())
}

#[test]
fn the_app_manifest_and_chart_values_hold_what_the_bot_needs() -> anyhow::Result<()> {
    let root = acceptance_tests::cluster::repo_root();
    let manifest: Value = serde_yaml::from_str(&std::fs::read_to_string(
        root.join("examples/slack/app-manifest.yaml"),
    )?)?;
    // Exactly the scopes the bot uses (least privilege): no more, no fewer.
    let scopes = &manifest["oauth_config"]["scopes"]["bot"];
    assert_eq!(
        scopes,
        &json!([
            "app_mentions:read",
            "chat:write",
            "commands",
            "im:history",
            "im:read"
        ])
    );
    let events = &manifest["settings"]["event_subscriptions"]["bot_events"];
    assert_eq!(events, &json!(["app_mention", "message.im"]));
    assert_eq!(manifest["settings"]["socket_mode_enabled"], true);
    assert_eq!(
        manifest["features"]["slash_commands"][0]["command"],
        "/fleet"
    );
    assert_eq!(manifest["features"]["bot_user"]["always_online"], true);

    let values: Value = serde_yaml::from_str(&std::fs::read_to_string(
        root.join("examples/slack/operator-values.yaml"),
    )?)?;
    let slack = &values["slack"];
    assert_eq!(slack["enabled"], true);
    assert!(slack["existingSecret"].is_string());
    assert_eq!(slack["impersonationGroups"], json!([GROUP]));
    // Only the keys the chart's values.schema.json allows under `slack`.
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(
        root.join("charts/model-fleet-operator/values.schema.json"),
    )?)?;
    let allowed = &schema["properties"]["slack"]["properties"];
    for key in slack.as_object().into_iter().flatten().map(|(k, _)| k) {
        assert!(
            allowed.get(key).is_some(),
            "slack.{key} is not in values.schema.json"
        );
    }
    let rbac = acceptance_tests::slack_bot::rbac_documents(&["U0X"])?;
    let group_rule = &rbac[1]["rules"][1];
    assert_eq!(
        group_rule["resourceNames"],
        json!([GROUP]),
        "the shipped RBAC impersonates the default group"
    );
    Ok(())
}
