variable "crds_dir" {
  description = "Folder with the release's config/crd/standard/*.yaml."
  type        = string
}
