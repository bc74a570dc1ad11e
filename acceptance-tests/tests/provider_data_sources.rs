//! The data sources end to end: the real Terraform CLI applies `examples/terraform/read-existing`, which reads an
//! InferenceService, a TrainingRun and a Dataset that this configuration does not manage (created here through the
//! API, as another workspace or kubectl would), while an operator writes their status. The outputs carry the spec
//! (nested blocks included), the values the resource types compute and the status facts; a second plan shows no
//! changes; nothing was written to the objects; `namespace` wins over the provider's; a missing object fails the
//! plan on `name`, naming it; an invalid name fails `terraform validate`. A provider configured from a value known
//! only at apply makes the data source refuse to read during the plan, until `depends_on` defers it to the apply;
//! a managed resource's refresh in that case keeps its state and warns, and the apply after it changes nothing.
//! A data source reading an object the same configuration creates is read during the apply, after the create.

use std::time::Duration;

use acceptance_tests::cluster::repo_root;
use acceptance_tests::inference::{self, create_gateway, echo_spec, wait_condition};
use acceptance_tests::modelfleet::{api, create};
use acceptance_tests::terraform::{self, flat};
use acceptance_tests::{Cluster, Terraform};
use serde_json::{Value, json};

fn object(kind: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": "modelfleet.io/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec})
}

/// The three objects the example reads, created in `ns` by someone else than Terraform.
async fn create_objects(client: &kube::Client, ns: &str) -> anyhow::Result<()> {
    create(client, ns, object("InferenceService", "chat", echo_spec())).await?;
    let run = json!({"container": {"image": "modelfleet.local/sim:never"}, "intent": "suspended"});
    create(client, ns, object("TrainingRun", "finetune", run)).await?;
    let dataset = json!({"version": "3", "source": {"uri": "s3://datasets/corpus/v3/"},
        "splits": {"train": {"uri": "s3://datasets/corpus/v3/train/"}, "eval": {"uri": "s3://datasets/corpus/v3/eval/"}},
        "allowedServiceAccounts": ["default"]});
    create(client, ns, object("Dataset", "corpus-v3", dataset)).await?;
    Ok(())
}

/// The field managers that ever wrote each object (`metadata.managedFields`), to prove reading wrote nothing.
async fn managers(client: &kube::Client, ns: &str) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for (kind, name) in [
        ("InferenceService", "chat"),
        ("TrainingRun", "finetune"),
        ("Dataset", "corpus-v3"),
    ] {
        let object = api(client, ns, kind).get(name).await?;
        for entry in object.metadata.managed_fields.unwrap_or_default() {
            out.push(format!("{kind}: {}", entry.manager.unwrap_or_default()));
        }
    }
    Ok(out)
}

/// A working folder for the example with its variables set; `service` is the InferenceService it reads.
fn example(cluster: &Cluster, ns: &str, service: &str) -> anyhow::Result<Terraform> {
    let main_tf =
        std::fs::read_to_string(repo_root().join("examples/terraform/read-existing/main.tf"))?;
    let tf = Terraform::new(&main_tf)?;
    tf.write(
        "terraform.tfvars",
        &format!(
            "kubeconfig_path = \"{}\"\nnamespace = \"{ns}\"\nservice = \"{service}\"\nrun = \"finetune\"\n\
             dataset = \"corpus-v3\"\n",
            cluster.kubeconfig.display()
        ),
    )?;
    Ok(tf)
}

#[tokio::test]
async fn data_sources_read_objects_terraform_does_not_manage() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    let ns = cluster.model_fleet_namespace("tf-data").await?;
    let ns = ns.name().to_string();
    let client = cluster.client().await?;
    create_gateway(&client, &ns).await?;
    let _operator = inference::operator(&cluster, &ns, &[])?;
    create_objects(&client, &ns).await?;
    let isvcs = api(&client, &ns, "InferenceService");
    let timeout = Duration::from_secs(90);
    wait_condition(&isvcs, "chat", "Ready", "True", None, timeout).await?;
    let runs = api(&client, &ns, "TrainingRun");
    wait_condition(&runs, "finetune", "Suspended", "True", None, timeout).await?;

    let tf = example(&cluster, &ns, "chat")?;
    tf.apply()?;
    let outputs: Value = serde_json::from_str(&tf.ok(&["output", "-json"])?)?;
    let output = |name: &str| outputs[name]["value"].clone();
    assert_eq!(output("service_url"), json!("http://model.localhost/"));
    assert_eq!(output("service_ready"), json!(true));
    assert_eq!(output("service_image"), json!("hashicorp/http-echo:1.0"));
    assert_eq!(output("service_hostnames"), json!(["model.localhost"]));
    assert_eq!(output("run_job"), json!("finetune"));
    assert_eq!(output("run_phase"), json!("Suspended"));
    assert_eq!(output("dataset_version"), json!("3"));
    assert_eq!(output("dataset_splits"), json!(["eval", "train"]));

    let (code, text) = tf.plan_exit_code()?;
    assert_eq!(
        code, 0,
        "a second plan reads again and changes nothing:\n{text}"
    );
    let managers = managers(&client, &ns).await?;
    assert!(
        !managers.is_empty()
            && !managers
                .iter()
                .any(|m| m.ends_with(": terraform-modelfleet")),
        "the provider's field manager never wrote: {managers:?}"
    );

    // A service that does not exist: the plan fails on `name`, naming the object and the namespace.
    let missing = example(&cluster, &ns, "nope")?;
    let (ok, text) = missing.run_flat(&["plan", "-no-color", "-input=false"])?;
    assert!(!ok, "{text}");
    assert!(
        text.contains("InferenceService not found")
            && text.contains(&flat(&format!(
                "No InferenceService named \"nope\" exists in namespace \"{ns}\""
            )))
            && text.contains("data.modelfleet_inference.service"),
        "{text}"
    );

    // `namespace` on the data source wins over the provider's.
    let elsewhere = Terraform::new(&format!(
        "{}\ndata \"modelfleet_inference\" \"x\" {{\n  name      = \"chat\"\n  namespace = \"{ns}\"\n}}\n\
         output \"url\" {{\n  value = data.modelfleet_inference.x.url\n}}\n",
        terraform::provider_block(&cluster.kubeconfig, "default", "")
    ))?;
    elsewhere.apply()?;
    assert_eq!(
        elsewhere.ok(&["output", "-raw", "url"])?,
        "http://model.localhost/"
    );

    // A name Kubernetes would refuse fails validate, before any request.
    let invalid = Terraform::new(&format!(
        "{}\ndata \"modelfleet_inference\" \"x\" {{\n  name = \"Not_A_Name\"\n}}\n",
        terraform::provider_block(&cluster.kubeconfig, &ns, "")
    ))?;
    let (ok, text) = invalid.run_flat(&["validate", "-no-color"])?;
    assert!(!ok && text.contains("Invalid name"), "{text}");
    Ok(())
}

/// A provider configured from a value known only after apply (here `terraform_data`, standing in for a cluster the
/// configuration creates): the data source refuses to read during the plan, where the request would go to the
/// default kubeconfig's cluster, and says to add `depends_on`; with it, Terraform reads the data source during apply,
/// from the cluster the provider is then configured for.
#[tokio::test]
async fn a_data_source_waits_for_a_provider_configured_at_apply() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    let ns = cluster.model_fleet_namespace("tf-data-late").await?;
    let ns = ns.name().to_string();
    let client = cluster.client().await?;
    create(
        &client,
        &ns,
        object("InferenceService", "chat", echo_spec()),
    )
    .await?;
    let main_tf = |depends_on: &str| {
        format!(
            r#"{}
data "modelfleet_inference" "chat" {{
  name = "chat"
  {depends_on}
}}

output "url" {{
  value = data.modelfleet_inference.chat.url
}}
"#,
            terraform::provider_from_late_cluster(&cluster.kubeconfig, &ns, 1)
        )
    };
    let tf = Terraform::new(&main_tf(""))?;
    let (ok, text) = tf.run_flat(&["plan", "-no-color", "-input=false"])?;
    assert!(
        !ok && text.contains("Provider connection not known yet")
            && text.contains("kubeconfig_path")
            && text.contains("depends_on"),
        "{text}"
    );
    tf.write("main.tf", &main_tf("depends_on = [terraform_data.cluster]"))?;
    tf.apply()?;
    assert_eq!(
        tf.ok(&["output", "-raw", "url"])?,
        "http://model.localhost/"
    );
    Ok(())
}

/// A managed resource refreshed while the provider's settings are unknown (the value they come from is replaced, as a
/// cluster being recreated would be): the plan does not read it (the object was deleted out of band here, and the
/// plan does not see that), warns `Not refreshed`, and plans no change to it. Once the settings are known, the next
/// plan reads the object again and sees that it is gone.
#[tokio::test]
async fn a_refresh_while_the_provider_connection_is_unknown_keeps_the_state() -> anyhow::Result<()>
{
    let cluster = Cluster::for_tests();
    let ns = cluster.model_fleet_namespace("tf-refresh-late").await?;
    let ns = ns.name().to_string();
    let main_tf = |generation: u32| {
        terraform::provider_from_late_cluster(&cluster.kubeconfig, &ns, generation)
            + &terraform::echo_inference("chat")
    };
    let tf = Terraform::new(&main_tf(1))?;
    tf.apply()?;
    let client = cluster.client().await?;
    let isvcs = api(&client, &ns, "InferenceService");
    isvcs.delete("chat", &Default::default()).await?;

    tf.write("main.tf", &main_tf(2))?;
    let (code, text) = tf.plan_exit_code()?;
    let text = flat(&text);
    assert_eq!(code, 2, "terraform_data is replaced: {text}");
    assert!(
        text.contains("Not refreshed: provider connection not known yet")
            && text.contains(
                "The provider's `kubeconfig_path` depends on values known only after apply"
            )
            && text.contains(&format!("modelfleet_inference {ns}/chat was not read")),
        "{text}"
    );
    assert!(
        text.contains("Plan: 1 to add, 0 to change, 1 to destroy"),
        "only terraform_data changes; the inference service is planned from its state: {text}"
    );
    tf.apply()?;

    let (code, text) = tf.plan_exit_code()?;
    let text = flat(&text);
    assert_eq!(code, 2, "{text}");
    assert!(
        !text.contains("Not refreshed")
            && text.contains("Plan: 1 to add, 0 to change, 0 to destroy"),
        "with the settings known, the refresh finds the object gone and plans to create it again: {text}"
    );
    Ok(())
}

/// A data source reading an object this configuration creates, through a reference to the resource: Terraform reads
/// it during the apply, after the create (the plan says so rather than failing `not found`), it sees the spec just
/// written, and the next plan, which reads it during the plan, changes nothing. An image change is read again in the
/// same apply.
#[tokio::test]
async fn a_data_source_reads_an_object_created_in_the_same_apply() -> anyhow::Result<()> {
    let cluster = Cluster::for_tests();
    let ns = cluster.model_fleet_namespace("tf-data-same").await?;
    let ns = ns.name().to_string();
    let main_tf = |image: &str| {
        format!(
            r#"{}
resource "modelfleet_inference" "chat" {{
  name = "chat"
  model {{
    name = "chat"
  }}
  container {{
    image = "{image}"
  }}
  gateway {{
    hostnames = ["same.localhost"]
  }}
}}

data "modelfleet_inference" "chat" {{
  name = modelfleet_inference.chat.name
}}

output "image" {{
  value = data.modelfleet_inference.chat.container.image
}}

output "url" {{
  value = data.modelfleet_inference.chat.url
}}
"#,
            terraform::provider_block(&cluster.kubeconfig, &ns, "")
        )
    };
    let tf = Terraform::new(&main_tf("hashicorp/http-echo:1.0"))?;
    let (code, plan) = tf.plan_exit_code()?;
    assert_eq!(code, 2, "{plan}");
    assert!(
        flat(&plan).contains("data.modelfleet_inference.chat will be read during apply"),
        "{plan}"
    );
    tf.apply()?;
    assert_eq!(
        tf.ok(&["output", "-raw", "image"])?,
        "hashicorp/http-echo:1.0"
    );
    assert_eq!(tf.ok(&["output", "-raw", "url"])?, "http://same.localhost/");
    let (code, plan) = tf.plan_exit_code()?;
    assert_eq!(
        code, 0,
        "read during the plan now, and nothing changes: {plan}"
    );

    tf.write("main.tf", &main_tf("hashicorp/http-echo:1.1"))?;
    tf.apply()?;
    assert_eq!(
        tf.ok(&["output", "-raw", "image"])?,
        "hashicorp/http-echo:1.1",
        "the data source is read again after the update"
    );
    Ok(())
}
