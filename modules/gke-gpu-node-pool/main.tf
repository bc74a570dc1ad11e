# One GKE GPU node pool of one Model Fleet capacity class: accelerator and driver, the
# modelfleet.io/gpu-class label, optional taints, and autoscaling limits. GKE labels the nodes with
# cloud.google.com/gke-accelerator = accelerator_type and taints them nvidia.com/gpu=present:NoSchedule.
module "classes" {
  source = "../gpu-classes"
}

resource "google_container_node_pool" "gpu" {
  project        = var.project
  location       = var.location
  cluster        = var.cluster
  name           = coalesce(var.name, "gpu-${var.class}")
  node_locations = var.node_locations

  autoscaling {
    total_min_node_count = var.autoscaling.min_nodes
    total_max_node_count = var.autoscaling.max_nodes
  }

  management {
    auto_repair  = true
    auto_upgrade = true
  }

  node_config {
    machine_type    = var.machine_type
    disk_size_gb    = var.disk_size_gb
    spot            = var.spot
    service_account = var.service_account
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
    labels          = merge(var.labels, { (module.classes.label) = var.class })

    guest_accelerator {
      type  = var.accelerator_type
      count = var.accelerator_count
      gpu_driver_installation_config {
        gpu_driver_version = var.gpu_driver_version
      }
    }

    dynamic "taint" {
      for_each = var.taints
      content {
        key    = taint.value.key
        value  = taint.value.value
        effect = taint.value.effect
      }
    }
  }

  lifecycle {
    precondition {
      condition     = contains(module.classes.names, var.class)
      error_message = "class \"${var.class}\" is not a capacity class; use one of ${join(", ", module.classes.names)}."
    }
  }
}
