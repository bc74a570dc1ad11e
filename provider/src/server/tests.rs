//! The gRPC service without a cluster: schemas, diagnostics for bad input, RPCs before Configure, Stop.

use super::*;
use crate::proto::tfplugin5::provider_server::Provider as _;

#[tokio::test]
async fn schema_lists_every_type_and_marks_secrets() {
    let service = ProviderService::new(Registry::builtin());
    let schema = service
        .get_schema(Request::new(pb::get_provider_schema::Request {}))
        .await
        .unwrap()
        .into_inner();
    let types = [
        "modelfleet_dataset",
        "modelfleet_inference",
        "modelfleet_training",
    ];
    let mut resources: Vec<&str> = schema.resource_schemas.keys().map(String::as_str).collect();
    let mut data_sources: Vec<&str> = schema
        .data_source_schemas
        .keys()
        .map(String::as_str)
        .collect();
    resources.sort();
    data_sources.sort();
    assert_eq!((resources, data_sources), (types.to_vec(), types.to_vec()));
    let metadata = service
        .get_metadata(Request::new(pb::get_metadata::Request {}))
        .await
        .unwrap()
        .into_inner();
    let listed: Vec<&str> = metadata
        .data_sources
        .iter()
        .map(|d| d.type_name.as_str())
        .collect();
    assert_eq!(listed, types, "GetMetadata lists the data sources too");
    let provider = schema.provider.unwrap().block.unwrap();
    let token = provider
        .attributes
        .iter()
        .find(|a| a.name == "token")
        .unwrap();
    assert!(token.sensitive);
}

#[tokio::test]
async fn unknown_type_and_garbage_are_diagnostics_not_errors() {
    let service = ProviderService::new(Registry::builtin());
    let response = service
        .validate_resource_type_config(Request::new(pb::validate_resource_type_config::Request {
            type_name: "modelfleet_nope".into(),
            config: None,
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.diagnostics.len(), 1);
    let response = service
        .validate_resource_type_config(Request::new(pb::validate_resource_type_config::Request {
            type_name: "modelfleet_dataset".into(),
            config: Some(pb::DynamicValue {
                msgpack: vec![0xde, 0xff],
                json: vec![],
            }),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(
        response.diagnostics[0]
            .summary
            .contains("Invalid configuration")
    );
}

#[tokio::test]
async fn plan_before_configure_is_a_diagnostic() {
    let service = ProviderService::new(Registry::builtin());
    let response = service
        .plan_resource_change(Request::new(pb::plan_resource_change::Request {
            type_name: "modelfleet_dataset".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.diagnostics[0].summary, "Provider not configured");
}

#[tokio::test]
async fn stop_reaches_the_configured_context() {
    let service = ProviderService::new(Registry::builtin());
    let watcher = service.stop.subscribe();
    service
        .stop(Request::new(pb::stop::Request::default()))
        .await
        .unwrap();
    assert!(*watcher.borrow(), "Stop did not signal the waits");
}

#[tokio::test]
async fn unimplemented_rpcs_answer_unimplemented() {
    let service = ProviderService::new(Registry::builtin());
    let status = service
        .move_resource_state(Request::new(pb::move_resource_state::Request::default()))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented);
}

#[tokio::test]
async fn a_data_source_read_before_configure_or_of_an_unknown_type_is_a_diagnostic() {
    let service = ProviderService::new(Registry::builtin());
    let read = |type_name: &str| pb::read_data_source::Request {
        type_name: type_name.into(),
        ..Default::default()
    };
    let response = service
        .read_data_source(Request::new(read("modelfleet_inference")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.diagnostics[0].summary, "Provider not configured");
    assert_eq!(response.state, None);
    let response = service
        .read_data_source(Request::new(read("modelfleet_nope")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.diagnostics[0].summary, "Unknown data source type");
    let response = service
        .validate_data_source_config(Request::new(pb::validate_data_source_config::Request {
            type_name: "modelfleet_nope".into(),
            config: None,
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.diagnostics[0].summary, "Unknown data source type");
}

/// A service configured with the connection settings `host` and `token` unknown (as Terraform sends them during a
/// plan when they come from a cluster not created yet). `host` is set too: were a read to go on, it would go to
/// port 9 of this host, where nothing listens.
async fn configured_with_unknown_connection() -> ProviderService {
    let service = ProviderService::new(Registry::builtin());
    *service.context.write().await = Some(Arc::new(ProviderContext::new(ProviderConfig {
        host: Some("https://127.0.0.1:9".into()),
        unknown_connection: vec!["host".into(), "token".into()],
        ..ProviderConfig::default()
    })));
    service
}

#[tokio::test]
async fn a_refresh_while_the_connection_is_unknown_keeps_the_state_and_warns() {
    let service = configured_with_unknown_connection().await;
    let ty = Registry::builtin()
        .get("modelfleet_dataset")
        .unwrap()
        .schema()
        .value_type();
    let Value::Object(mut state) = Value::null_object(&ty) else {
        panic!("a resource's type is an object")
    };
    state.insert(ID.into(), Value::string("ml/imdb"));
    state.insert("name".into(), Value::string("imdb"));
    let current = encode(&Value::Object(state), &ty).unwrap();
    let private = br#"{"cluster_uid":"recorded"}"#.to_vec();
    let response = service
        .read_resource(Request::new(pb::read_resource::Request {
            type_name: "modelfleet_dataset".into(),
            current_state: Some(current.clone()),
            private: private.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.new_state, Some(current), "the state is kept as is");
    assert_eq!(response.private, private, "the private data is echoed");
    let [warning] = &response.diagnostics[..] else {
        panic!("one warning: {:?}", response.diagnostics)
    };
    assert_eq!(warning.severity, pb::diagnostic::Severity::Warning as i32);
    assert_eq!(
        warning.summary,
        "Not refreshed: provider connection not known yet"
    );
    for part in ["`host` and `token` depend on", "modelfleet_dataset ml/imdb"] {
        assert!(warning.detail.contains(part), "{part}: {}", warning.detail);
    }
}

#[tokio::test]
async fn an_import_while_the_connection_is_unknown_is_refused() {
    let service = configured_with_unknown_connection().await;
    let response = service
        .import_resource_state(Request::new(pb::import_resource_state::Request {
            type_name: "modelfleet_dataset".into(),
            id: "ml/imdb".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(response.imported_resources.is_empty());
    let [error] = &response.diagnostics[..] else {
        panic!("one error: {:?}", response.diagnostics)
    };
    assert_eq!(error.severity, pb::diagnostic::Severity::Error as i32);
    assert_eq!(error.summary, "Provider connection not known yet");
    assert!(
        error.detail.contains("`host` and `token` depend on")
            && error.detail.contains("\"ml/imdb\""),
        "{}",
        error.detail
    );
}
