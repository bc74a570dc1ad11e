//! go-plugin's `plugin.GRPCController` service: Terraform calls `Shutdown` when it no longer needs
//! the plugin; without it Terraform waits 2 s per provider process and logs a failure.

use std::sync::Arc;

use tokio::sync::Notify;
use tonic::{Request, Response, Status};

use crate::proto::plugin::Empty;
use crate::proto::plugin::grpc_controller_server::GrpcController;

/// Signals the serve loop to exit when `Shutdown` arrives.
#[derive(Clone, Default)]
pub struct Controller {
    shutdown: Arc<Notify>,
}

impl Controller {
    /// A controller with a fresh shutdown signal.
    pub fn new() -> Controller {
        Controller::default()
    }

    /// Completes once `Shutdown` was called (also if it was called before this is awaited).
    pub async fn wait(&self) {
        self.shutdown.notified().await;
    }
}

#[tonic::async_trait]
impl GrpcController for Controller {
    async fn shutdown(&self, _request: Request<Empty>) -> Result<Response<Empty>, Status> {
        tracing::debug!("Shutdown requested by Terraform");
        // notify_one stores a permit, so a waiter arriving later still wakes.
        self.shutdown.notify_one();
        Ok(Response::new(Empty {}))
    }
}
