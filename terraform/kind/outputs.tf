output "kubeconfig" {
  description = "Kubeconfig of the cluster (export KUBECONFIG=...)."
  value       = var.kubeconfig_path
}

output "kube_context" {
  description = "Kube context of the cluster."
  value       = local.context
}

output "echo_url" {
  description = "How to reach the echo example through the host-network Gateway."
  value       = "curl -H 'Host: model.localhost' http://127.0.0.1:${var.host_port}/"
}

output "hubble_ui" {
  description = "How to open the Hubble UI."
  value       = "kubectl --kubeconfig ${var.kubeconfig_path} -n kube-system port-forward svc/hubble-ui 12000:80"
}
