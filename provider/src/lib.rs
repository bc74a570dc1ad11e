//! Terraform provider for Model Fleet (plugin protocol 5.8).
//!
//! Modules, one job each (DESIGN.md section 2):
//! * [`proto`]: generated tfplugin5 and go-plugin controller code.
//! * [`value`]: cty values and their msgpack / JSON codecs.

pub mod proto;
pub mod value;
