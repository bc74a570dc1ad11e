output "ranges" {
  description = "Per-GPU memory range (MiB) of each class."
  value = {
    for name, c in module.classes.classes :
    name => c.next_usable_mib == null ? ">= ${c.usable_mib}" : "${c.usable_mib} .. ${c.next_usable_mib - 1}"
  }
}
