//! `terraform-provider-modelfleet`: the Terraform plugin binary.

fn main() {}
