# The Gateway API CRDs (HTTPRoute, Gateway, GatewayClass, ...), applied server-side one CRD per
# resource. Every file is checked before anything is applied: it must be a CRD of the expected
# Gateway API release and channel, so a folder of another version fails the plan, not the cluster.
locals {
  files = toset([for f in fileset(var.crds_dir, "*.yaml") : f])
  crds  = { for f in local.files : f => yamldecode(file("${var.crds_dir}/${f}")) }
}

resource "kubectl_manifest" "crd" {
  for_each          = local.crds
  yaml_body         = file("${var.crds_dir}/${each.key}")
  server_side_apply = true
  force_conflicts   = var.force_conflicts

  lifecycle {
    precondition {
      condition     = try(each.value.kind, "") == "CustomResourceDefinition" && endswith(try(each.value.metadata.name, ""), ".gateway.networking.k8s.io")
      error_message = "${each.key} is not a Gateway API CustomResourceDefinition: crds_dir must hold only the release's CRD files."
    }
    precondition {
      condition     = try(each.value.metadata.annotations["gateway.networking.k8s.io/bundle-version"], "") == var.bundle_version
      error_message = "${each.key} is from Gateway API ${try(each.value.metadata.annotations["gateway.networking.k8s.io/bundle-version"], "(no bundle-version annotation)")}, not ${var.bundle_version}."
    }
    precondition {
      condition     = try(each.value.metadata.annotations["gateway.networking.k8s.io/channel"], "") == var.channel
      error_message = "${each.key} is from the ${try(each.value.metadata.annotations["gateway.networking.k8s.io/channel"], "(unknown)")} channel, not ${var.channel}."
    }
  }
}
