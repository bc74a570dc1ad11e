//! A workload resource (`modelfleet_inference`, `modelfleet_training`): the generic
//! custom-resource type ([`CustomResourceType`]: schema from the CRD, server-side apply, read,
//! import, replace, delete) plus what workloads add on top:
//!
//! * plan-time computed attributes ([`super::computed`]), recomputed on every plan and read;
//! * run-time facts ([`super::status`]): planned unknown only when the spec changes (so refreshes
//!   never cause a perpetual diff), filled after apply and refreshed on read;
//! * `wait_for` with the `timeouts {}` block: on timeout the new state is returned with the error,
//!   so Terraform keeps (taints) the object instead of creating it twice;
//! * quantities compared by amount ([`super::quantity`]): state keeps the written form.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use serde_json::Value as Json;

use super::computed::{self, WorkloadKind};
use super::custom::CustomResourceType;
use super::status::{self, WaitState};
use super::{Planned, ProviderContext, Resource, quantity, timeouts};
use crate::diag::{AttrPath, Diagnostics};
use crate::schema::{Attribute, Schema};
use crate::value::{Type, Value};

/// Default wait for `wait_for` after a create or update.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(20 * 60);

/// How often a wait polls the object.
const WAIT_POLL: Duration = Duration::from_secs(1);

/// A workload resource type (see the module docs).
pub struct WorkloadResource {
    inner: CustomResourceType,
    kind: WorkloadKind,
    api: ApiResource,
    spec_schema: Json,
    schema: Schema,
}

impl WorkloadResource {
    /// Wraps `inner` (built from `spec_schema` for the kind at `api`) with the workload
    /// attributes of `kind`.
    pub fn new(
        inner: CustomResourceType,
        kind: WorkloadKind,
        api: ApiResource,
        spec_schema: Json,
    ) -> WorkloadResource {
        let mut schema = inner.schema().clone();
        let attrs = &mut schema.block.attributes;
        let computed = |name: &str, ty: Type, what: &str| Attribute::computed(name, ty, what);
        attrs.push(computed(
            "capacity_class",
            Type::String,
            "Smallest GPU capacity class that holds `gpu.fit` (e.g. `80gi`), computed at plan \
             time; null without a fit.",
        ));
        attrs.push(computed(
            "per_gpu_memory_gib",
            Type::Number,
            "Per-GPU memory budget of `gpu.fit` in GiB (2^30 bytes), rounded up, computed at \
             plan time; null without a fit.",
        ));
        match kind {
            WorkloadKind::Inference => {
                attrs.push(computed(
                    "url",
                    Type::String,
                    "`http://<first gateway hostname><path_prefix>`, computed at plan time; \
                     null without gateway hostnames.",
                ));
                attrs.push(computed(
                    "ready",
                    Type::Bool,
                    "Whether the Ready condition is True (refreshed on read).",
                ));
                attrs.push(computed(
                    "ready_replicas",
                    Type::Number,
                    "Ready replicas of the Deployment (refreshed on read).",
                ));
            }
            WorkloadKind::Training => {
                attrs.push(computed(
                    "job_name",
                    Type::String,
                    "Name of the run's Job, computed at plan time.",
                ));
                attrs.push(computed(
                    "phase",
                    Type::String,
                    "Phase of the run: Pending, Running, Succeeded, Failed, Suspended or \
                     Cancelled (refreshed on read; null before the operator reports one).",
                ));
            }
        }
        attrs.push(Attribute::optional(
            "wait_for",
            Type::String,
            &format!(
                "What apply waits for after writing the object: {} (default `none`). Bounded by \
                 timeouts.create / timeouts.update (default 20m).",
                status::wait_values(kind)
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
        WorkloadResource {
            inner,
            kind,
            api,
            spec_schema,
            schema,
        }
    }

    /// The generic resource type this one builds on.
    pub fn inner(&self) -> &CustomResourceType {
        &self.inner
    }

    /// Names of the attributes this type adds to the generic custom-resource schema.
    fn added_attributes(&self) -> impl Iterator<Item = &'static str> {
        computed::plan_time_attributes(self.kind)
            .iter()
            .chain(status::fact_attributes(self.kind))
            .copied()
            .chain(["wait_for"])
    }

    /// `resource` with the plan-time computed values recomputed from it (null on a fit error,
    /// which only a spec edited outside Terraform can cause on read).
    fn with_plan_time_values(&self, resource: Value) -> Value {
        let values = computed::plan_time_values(self.kind, self.inner.fields(), &resource)
            .unwrap_or_else(|_| {
                computed::plan_time_attributes(self.kind)
                    .iter()
                    .map(|n| ((*n).to_string(), Value::Null))
                    .collect()
            });
        merge(resource, values)
    }

    async fn get(
        &self,
        ctx: &ProviderContext,
        resource: &Value,
    ) -> Result<Option<Json>, Diagnostics> {
        let (Some(namespace), Some(name)) = (
            resource.get("namespace").and_then(Value::as_str),
            resource.get("name").and_then(Value::as_str),
        ) else {
            return Ok(None);
        };
        let client = ctx.client.get().await.map_err(|e| e.to_diagnostics())?;
        let api: Api<DynamicObject> = Api::namespaced_with(client, namespace, &self.api);
        let object = api.get_opt(name).await.map_err(|e| {
            Diagnostics::error(
                format!("Cannot read {} {namespace}/{name}", self.api.kind),
                format!("Kubernetes API request failed: {e}"),
            )
        })?;
        Ok(object.and_then(|o| serde_json::to_value(o).ok()))
    }

    /// Waits for `wait_for` of `state`; returns the last object seen and the diagnostics of a
    /// timeout or a failed run.
    async fn wait(
        &self,
        ctx: &ProviderContext,
        state: &Value,
        timeout: Duration,
    ) -> (Option<Json>, Diagnostics) {
        let wait_for = state
            .get("wait_for")
            .and_then(Value::as_str)
            .unwrap_or("none");
        let class = state.get("capacity_class").and_then(Value::as_str);
        let id = state.get("id").and_then(Value::as_str).unwrap_or_default();
        let started = Instant::now();
        loop {
            let object = match self.get(ctx, state).await {
                Ok(object) => object,
                Err(diags) => return (None, diags),
            };
            let outcome = match &object {
                Some(o) => status::check(self.kind, wait_for, o, class),
                None => WaitState::Failed("the object was deleted while waiting".into()),
            };
            let fail = |summary: String, detail: String| {
                (
                    object.clone(),
                    Diagnostics::error_at(AttrPath::attrs(&["wait_for"]), summary, detail),
                )
            };
            match outcome {
                WaitState::Done => return (object, Diagnostics::new()),
                WaitState::Failed(why) => {
                    return fail(
                        format!("{} {id} will not become {wait_for}", self.api.kind),
                        format!("{why}. The resource stays in state (tainted)."),
                    );
                }
                WaitState::Waiting(missing) if started.elapsed() >= timeout => {
                    return fail(
                        format!(
                            "Timed out waiting for {} {id} to be {wait_for}",
                            self.api.kind
                        ),
                        format!(
                            "After {}s: {missing}. The object was written and stays in state \
                             (tainted, so the next apply replaces it rather than creating it \
                             twice); raise the timeouts block to wait longer.",
                            timeout.as_secs()
                        ),
                    );
                }
                WaitState::Waiting(_) => tokio::time::sleep(WAIT_POLL).await,
            }
        }
    }

    /// `state` with every unknown fact filled from `object` (or a known empty value).
    fn fill_facts(&self, state: Value, object: Option<&Json>) -> Value {
        let facts = status::facts(self.kind, object.unwrap_or(&Json::Null));
        let Value::Object(mut attrs) = state else {
            return state;
        };
        for (name, value) in facts {
            if attrs.get(&name).is_none_or(Value::is_unknown) {
                attrs.insert(name, value);
            }
        }
        Value::Object(attrs)
    }
}

/// The `spec` OpenAPI schema (JSON) of the first version of custom resource `K`'s CRD.
pub fn spec_schema_of<K: kube::CustomResourceExt>() -> Json {
    let crd = K::crd();
    crd.spec
        .versions
        .first()
        .and_then(|v| v.schema.as_ref())
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| serde_json::to_value(s).ok())
        .and_then(|s| s.pointer("/properties/spec").cloned())
        .unwrap_or_default()
}

fn merge(resource: Value, values: BTreeMap<String, Value>) -> Value {
    match resource {
        Value::Object(mut attrs) => {
            attrs.extend(values);
            Value::Object(attrs)
        }
        other => other,
    }
}

fn same_identity(a: &Value, b: &Value) -> bool {
    a.get("name") == b.get("name") && a.get("namespace") == b.get("namespace")
}

#[tonic::async_trait]
impl Resource for WorkloadResource {
    fn type_name(&self) -> &str {
        self.inner.type_name()
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut diags = self.inner.validate(config);
        if let Some(Value::String(wait_for)) = config.get("wait_for") {
            let allowed = status::wait_values(self.kind);
            if !allowed.contains(&wait_for.as_str()) {
                diags.push_error(
                    Some(AttrPath::attrs(&["wait_for"])),
                    "Invalid wait_for",
                    format!("{wait_for:?} is not one of {}.", allowed.join(", ")),
                );
            }
        }
        diags
    }

    fn plan(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
        proposed: &Value,
        config: &Value,
    ) -> Result<Planned, Diagnostics> {
        let mut planned = self.inner.plan(ctx, prior, proposed, config)?;
        if planned.state.is_null() {
            return Ok(planned);
        }
        let values = computed::plan_time_values(self.kind, self.inner.fields(), &planned.state)?;
        let spec_unchanged = !prior.is_null()
            && same_identity(prior, &planned.state)
            && quantity::spec_equal(&self.spec_schema, prior, &planned.state);
        let facts = status::fact_attributes(self.kind).iter().map(|name| {
            let value = match prior.get(name) {
                Some(v) if spec_unchanged => v.clone(),
                _ => Value::Unknown,
            };
            ((*name).to_string(), value)
        });
        let values: BTreeMap<_, _> = values.into_iter().chain(facts).collect();
        planned.state = merge(planned.state, values);
        // A quantity rewritten with the same amount (`0.5` -> `500m`) never replaces.
        planned.requires_replace.retain(|path| {
            let Some(crate::diag::Step::Attr(name)) = path.0.first() else {
                return true;
            };
            let is_spec = self.inner.fields().iter().any(|f| &f.tf_name == name);
            let (before, after) = (prior.get(name), planned.state.get(name));
            match (before, after) {
                (Some(b), Some(a)) if is_spec => {
                    let only =
                        |v: &Value| Value::Object(BTreeMap::from([(name.clone(), v.clone())]));
                    !quantity::spec_equal(&self.spec_schema, &only(b), &only(a))
                }
                _ => true,
            }
        });
        Ok(planned)
    }

    async fn read(&self, ctx: &ProviderContext, state: &Value) -> Result<Value, Diagnostics> {
        // One GET: the spec fields and the status facts come from the same object.
        let Some(live) = self.inner.fetch(ctx, state).await? else {
            return Ok(Value::Null);
        };
        let mut read = self
            .inner
            .state_from_live(&ctx.config.field_manager, state, &live);
        quantity::keep_written(&self.spec_schema, state, &mut read);
        let object = serde_json::to_value(&live).unwrap_or(Json::Null);
        let wait_for = state.get("wait_for").cloned().unwrap_or(Value::Null);
        let read = merge(read, BTreeMap::from([("wait_for".to_string(), wait_for)]));
        let read = merge(read, status::facts(self.kind, &object));
        Ok(self.with_plan_time_values(read))
    }

    async fn apply(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> (Value, Diagnostics) {
        if planned.is_null() {
            return self.inner.apply(ctx, prior, planned, config).await;
        }
        // Nothing to send when only wait_for, timeouts or the written form of an equal quantity
        // changed (a TrainingRun's spec could not take even that).
        let state = if !prior.is_null()
            && same_identity(prior, planned)
            && quantity::spec_equal(&self.spec_schema, prior, planned)
        {
            planned.clone()
        } else {
            let (state, diags) = self.inner.apply(ctx, prior, planned, config).await;
            if diags.has_errors() {
                return (state, diags);
            }
            // The attributes this type adds are planned here, not by the generic type: carry
            // them over as planned (every known planned value must come back unchanged).
            let added = self
                .added_attributes()
                .filter_map(|name| planned.get(name).map(|v| (name.to_string(), v.clone())));
            merge(state, added.collect())
        };
        let which = if prior.is_null() { "create" } else { "update" };
        let timeout = timeouts::get(planned, which, DEFAULT_WAIT);
        let (object, diags) = self.wait(ctx, &state, timeout).await;
        (self.fill_facts(state, object.as_ref()), diags)
    }

    async fn import(&self, ctx: &ProviderContext, id: &str) -> Result<Value, Diagnostics> {
        let state = self.inner.import(ctx, id).await?;
        let object = self.get(ctx, &state).await?;
        let state = merge(
            state,
            BTreeMap::from([("wait_for".to_string(), Value::Null)]),
        );
        let state = merge(
            state,
            status::facts(self.kind, object.as_ref().unwrap_or(&Json::Null)),
        );
        Ok(self.with_plan_time_values(state))
    }
}

#[cfg(test)]
mod tests;
