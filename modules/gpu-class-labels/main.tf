# modelfleet.io/gpu-class from GPU Feature Discovery's nvidia.com/gpu.memory (per-GPU MiB), by the
# rule of docs/GPU_CAPACITY.md: the largest class whose usable MiB is at most the reported value.
# One Node Feature Discovery rule per class matches usable_mib <= memory < next class's usable_mib
# (NFD's GtLt is exclusive on both ends, hence usable_mib - 1).
module "classes" {
  source = "../gpu-classes"
}

locals {
  selected = var.classes == null ? module.classes.names : var.classes
  rules = [
    for name in local.selected : {
      name   = "modelfleet.io/gpu-class=${name}"
      labels = { (module.classes.label) = name }
      matchFeatures = [{
        feature = var.memory_feature
        matchExpressions = {
          "nvidia.com/gpu.memory" = module.classes.classes[name].next_usable_mib == null ? {
            op    = "Gt"
            value = [tostring(module.classes.classes[name].usable_mib - 1)]
            } : {
            op    = "GtLt"
            value = [tostring(module.classes.classes[name].usable_mib - 1), tostring(module.classes.classes[name].next_usable_mib)]
          }
        }
      }]
    }
  ]
  manifest = {
    apiVersion = "nfd.k8s-sigs.io/v1alpha1"
    kind       = "NodeFeatureRule"
    metadata   = { name = var.name }
    spec       = { rules = local.rules }
  }
}

resource "kubectl_manifest" "rule" {
  yaml_body         = yamlencode(local.manifest)
  server_side_apply = true

  lifecycle {
    precondition {
      condition     = length(local.selected) > 0 && alltrue([for c in local.selected : contains(module.classes.names, c)])
      error_message = "classes must be a non-empty subset of ${join(", ", module.classes.names)}."
    }
  }
}
