#!/bin/sh
# image-bases.sh makes the two FROM images of the Dockerfile locally, for machines without
# registry access (make image): docker.io/library/debian:bookworm-slim from a debootstrapped
# Debian bookworm (variant minbase, Debian's own mirror), and docker.io/library/golang:1.26-bookworm
# from that base plus the host's Go toolchain ($(go env GOROOT)). Images that exist are kept.
set -eu
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=docker.io/library/debian:bookworm-slim
GO=docker.io/library/golang:1.26-bookworm
work=${IMAGE_WORKDIR:-/var/tmp/pltlab-image}

if ! podman image exists "$BASE"; then
	mkdir -p "$work"
	if [ ! -x "$work/rootfs/bin/sh" ]; then
		debootstrap --variant=minbase bookworm "$work/rootfs" "$MIRROR"
	fi
	# Like the official slim image: no apt caches, no docs.
	rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin "$work/rootfs/usr/share/doc/"*
	tar -C "$work/rootfs" -c . | podman import --change 'CMD ["bash"]' - "$BASE"
fi

if ! podman image exists "$GO"; then
	goroot=$(go env GOROOT)
	ctr=$(buildah from "$BASE")
	trap 'buildah rm "$ctr" >/dev/null' EXIT
	buildah copy "$ctr" "$goroot" /usr/local/go >/dev/null
	buildah config --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--env GOPATH=/go --env GOTOOLCHAIN=local --workingdir /go "$ctr"
	buildah commit --quiet "$ctr" "$GO" >/dev/null
fi
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'debian:bookworm-slim|golang:1.26-bookworm'
