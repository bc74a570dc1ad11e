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
