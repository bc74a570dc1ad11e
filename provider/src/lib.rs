//! Terraform provider for Model Fleet (plugin protocol 5.8).
//!
//! Modules, one job each (DESIGN.md section 2):
//! * [`proto`]: generated tfplugin5 and go-plugin controller code;
//! * [`plugin`]: go-plugin handshake, AutoMTLS, controller service, serve loop;
//! * [`value`]: cty values and their msgpack / JSON codecs;
//! * [`schema`]: schema description and the provider configuration schema;
//! * [`diag`]: diagnostics with attribute paths;
//! * [`docs`]: the registry documentation pages, generated from the schemas;
//! * [`config`]: the parsed provider configuration;
//! * [`client`]: the lazily built Kubernetes client;
//! * [`resources`]: the `modelfleet_*` resource types;
//! * [`server`]: the tfplugin5 `Provider` gRPC service;
//! * [`logging`]: stderr logs honouring `TF_LOG`.

pub mod client;
pub mod config;
pub mod diag;
pub mod docs;
pub mod logging;
pub mod plugin;
pub mod proto;
pub mod resources;
pub mod schema;
pub mod server;
pub mod value;
