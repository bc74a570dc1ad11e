//! Generated protobuf and gRPC code (see `build.rs`).
//!
//! * [`tfplugin5`]: Terraform plugin protocol 5.8 (`proto/tfplugin5.proto`).
//! * [`plugin`]: go-plugin's `GRPCController` service (`proto/grpc_controller.proto`).

/// Terraform plugin protocol 5.8: messages, `Provider` server trait and client.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod tfplugin5 {
    tonic::include_proto!("tfplugin5");
}

/// go-plugin's controller protocol (`plugin.GRPCController/Shutdown`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod plugin {
    tonic::include_proto!("plugin");
}
