//! The writes of [`CustomResource`]: create or update by server-side apply, delete with its wait, and the
//! `wait_for` loop.

use std::time::{Duration, Instant};

use kube::Api;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams};
use serde_json::Value as Json;

use super::super::api_error::{self, Action};
use super::super::attributes::{ID, NAME, NAMESPACE, WAIT_FOR};
use super::super::kind::{Kind, WaitState};
use super::super::outage::Outage;
use super::super::takeover::{self, Takeover};
use super::super::{ProviderContext, fields, managed, quantity, timeouts, wait};
use super::{CustomResource, DELETE_POLL, WAIT_POLL, live_facts, namespace_and_name};
use crate::config::DefaultNamespace;
use crate::diag::{AttrPath, Diagnostics};
use crate::value::Value;
use model_fleet_api::ownership::CREATE_ONLY_VERSION;

/// What a server-side apply of [`CustomResource::create_or_update`] wrote.
pub(super) struct Written {
    /// The new state: the plan with `id` and `namespace` known.
    pub state: Value,
    /// Fields other managers keep on the object that the configuration leaves out.
    pub warnings: Diagnostics,
    /// The written object's UID (recorded in the private state, [`takeover::written`]).
    pub uid: Option<String>,
}

impl<K: Kind> CustomResource<K> {
    pub(super) async fn delete(
        &self,
        ctx: &ProviderContext,
        prior: &Value,
    ) -> Result<(), Diagnostics> {
        let (namespace, name) = namespace_and_name(prior)?;
        let object = format!("{namespace}/{name}");
        let api = self.client_api(self.client(ctx).await?, &namespace);
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.is_not_found() => return Ok(()),
            Err(e) => return Err(self.api_error(e, Action::Delete, &object, ctx)),
        }
        let timeout = timeouts::get(prior, "delete", timeouts::DEFAULT_DELETE);
        let started = Instant::now();
        let mut outage = Outage::default();
        loop {
            let asked = Instant::now();
            match api.get_opt(&name).await {
                Ok(None) => return Ok(()),
                Ok(Some(current)) => {
                    outage.ended();
                    if started.elapsed() >= timeout {
                        return Err(delete_timed_out(&self.api.kind, &object, timeout, &current));
                    }
                }
                Err(e) if outage.tolerates(asked, &e) && started.elapsed() < timeout => {}
                Err(e) => return Err(self.api_error(e, Action::Read, &object, ctx)),
            }
            if ctx.sleep_unless_stopped(DELETE_POLL).await {
                return Err(Diagnostics::error(
                    format!("Stopped while deleting {} {object}", self.api.kind),
                    "Terraform was interrupted: the delete request was sent but the object still exists, so it \
                     stays in state; run destroy (or apply) again to finish.",
                ));
            }
        }
    }

    pub(super) async fn create_or_update(
        &self,
        ctx: &ProviderContext,
        (prior, planned, config): (&Value, &Value, &Value),
        takeover: &Takeover,
    ) -> Result<Written, Diagnostics> {
        // The planned state is what Terraform asked for: it holds the prior value of an attribute under
        // `lifecycle { ignore_changes }` that the configuration no longer sets (the configuration alone would drop it
        // from our field set, and server-side apply would remove it). Its unknowns, values that came from other
        // resources, the configuration fills: it is wholly known at apply time.
        let desired = &planned.fill_unknowns(config);
        let name = desired
            .get(NAME)
            .and_then(Value::as_str)
            .ok_or_else(|| Diagnostics::error_at(AttrPath::attrs(&[NAME]), "Name not known", ""))?
            .to_string();
        let namespace = apply_namespace(ctx, planned, config)?;
        let object = format!("{namespace}/{name}");
        let mut spec = Json::Object(fields::to_json(&self.fields, desired, &AttrPath::root())?);
        let configured = if config.is_null() {
            spec.clone()
        } else {
            Json::Object(fields::to_json(&self.fields, config, &AttrPath::root())?)
        };
        let api = self.client_api(self.client(ctx).await?, &namespace);
        // One read before the write: a create must not take over an object it did not make, and an update sends the
        // stored form of every value the plan found equal (`quantity::keep_live`).
        let existing = api_error::get_object(&api, &name)
            .await
            .map_err(|e| self.api_error(e, Action::Read, &object, ctx))?;
        let (force, ours) = self.before_write(
            ctx,
            (existing, prior, &object),
            (&mut spec, &configured),
            takeover,
        )?;
        let creating = prior.is_null();
        let manifest = self.manifest(&namespace, &name, spec, creating);
        let apply = |force: bool| {
            let mut params = PatchParams::apply(&ctx.config.field_manager);
            if force {
                params = params.force();
            }
            let (api, name, manifest) = (&api, &name, &manifest);
            async move { api.patch(name, &params, &Patch::Apply(manifest)).await }
        };
        let written = match apply(force).await {
            // Fields we share with the manager that set them (an import's or a new field manager's write forced only
            // the fields it changed): nobody took them from Terraform, so they are taken over.
            Err(kube::Error::Api(status))
                if !force && takeover::only_shared_conflicts(&status, ours.as_ref()) =>
            {
                tracing::info!(%object, conflict = %status.message, "taking over fields shared with another manager");
                apply(true).await
            }
            other => other,
        }
        .map_err(|e| self.apply_error(e, creating, &object, ctx))?;
        let uid = written.metadata.uid.clone();
        let warnings = kept_by_others(&self.api.kind, &object, &written, manifest["spec"].clone());
        // The CRDs add no defaults, so the object holds exactly the planned spec: the new state is the plan (every
        // known planned value unchanged) with id and namespace known.
        let Value::Object(mut state) = planned.clone() else {
            return Err(Diagnostics::error(
                "Invalid planned state",
                "expected an object",
            ));
        };
        state.insert(ID.into(), Value::string(&object));
        state.insert(NAMESPACE.into(), Value::string(&namespace));
        Ok(Written {
            state: Value::Object(state),
            warnings,
            uid,
        })
    }

    /// What the read before a write decides (no I/O): a create refuses an `existing` object it did not make, an update
    /// refuses one being deleted, sends the stored form of every value the plan found equal (`quantity::keep_live`,
    /// into `spec`) and leaves out what the configuration's spec `configured` does not set unless our field manager
    /// owns it (`managed::drop_unconfigured`: an `ignore_changes` value; a create has none, its plan is the
    /// configuration). Returns whether to force the server-side apply (when `force_conflicts` is set, and when
    /// `takeover` says so: the first write after an import, after a change of `field_manager`, or to an object
    /// created again outside Terraform; see [`super::super::takeover`]), and our field manager's `spec` field set of
    /// the live object.
    fn before_write(
        &self,
        ctx: &ProviderContext,
        (existing, prior, object): (Option<DynamicObject>, &Value, &str),
        (spec, configured): (&mut Json, &Json),
        takeover: &Takeover,
    ) -> Result<(bool, Option<Json>), Diagnostics> {
        let force = ctx.config.force_conflicts;
        match existing {
            Some(_) if prior.is_null() => Err(already_exists::<K>(&self.api.kind, object)),
            Some(live) if live.metadata.deletion_timestamp.is_some() => {
                Err(being_deleted(&self.api.kind, object, &live))
            }
            Some(live) => {
                let stored = live.data.get("spec").cloned().unwrap_or(Json::Null);
                quantity::keep_live(&self.spec_schema, &stored, spec);
                let ours = managed::owned_spec_fields(
                    live.metadata.managed_fields.as_deref().unwrap_or_default(),
                    &ctx.config.field_manager,
                );
                managed::drop_unconfigured(spec, configured, ours.as_ref());
                let forced = takeover.forces(live.metadata.uid.as_deref(), ours.is_some());
                Ok((force || forced, ours))
            }
            None => Ok((force, None)),
        }
    }

    /// The object as server-side apply takes it: `spec` under this kind's API version, name and namespace. `creating`:
    /// create-only ([`CREATE_ONLY_VERSION`]), so an object of this name made since the read before the write (by
    /// another resource of the same name in this apply, say) fails the write with 409 instead of being taken over.
    fn manifest(&self, namespace: &str, name: &str, spec: Json, creating: bool) -> Json {
        let mut manifest = serde_json::json!({
            "apiVersion": self.api.api_version,
            "kind": self.api.kind,
            "metadata": { "name": name, "namespace": namespace },
            "spec": spec,
        });
        if creating {
            manifest["metadata"]["resourceVersion"] = Json::from(CREATE_ONLY_VERSION);
        }
        manifest
    }

    /// The diagnostics of a failed apply of `object`: a conflict of a create is the object made meanwhile
    /// ([`already_exists`]); anything else as [`CustomResource::api_error`] says.
    fn apply_error(
        &self,
        error: kube::Error,
        creating: bool,
        object: &str,
        ctx: &ProviderContext,
    ) -> Diagnostics {
        match error {
            kube::Error::Api(status) if creating && status.is_conflict() => {
                already_exists::<K>(&self.api.kind, object)
            }
            error => self.api_error(error, Action::Apply, object, ctx),
        }
    }

    /// One read of a wait through `api`: `Ok(Ok(json))` with the object's JSON (`None` when it is gone), `Ok(Err(why))`
    /// when the read failed in an outage `outage` still tolerates (the wait polls again), else `Err` with the error's
    /// diagnostics.
    async fn read(
        &self,
        ctx: &ProviderContext,
        api: &Api<DynamicObject>,
        (namespace, name): (&str, &str),
        outage: &mut Outage,
    ) -> Result<Result<Option<Json>, String>, Diagnostics> {
        let asked = Instant::now();
        match api_error::get_object(api, name).await {
            Ok(read) => {
                outage.ended();
                Ok(Ok(read.and_then(|o| serde_json::to_value(o).ok())))
            }
            Err(e) if outage.tolerates(asked, &e) => {
                Ok(Err(format!("reading it failed ({e}); retrying")))
            }
            Err(e) => Err(self.api_error(e, Action::Read, &format!("{namespace}/{name}"), ctx)),
        }
    }

    /// Waits for `wait_for` of `state`; returns the last object seen and the diagnostics of a timeout or a failed
    /// run. `created`: the write created the object (Terraform then taints it on an error; an update it does not).
    pub(super) async fn wait(
        &self,
        ctx: &ProviderContext,
        state: &Value,
        timeout: Duration,
        created: bool,
    ) -> (Option<Json>, Diagnostics) {
        let kept = in_state(created);
        let wait_for = state
            .get(WAIT_FOR)
            .and_then(Value::as_str)
            .unwrap_or(wait::NONE);
        let id = state.get(ID).and_then(Value::as_str).unwrap_or_default();
        let kind = &self.api.kind;
        let cannot_tell = |mut diags: Diagnostics| {
            diags.push_error(
                Some(AttrPath::attrs(&[WAIT_FOR])),
                format!("Cannot tell whether {kind} {id} is {wait_for}"),
                format!("The object was written, then reading it back failed (above). {kept}"),
            );
            (None, diags)
        };
        let (api, namespace, name) = match self.api_of(ctx, state).await {
            Ok(found) => found,
            Err(diags) => return cannot_tell(diags),
        };
        let started = Instant::now();
        let mut outage = Outage::default();
        let mut object = None;
        loop {
            let outcome = match self.read(ctx, &api, (&namespace, &name), &mut outage).await {
                Ok(Ok(read)) => {
                    object = read;
                    match &object {
                        Some(o) => wait::check::<K>(wait_for, o, state),
                        None => WaitState::Failed("the object was deleted while waiting".into()),
                    }
                }
                Ok(Err(failed)) => WaitState::Waiting(failed),
                Err(diags) => return cannot_tell(diags),
            };
            let fail = |summary: String, detail: String| {
                (
                    object.clone(),
                    Diagnostics::error_at(AttrPath::attrs(&[WAIT_FOR]), summary, detail),
                )
            };
            let (missing, advice) = match outcome {
                WaitState::Done => return (object, Diagnostics::new()),
                WaitState::Failed(why) => {
                    return fail(
                        format!("{kind} {id} will not become {wait_for}"),
                        format!("{} {kept}", sentence(&why)),
                    );
                }
                WaitState::Waiting(missing) => (missing, wait::SLOW_ADVICE),
                WaitState::Stalled(missing) => (missing, wait::STALLED_ADVICE),
            };
            if started.elapsed() >= timeout {
                return fail(
                    format!("Timed out waiting for {kind} {id} to be {wait_for}"),
                    format!(
                        "After {}s: {} {kept} {advice}",
                        timeout.as_secs(),
                        sentence(&missing)
                    ),
                );
            }
            if ctx.sleep_unless_stopped(WAIT_POLL).await {
                return fail(
                    format!("Stopped waiting for {kind} {id} to be {wait_for}"),
                    format!(
                        "Terraform was interrupted after {}s: {} {kept}",
                        started.elapsed().as_secs(),
                        sentence(&missing)
                    ),
                );
            }
        }
    }
}

/// What becomes of the resource when a wait after its write fails: Terraform taints a resource whose create returned
/// an error with a new state, never one whose update did.
fn in_state(created: bool) -> &'static str {
    if created {
        "The object was written and stays in state, tainted: the next apply replaces it rather than creating it twice."
    } else {
        "The change was written and is in state (Terraform does not taint an updated resource): the next plan shows \
         no change for it, and the object converges once the cause is fixed."
    }
}

/// `text` ended as a sentence: with a full stop unless it ends with one, `?` or `!` (a wait's message may ask whether
/// the operator runs).
fn sentence(text: &str) -> String {
    if text.ends_with(['.', '?', '!']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// The error of an update to an object that is being deleted (its `deletionTimestamp` is set): the API server would
/// take the write, and the object would still go.
fn being_deleted(kind: &str, object: &str, live: &DynamicObject) -> Diagnostics {
    let finalizers = live.metadata.finalizers.clone().unwrap_or_default();
    let held = if finalizers.is_empty() {
        String::new()
    } else {
        format!(", held by finalizers: {}", finalizers.join(", "))
    };
    Diagnostics::error(
        format!("{kind} {object} is being deleted"),
        format!(
            "The object has a deletion timestamp{held}, so a change to it would be lost with it. Wait until it is \
             gone (the controller owning a finalizer removes it), then plan again: the plan creates it."
        ),
    )
}

/// The error of a create that finds `object` (`namespace/name` of `kind`) there already: made outside Terraform, or
/// by another resource of this configuration with the same name.
fn already_exists<K: Kind>(kind: &str, object: &str) -> Diagnostics {
    Diagnostics::error(
        format!("{kind} {object} already exists"),
        format!(
            "An object with this name exists already: made outside Terraform (import it with: terraform import \
             {}.<name> {object}), or by another resource of this configuration with the same name (give each its \
             own name). If this plan replaces the resource with create_before_destroy, the new object needs a name of \
             its own: change the name, or remove create_before_destroy.",
            K::TYPE_NAME
        ),
    )
}

pub(super) fn delete_timed_out(
    kind: &str,
    object: &str,
    timeout: Duration,
    current: &DynamicObject,
) -> Diagnostics {
    let blocking = super::terminating::holders(current).map_or_else(
        || "no finalizers are set; the API server has not finished deleting it".to_string(),
        |held| {
            if super::terminating::used_by(current).is_empty() {
                format!(
                    "{held}. The controller owning a finalizer must remove it (for example when a TrainingRun \
                     using the Dataset finishes)"
                )
            } else {
                held
            }
        },
    );
    let secs = timeout.as_secs();
    Diagnostics::error(
        format!("Timed out deleting {kind} {object}"),
        format!(
            "The object still exists after {secs}s: {blocking}. The resource stays in state, so destroy can be \
             retried: each try waits up to timeouts.delete ({secs}s) again. A destroy takes its timeouts from the \
             state, not the configuration: to wait longer per try, set timeouts {{ delete = \"30m\" }} in the \
             resource's block and run terraform apply first (put the block back if it was removed), then destroy."
        ),
    )
}

/// The namespace an apply writes to: the planned one, else the configured one, else the provider's.
fn apply_namespace(
    ctx: &ProviderContext,
    planned: &Value,
    config: &Value,
) -> Result<String, Diagnostics> {
    match (
        planned.get(NAMESPACE),
        config.get(NAMESPACE),
        &ctx.config.namespace,
    ) {
        (Some(Value::String(ns)), _, _) | (_, Some(Value::String(ns)), _) => Ok(ns.clone()),
        (_, _, DefaultNamespace::Known(ns)) => Ok(ns.clone()),
        (_, _, DefaultNamespace::Unknown) => Err(Diagnostics::error_at(
            AttrPath::attrs(&[NAMESPACE]),
            "Namespace not known",
            "The provider's namespace is still unknown at apply time.",
        )),
    }
}

/// `state` with every unknown fact filled from `object` (or a known empty value when the object is gone).
pub(super) fn fill_unknown_facts<K: Kind>(state: Value, object: Option<&Json>) -> Value {
    let facts = live_facts::<K>(object.unwrap_or(&Json::Null));
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

/// A warning naming the `spec` fields of the `written` object that the applied `desired` spec leaves out: other
/// field managers own them, so server-side apply keeps them ([`managed::kept_by_others`]) and a refresh does not
/// show them ([`managed::visible`]). Empty when there are none.
fn kept_by_others(kind: &str, object: &str, written: &DynamicObject, desired: Json) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let kept = managed::kept_by_others(&written.data["spec"], &desired);
    if !kept.is_empty() {
        let fields: Vec<String> = kept.iter().map(|path| format!("spec.{path}")).collect();
        diags.push_warning(
            None,
            format!("{kind} {object} keeps fields this configuration does not set"),
            format!(
                "{} {} set by another field manager (kubectl, the Slack bot, a script), and server-side apply \
                 removes only fields this provider set. Set them in the configuration to manage them here, or remove \
                 them where they were set (e.g. kubectl edit).",
                fields.join(", "),
                if fields.len() == 1 { "is" } else { "are" }
            ),
        );
    }
    diags
}
