# The capacity class table of DESIGN.md section 4 and docs/GPU_CAPACITY.md, in the one place the
# Terraform code reads it. The operator's copy is operator/src/capacity/classes.rs; the acceptance
# test acceptance-tests/tests/infra.rs fails when this table and docs/GPU_CAPACITY.md's disagree.
#
# A node belongs to the largest class whose usable MiB is at most its per-GPU memory, so class i
# covers per-GPU memory in [usable_mib(i), usable_mib(i+1)) and the largest class has no upper bound.

terraform {
  required_version = ">= 1.5.0"
}

locals {
  # Smallest first. usable_mib: MiB (2^20 bytes) the smallest common card of the class exposes, as
  # GPU Feature Discovery reports it in nvidia.com/gpu.memory.
  table = [
    { name = "16gi", usable_mib = 15360, example_products = ["Tesla-T4"] },
    { name = "24gi", usable_mib = 22888, example_products = ["NVIDIA-A10G", "NVIDIA-L4"] },
    { name = "40gi", usable_mib = 39538, example_products = ["NVIDIA-A100-SXM4-40GB"] },
    { name = "48gi", usable_mib = 45776, example_products = ["NVIDIA-L40S"] },
    { name = "80gi", usable_mib = 81559, example_products = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"] },
    { name = "141gi", usable_mib = 143771, example_products = ["NVIDIA-H200"] },
    { name = "180gi", usable_mib = 183359, example_products = ["NVIDIA-B200"] },
  ]

  classes = {
    for i, c in local.table : c.name => {
      name             = c.name
      usable_mib       = c.usable_mib
      example_products = c.example_products
      # Exclusive upper bound of the per-GPU memory this class covers; null for the largest class.
      next_usable_mib = i + 1 < length(local.table) ? local.table[i + 1].usable_mib : null
      order           = i
    }
  }
}
