# tflint configuration for every root, module and example under terraform/ and modules/
# (scripts/check.sh passes it with --config). Only the bundled terraform ruleset: the aws and
# google rulesets are plugins outside the Go module proxy this project can reach (README.md).
config {
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}
