# Prints the capacity classes and the per-GPU memory range each covers:
#   terraform init && terraform apply && terraform output
terraform {
  required_version = ">= 1.5.0"
}

module "classes" {
  source = "../.."
}
