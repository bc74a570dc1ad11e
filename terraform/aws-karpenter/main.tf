# Karpenter on an existing EKS cluster, for Model Fleet's capacity classes: the controller's AWS
# resources (its IAM role and policy, the node role and instance profile, the SQS interruption queue
# and the EventBridge rules feeding it) and the NodePools/EC2NodeClasses (module karpenter-nodepools).
# The Karpenter controller itself is installed from its chart by the cluster's platform owner with
# the outputs below. Model Fleet's operator needs no AWS permissions and creates none of this.
provider "aws" {
  region = var.region
  default_tags {
    tags = merge({ "modelfleet.io/component" = "karpenter" }, var.tags)
  }
}

provider "kubectl" {
  config_path      = var.kubeconfig_path
  config_context   = var.kube_context
  load_config_file = true
}

data "aws_partition" "current" {}
data "aws_caller_identity" "current" {}

data "aws_eks_cluster" "this" {
  name = var.cluster_name
}

locals {
  name      = "${var.cluster_name}-karpenter"
  partition = data.aws_partition.current.partition
  # The interruption events Karpenter acts on (drain before the instance goes away).
  interruption_events = {
    health    = { source = ["aws.health"], detail-type = ["AWS Health Event"] }
    spot      = { source = ["aws.ec2"], detail-type = ["EC2 Spot Instance Interruption Warning"] }
    rebalance = { source = ["aws.ec2"], detail-type = ["EC2 Instance Rebalance Recommendation"] }
    state     = { source = ["aws.ec2"], detail-type = ["EC2 Instance State-change Notification"] }
  }
}

# ---------- nodes: role and instance profile ----------
resource "aws_iam_role" "node" {
  name = "${local.name}-node"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}

resource "aws_iam_role_policy_attachment" "node" {
  for_each   = toset(jsondecode(file("${path.module}/../config/permissions/aws/karpenter-node-managed-policies.json")).policies)
  role       = aws_iam_role.node.name
  policy_arn = "arn:${local.partition}:iam::aws:policy/${each.value}"
}

resource "aws_iam_instance_profile" "node" {
  name = "${local.name}-node"
  role = aws_iam_role.node.name
}

# Lets nodes running as the node role join the cluster.
resource "aws_eks_access_entry" "node" {
  cluster_name  = var.cluster_name
  principal_arn = aws_iam_role.node.arn
  type          = "EC2_LINUX"
}

# ---------- interruption queue ----------
resource "aws_sqs_queue" "interruption" {
  name                      = local.name
  message_retention_seconds = 300
  sqs_managed_sse_enabled   = true
}

resource "aws_sqs_queue_policy" "interruption" {
  queue_url = aws_sqs_queue.interruption.url
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "EventBridgeSends"
        Effect    = "Allow"
        Principal = { Service = ["events.amazonaws.com", "sqs.amazonaws.com"] }
        Action    = "sqs:SendMessage"
        Resource  = aws_sqs_queue.interruption.arn
      },
      {
        Sid       = "DenyPlainHttp"
        Effect    = "Deny"
        Principal = "*"
        Action    = "sqs:*"
        Resource  = aws_sqs_queue.interruption.arn
        Condition = { Bool = { "aws:SecureTransport" = "false" } }
      },
    ]
  })
}

resource "aws_cloudwatch_event_rule" "interruption" {
  for_each      = local.interruption_events
  name          = "${local.name}-${each.key}"
  description   = "Karpenter interruption handling for ${var.cluster_name}: ${each.value["detail-type"][0]}"
  event_pattern = jsonencode(each.value)
}

resource "aws_cloudwatch_event_target" "interruption" {
  for_each = aws_cloudwatch_event_rule.interruption
  rule     = each.value.name
  arn      = aws_sqs_queue.interruption.arn
}

# ---------- controller: role, reviewed policy, Pod Identity ----------
resource "aws_iam_role" "controller" {
  name = "${local.name}-controller"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "pods.eks.amazonaws.com" }
      Action    = ["sts:AssumeRole", "sts:TagSession"]
    }]
  })
}

# The policy is the reviewed file in config/permissions (README there explains each statement).
resource "aws_iam_role_policy" "controller" {
  name = "karpenter-controller"
  role = aws_iam_role.controller.id
  policy = templatefile("${path.module}/../config/permissions/aws/karpenter-controller-policy.json", {
    partition            = local.partition
    region               = var.region
    account_id           = data.aws_caller_identity.current.account_id
    cluster_name         = var.cluster_name
    queue_arn            = aws_sqs_queue.interruption.arn
    node_role_arn        = aws_iam_role.node.arn
    instance_profile_arn = aws_iam_instance_profile.node.arn
  })
}

resource "aws_eks_pod_identity_association" "controller" {
  cluster_name    = var.cluster_name
  namespace       = var.karpenter_namespace
  service_account = var.karpenter_service_account
  role_arn        = aws_iam_role.controller.arn
}

# ---------- NodePools and EC2NodeClasses ----------
module "node_pools" {
  source           = "../../modules/karpenter-nodepools"
  cluster_name     = var.cluster_name
  instance_profile = aws_iam_instance_profile.node.name
  ami_alias        = var.ami_alias
  cpu_pool         = var.cpu_pool
  gpu_classes      = var.gpu_classes
  depends_on       = [aws_eks_access_entry.node]
}
