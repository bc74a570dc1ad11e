output "karpenter_chart_values" {
  description = "Values for the Karpenter controller chart (helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter -n NAMESPACE -f <these values>)."
  value = {
    settings = {
      clusterName       = var.cluster_name
      clusterEndpoint   = data.aws_eks_cluster.this.endpoint
      interruptionQueue = aws_sqs_queue.interruption.name
    }
    serviceAccount = { name = var.karpenter_service_account }
  }
}

output "controller_role_arn" {
  description = "IAM role of the Karpenter controller (bound to its ServiceAccount by EKS Pod Identity)."
  value       = aws_iam_role.controller.arn
}

output "node_role_arn" {
  description = "IAM role of Karpenter-launched nodes."
  value       = aws_iam_role.node.arn
}

output "node_instance_profile" {
  description = "Instance profile the EC2NodeClasses launch nodes with."
  value       = aws_iam_instance_profile.node.name
}

output "interruption_queue" {
  description = "SQS queue receiving interruption events."
  value       = aws_sqs_queue.interruption.name
}

output "gpu_node_pools" {
  description = "NodePool name per capacity class."
  value       = module.node_pools.gpu_pool_names
}
