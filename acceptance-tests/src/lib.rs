//! Helpers for end-to-end tests against the local control plane (etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler, kwok-simulated nodes and the real node `real-1`, see
//! [`real_node`]; all in `cluster/`).
//!
//! A test binary connects once per process with [`Cluster::connect`], which reuses the instance
//! named by `MODEL_FLEET_INSTANCE` (set by `make test`) or starts the `test` instance itself, then
//! gets a fresh [`kube::Client`] per test (a client belongs to the Tokio runtime that built it, and
//! every `#[tokio::test]` has its own), a unique namespace per test ([`TestNamespace`], deleted on
//! drop), and an audit-log cursor ([`audit::AuditMark`]) to count the write requests of one user.

pub mod audit;
pub mod chart;
pub mod cluster;
pub mod drills;
pub mod inference;
pub mod modelfleet;
pub mod namespace;
pub mod process;
pub mod rbac;
pub mod real_node;
pub mod slack;
pub mod slack_bot;
pub mod tcp_proxy;
pub mod terraform;
pub mod wait;

pub use cluster::Cluster;
pub use namespace::TestNamespace;
pub use process::OperatorProcess;
pub use real_node::RealNode;
pub use terraform::Terraform;
pub use wait::wait_for;
