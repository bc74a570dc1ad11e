# Karpenter NodePools and EC2NodeClasses for Model Fleet: one CPU pool, and one GPU pool per capacity
# class whose nodes carry the modelfleet.io/gpu-class label and the nvidia.com/gpu taint. A GPU pool
# admits instance types whose per-GPU memory (karpenter.k8s.aws/instance-gpu-memory, MiB) falls in
# the class's range of the gpu-classes table, optionally narrowed by GPU name. Model Fleet's pods
# require the class label, so Karpenter launches from the pool whose label matches.
module "classes" {
  source = "../gpu-classes"
}

locals {
  # Default karpenter.k8s.aws/instance-gpu-name values per class (EC2's lower-case GPU names).
  default_gpu_names = {
    "16gi"  = ["t4"]
    "24gi"  = ["a10g", "l4"]
    "40gi"  = ["a100"]
    "48gi"  = ["l40s"]
    "80gi"  = ["h100", "a100"]
    "141gi" = ["h200"]
    "180gi" = ["b200"]
  }
  discovery = { "karpenter.sh/discovery" = var.cluster_name }
  subnets   = coalesce(var.subnet_selector_tags, local.discovery)
  groups    = coalesce(var.security_group_selector_tags, local.discovery)

  node_class = {
    for kind, volume in { cpu = 50, gpu = var.gpu_root_volume_gib } : kind => {
      apiVersion              = "karpenter.k8s.aws/v1"
      kind                    = "EC2NodeClass"
      metadata                = { name = "model-fleet-${kind}" }
      spec = {
        amiSelectorTerms           = [{ alias = var.ami_alias }]
        instanceProfile            = var.instance_profile
        subnetSelectorTerms        = [{ tags = local.subnets }]
        securityGroupSelectorTerms = [{ tags = local.groups }]
        metadataOptions            = { httpTokens = "required", httpPutResponseHopLimit = 1 }
        blockDeviceMappings = [{
          deviceName = "/dev/xvda"
          ebs        = { volumeSize = "${volume}Gi", volumeType = "gp3", encrypted = true }
        }]
        tags = { "modelfleet.io/node-class" = kind }
      }
    }
  }

  cpu_pool = var.cpu_pool == null ? {} : {
    cpu = {
      apiVersion = "karpenter.sh/v1"
      kind       = "NodePool"
      metadata   = { name = "model-fleet-cpu" }
      spec = {
        template = {
          spec = {
            nodeClassRef = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "model-fleet-cpu" }
            requirements = [
              { key = "karpenter.k8s.aws/instance-category", operator = "In", values = var.cpu_pool.instance_categories },
              { key = "karpenter.sh/capacity-type", operator = "In", values = var.cpu_pool.capacity_types },
              { key = "kubernetes.io/arch", operator = "In", values = ["amd64", "arm64"] },
            ]
          }
        }
        limits     = { cpu = tostring(var.cpu_pool.limits.cpu), memory = var.cpu_pool.limits.memory }
        disruption = { consolidationPolicy = "WhenEmptyOrUnderutilized", consolidateAfter = "1m" }
      }
    }
  }

  gpu_pools = {
    for name, c in var.gpu_classes : name => {
      apiVersion = "karpenter.sh/v1"
      kind       = "NodePool"
      metadata   = { name = "model-fleet-gpu-${name}" }
      spec = {
        weight = c.weight
        template = {
          metadata = { labels = { (module.classes.label) = name } }
          spec = {
            nodeClassRef = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "model-fleet-gpu" }
            taints       = [{ key = module.classes.gpu_taint.key, value = module.classes.gpu_taint.value, effect = module.classes.gpu_taint.effect }]
            requirements = concat(
              [
                { key = "karpenter.k8s.aws/instance-gpu-manufacturer", operator = "In", values = ["nvidia"] },
                { key = "karpenter.k8s.aws/instance-gpu-name", operator = "In", values = coalesce(c.gpu_names, lookup(local.default_gpu_names, name, null), ["*"]) },
                # usable_mib <= per-GPU memory (Gt is strict) ...
                { key = "karpenter.k8s.aws/instance-gpu-memory", operator = "Gt", values = [tostring(try(module.classes.classes[name].usable_mib, 0) - 1)] },
                { key = "karpenter.sh/capacity-type", operator = "In", values = c.capacity_types },
              ],
              # ... < the next class's usable_mib (none for the largest class).
              try(module.classes.classes[name].next_usable_mib, null) == null ? [] : [
                { key = "karpenter.k8s.aws/instance-gpu-memory", operator = "Lt", values = [tostring(module.classes.classes[name].next_usable_mib)] },
              ],
            )
          }
        }
        limits = merge(
          { "nvidia.com/gpu" = tostring(c.limits.gpus) },
          c.limits.cpu == null ? {} : { cpu = tostring(c.limits.cpu) },
          c.limits.memory == null ? {} : { memory = c.limits.memory },
        )
        disruption = { consolidationPolicy = var.disruption.gpu_policy, consolidateAfter = var.disruption.consolidate_after }
      }
    }
  }
  node_pools = merge(local.cpu_pool, local.gpu_pools)
}

resource "kubectl_manifest" "node_class" {
  for_each          = local.node_class
  yaml_body         = yamlencode(each.value)
  server_side_apply = true
}

resource "kubectl_manifest" "node_pool" {
  for_each          = local.node_pools
  yaml_body         = yamlencode(each.value)
  server_side_apply = true
  depends_on        = [kubectl_manifest.node_class]

  lifecycle {
    precondition {
      condition     = each.key == "cpu" || contains(module.classes.names, each.key)
      error_message = "gpu_classes key \"${each.key}\" is not a capacity class; use one of ${join(", ", module.classes.names)}."
    }
  }
}
