// Model Fleet's own container images for the local cluster's real node: static binaries (standard
// library only, CGO_ENABLED=0) that images/image.sh packs into OCI images with crane.
module modelfleet.local/images

go 1.25.0
