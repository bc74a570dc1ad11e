//! The tfplugin5 `Provider` gRPC service: decodes requests, dispatches to the resource and data source registry,
//! encodes responses. Unimplemented RPCs (ephemeral resources, functions, moves) keep tonic's generated default,
//! which answers `Unimplemented`.
//!
//! Every failure the user can act on is a diagnostic in the response, never a gRPC error.

use std::sync::Arc;

use tokio::sync::RwLock;
use tonic::{Request, Response, Status};

use crate::config::{self, ProviderConfig};
use crate::diag::Diagnostics;
use crate::proto::tfplugin5 as pb;
use crate::resources::api_error::cluster_named;
use crate::resources::attributes::ID;
use crate::resources::{ProviderContext, Registry, cluster_identity, takeover};
use crate::schema::{Schema, provider_schema};
use crate::value::{self, Type, Value};

/// The provider service.
pub struct ProviderService {
    registry: Registry,
    context: RwLock<Option<Arc<ProviderContext>>>,
    /// Becomes true on the Stop RPC; every context configured by this service watches it.
    stop: tokio::sync::watch::Sender<bool>,
}

impl ProviderService {
    /// A service over `registry`, not configured yet.
    pub fn new(registry: Registry) -> ProviderService {
        ProviderService {
            registry,
            context: RwLock::new(None),
            stop: tokio::sync::watch::channel(false).0,
        }
    }

    async fn context(&self) -> Result<Arc<ProviderContext>, Diagnostics> {
        self.context.read().await.clone().ok_or_else(|| {
            Diagnostics::error(
                "Provider not configured",
                "Terraform called a resource or data source operation before Configure.",
            )
        })
    }
}

/// Decodes a DynamicValue (msgpack, or JSON when only that is set); an absent value is null.
fn decode(value: Option<&pb::DynamicValue>, ty: &Type, what: &str) -> Result<Value, Diagnostics> {
    let Some(dv) = value else {
        return Ok(Value::Null);
    };
    let result = if !dv.msgpack.is_empty() {
        value::msgpack::decode(&dv.msgpack, ty)
    } else if !dv.json.is_empty() {
        value::json::decode(&dv.json, ty)
    } else {
        return Ok(Value::Null);
    };
    result.map_err(|e| {
        Diagnostics::error(
            format!("Invalid {what} from Terraform"),
            format!("The provider could not decode the {what}: {e}"),
        )
    })
}

/// The diagnostics of `check` on a configuration of `schema` (the Validate*Config RPCs), or why it did not decode.
fn validated(
    schema: &Schema,
    config: Option<&pb::DynamicValue>,
    check: impl FnOnce(&Value) -> Diagnostics,
) -> Diagnostics {
    match decode(config, &schema.value_type(), "configuration") {
        Ok(config) => check(&config),
        Err(diags) => diags,
    }
}

/// Encodes a value as a msgpack DynamicValue.
fn encode(value: &Value, ty: &Type) -> Result<pb::DynamicValue, Diagnostics> {
    value::msgpack::encode(value, ty)
        .map(|msgpack| pb::DynamicValue {
            msgpack,
            json: vec![],
        })
        .map_err(|e| Diagnostics::error("Provider produced an invalid value", e.to_string()))
}

#[tonic::async_trait]
impl pb::provider_server::Provider for ProviderService {
    async fn get_metadata(
        &self,
        _request: Request<pb::get_metadata::Request>,
    ) -> Result<Response<pb::get_metadata::Response>, Status> {
        Ok(Response::new(pb::get_metadata::Response {
            server_capabilities: Some(pb::ServerCapabilities::default()),
            resources: self
                .registry
                .iter()
                .map(|r| pb::get_metadata::ResourceMetadata {
                    type_name: r.type_name().to_string(),
                })
                .collect(),
            data_sources: self
                .registry
                .data_sources()
                .map(|d| pb::get_metadata::DataSourceMetadata {
                    type_name: d.type_name().to_string(),
                })
                .collect(),
            ..Default::default()
        }))
    }

    async fn get_schema(
        &self,
        _request: Request<pb::get_provider_schema::Request>,
    ) -> Result<Response<pb::get_provider_schema::Response>, Status> {
        Ok(Response::new(pb::get_provider_schema::Response {
            provider: Some(provider_schema().to_proto()),
            resource_schemas: self
                .registry
                .iter()
                .map(|r| (r.type_name().to_string(), r.schema().to_proto()))
                .collect(),
            data_source_schemas: self
                .registry
                .data_sources()
                .map(|d| (d.type_name().to_string(), d.schema().to_proto()))
                .collect(),
            server_capabilities: Some(pb::ServerCapabilities::default()),
            ..Default::default()
        }))
    }

    async fn prepare_provider_config(
        &self,
        request: Request<pb::prepare_provider_config::Request>,
    ) -> Result<Response<pb::prepare_provider_config::Response>, Status> {
        let request = request.into_inner();
        let ty = provider_schema().value_type();
        let diagnostics = match decode(request.config.as_ref(), &ty, "provider configuration") {
            Ok(config) => config::validate(&config),
            Err(diags) => diags,
        };
        Ok(Response::new(pb::prepare_provider_config::Response {
            prepared_config: request.config,
            diagnostics: diagnostics.to_proto(),
        }))
    }

    async fn validate_resource_type_config(
        &self,
        request: Request<pb::validate_resource_type_config::Request>,
    ) -> Result<Response<pb::validate_resource_type_config::Response>, Status> {
        let request = request.into_inner();
        let diagnostics = match self.registry.get(&request.type_name) {
            Ok(resource) => validated(resource.schema(), request.config.as_ref(), |config| {
                resource.validate(config)
            }),
            Err(diags) => diags,
        };
        Ok(Response::new(pb::validate_resource_type_config::Response {
            diagnostics: diagnostics.to_proto(),
        }))
    }

    async fn validate_data_source_config(
        &self,
        request: Request<pb::validate_data_source_config::Request>,
    ) -> Result<Response<pb::validate_data_source_config::Response>, Status> {
        let request = request.into_inner();
        let diagnostics = match self.registry.data_source(&request.type_name) {
            Ok(data_source) => validated(data_source.schema(), request.config.as_ref(), |config| {
                data_source.validate(config)
            }),
            Err(diags) => diags,
        };
        Ok(Response::new(pb::validate_data_source_config::Response {
            diagnostics: diagnostics.to_proto(),
        }))
    }

    async fn read_data_source(
        &self,
        request: Request<pb::read_data_source::Request>,
    ) -> Result<Response<pb::read_data_source::Response>, Status> {
        let request = request.into_inner();
        let result = async {
            let data_source = self.registry.data_source(&request.type_name)?;
            let ty = data_source.schema().value_type();
            let config = decode(request.config.as_ref(), &ty, "configuration")?;
            let ctx = self.context().await?;
            encode(&data_source.read(&ctx, &config).await?, &ty)
        }
        .await;
        let (state, diagnostics) = match result {
            Ok(state) => (Some(state), Diagnostics::new()),
            Err(diags) => (None, diags),
        };
        Ok(Response::new(pb::read_data_source::Response {
            state,
            diagnostics: diagnostics.to_proto(),
            deferred: None,
        }))
    }

    async fn upgrade_resource_state(
        &self,
        request: Request<pb::upgrade_resource_state::Request>,
    ) -> Result<Response<pb::upgrade_resource_state::Response>, Status> {
        let request = request.into_inner();
        let result = (|| {
            let resource = self.registry.get(&request.type_name)?;
            let raw = request.raw_state.unwrap_or_default();
            if raw.json.is_empty() {
                if !raw.flatmap.is_empty() {
                    return Err(Diagnostics::error(
                        "Unsupported legacy state",
                        "This state is in the pre-0.12 flatmap format, which this provider \
                         never wrote.",
                    ));
                }
                return encode(&Value::Null, &resource.schema().value_type());
            }
            let upgraded = resource.upgrade(request.version, &raw.json)?;
            encode(&upgraded, &resource.schema().value_type())
        })();
        let (upgraded_state, diagnostics) = match result {
            Ok(state) => (Some(state), Diagnostics::new()),
            Err(diags) => (None, diags),
        };
        Ok(Response::new(pb::upgrade_resource_state::Response {
            upgraded_state,
            diagnostics: diagnostics.to_proto(),
        }))
    }

    async fn configure(
        &self,
        request: Request<pb::configure::Request>,
    ) -> Result<Response<pb::configure::Response>, Status> {
        let request = request.into_inner();
        let ty = provider_schema().value_type();
        let diagnostics = match decode(request.config.as_ref(), &ty, "provider configuration") {
            Ok(config) => {
                let diags = config::validate(&config);
                if !diags.has_errors() {
                    let parsed = ProviderConfig::from_value(&config);
                    tracing::debug!(
                        terraform = %request.terraform_version,
                        field_manager = %parsed.field_manager,
                        "provider configured"
                    );
                    *self.context.write().await = Some(Arc::new(ProviderContext::with_stop(
                        parsed,
                        self.stop.subscribe(),
                    )));
                }
                diags
            }
            Err(diags) => diags,
        };
        Ok(Response::new(pb::configure::Response {
            diagnostics: diagnostics.to_proto(),
        }))
    }

    async fn read_resource(
        &self,
        request: Request<pb::read_resource::Request>,
    ) -> Result<Response<pb::read_resource::Response>, Status> {
        let request = request.into_inner();
        let result = async {
            let resource = self.registry.get(&request.type_name)?;
            let ty = resource.schema().value_type();
            let state = decode(request.current_state.as_ref(), &ty, "current state")?;
            if state.is_null() {
                return Ok((encode(&Value::Null, &ty)?, request.private.clone(), Diagnostics::new()));
            }
            let ctx = self.context().await?;
            if let Some(unknown) = ctx.unknown_connection() {
                // The client could reach another cluster: keep what the last apply recorded, as it was sent.
                let id = state.get(ID).and_then(Value::as_str).unwrap_or_default();
                let mut warning = Diagnostics::new();
                warning.push_warning(
                    None,
                    "Not refreshed: provider connection not known yet",
                    format!(
                        "{unknown}, so {} {id} was not read: Terraform compares the configuration with the state \
                         the last apply recorded. Changes made outside Terraform show at the first refresh after the \
                         settings are known. If the cluster itself is replaced, see \"Connection settings known only \
                         after apply\" in the provider's documentation.",
                        request.type_name
                    ),
                );
                let kept = request.current_state.clone().unwrap_or_default();
                return Ok((kept, request.private.clone(), warning));
            }
            let (new_state, warnings) = resource.read(&ctx, &state).await?;
            let current = ctx.cluster_uid().await;
            if new_state.is_null() {
                // Not found: really gone, or the provider now talks to another cluster (an error, state kept).
                cluster_identity::check_gone(
                    cluster_identity::recorded(&request.private).as_deref(),
                    current.as_deref(),
                    resource.kind(),
                    state.get(ID).and_then(Value::as_str).unwrap_or_default(),
                    &cluster_named(&ctx),
                )?;
            }
            // Found: this is the object's cluster (states from older providers get their identity here).
            let private = if new_state.is_null() {
                request.private.clone()
            } else {
                cluster_identity::with_identity(&request.private, current.as_deref())
            };
            Ok::<_, Diagnostics>((encode(&new_state, &ty)?, private, warnings))
        }
        .await;
        let (new_state, private, diagnostics) = match result {
            Ok((state, private, warnings)) => (Some(state), private, warnings),
            // On failure keep the current state (Terraform reports the error) and echo the private data (or
            // Terraform drops it).
            Err(diags) => (request.current_state, request.private, diags),
        };
        Ok(Response::new(pb::read_resource::Response {
            new_state,
            diagnostics: diagnostics.to_proto(),
            private,
            deferred: None,
        }))
    }

    async fn plan_resource_change(
        &self,
        request: Request<pb::plan_resource_change::Request>,
    ) -> Result<Response<pb::plan_resource_change::Response>, Status> {
        let request = request.into_inner();
        let result = async {
            let resource = self.registry.get(&request.type_name)?;
            let ty = resource.schema().value_type();
            let prior = decode(request.prior_state.as_ref(), &ty, "prior state")?;
            let proposed = decode(request.proposed_new_state.as_ref(), &ty, "proposed state")?;
            let config = decode(request.config.as_ref(), &ty, "configuration")?;
            let ctx = self.context().await?;
            let planned = resource.plan(&ctx, &prior, &proposed, &config)?;
            Ok::<_, Diagnostics>((
                encode(&planned.state, &ty)?,
                planned.requires_replace,
                planned.warnings,
            ))
        }
        .await;
        Ok(Response::new(match result {
            Ok((planned_state, requires_replace, warnings)) => pb::plan_resource_change::Response {
                planned_state: Some(planned_state),
                requires_replace: requires_replace.iter().map(|p| p.to_proto()).collect(),
                diagnostics: warnings.to_proto(),
                planned_private: request.prior_private,
                ..Default::default()
            },
            Err(diags) => pb::plan_resource_change::Response {
                diagnostics: diags.to_proto(),
                ..Default::default()
            },
        }))
    }

    async fn apply_resource_change(
        &self,
        request: Request<pb::apply_resource_change::Request>,
    ) -> Result<Response<pb::apply_resource_change::Response>, Status> {
        let request = request.into_inner();
        let result = async {
            let resource = self.registry.get(&request.type_name)?;
            let ty = resource.schema().value_type();
            let prior = decode(request.prior_state.as_ref(), &ty, "prior state")?;
            let planned = decode(request.planned_state.as_ref(), &ty, "planned state")?;
            let config = decode(request.config.as_ref(), &ty, "configuration")?;
            let ctx = self.context().await?;
            let manager = &ctx.config.field_manager;
            let takeover = takeover::decide(&request.planned_private, manager);
            let applied = resource
                .apply(&ctx, (&prior, &planned, &config), &takeover)
                .await;
            // The object now exists on the cluster the provider talks to: record which one, and which field manager
            // wrote it last.
            let private = if applied.state.is_null() {
                request.planned_private.clone()
            } else {
                let private = cluster_identity::with_identity(
                    &request.planned_private,
                    ctx.cluster_uid().await.as_deref(),
                );
                match &applied.wrote {
                    Some(wrote) => takeover::written(&private, manager, wrote.uid.as_deref()),
                    None => private,
                }
            };
            Ok::<_, Diagnostics>((encode(&applied.state, &ty)?, applied.diagnostics, private))
        }
        .await;
        let (new_state, diagnostics, private) = match result {
            Ok((state, diags, private)) => (Some(state), diags, private),
            Err(diags) => (request.prior_state, diags, request.planned_private),
        };
        Ok(Response::new(pb::apply_resource_change::Response {
            new_state,
            private,
            diagnostics: diagnostics.to_proto(),
            legacy_type_system: false,
        }))
    }

    async fn import_resource_state(
        &self,
        request: Request<pb::import_resource_state::Request>,
    ) -> Result<Response<pb::import_resource_state::Response>, Status> {
        let request = request.into_inner();
        let result = async {
            let resource = self.registry.get(&request.type_name)?;
            let ctx = self.context().await?;
            ctx.require_known_connection(
                &format!("{:?} cannot be imported", request.id),
                "Apply what the provider settings come from first, then import.",
            )?;
            let state = resource.import(&ctx, &request.id).await?;
            // Its first write takes over the fields it writes (`takeover`).
            let private = takeover::imported(&cluster_identity::with_identity(
                &[],
                ctx.cluster_uid().await.as_deref(),
            ));
            Ok::<_, Diagnostics>((encode(&state, &resource.schema().value_type())?, private))
        }
        .await;
        Ok(Response::new(match result {
            Ok((state, private)) => pb::import_resource_state::Response {
                imported_resources: vec![pb::import_resource_state::ImportedResource {
                    type_name: request.type_name,
                    state: Some(state),
                    private,
                }],
                ..Default::default()
            },
            Err(diags) => pb::import_resource_state::Response {
                diagnostics: diags.to_proto(),
                ..Default::default()
            },
        }))
    }

    async fn stop(
        &self,
        _request: Request<pb::stop::Request>,
    ) -> Result<Response<pb::stop::Response>, Status> {
        // Terraform sends Stop on Ctrl-C and then waits for the operations in flight: a `wait_for` or a delete poll
        // ends now with the object as it is (in state, tainted) instead of at its timeout.
        tracing::info!("Terraform asked the provider to stop; ending waits");
        self.stop.send_replace(true);
        Ok(Response::new(pb::stop::Response::default()))
    }
}

#[cfg(test)]
mod tests;
