#!/bin/sh
# fetch-kernel.sh — download Debian's current amd64 kernel package and
# extract it (no installation) for the QEMU real-kernel tests: vmlinuz and
# the parport, parport_pc and ppdev modules.
#
# Usage: scripts/fetch-kernel.sh            (run `apt-get update` first)
# The cache directory is $TTLPAPERS_KERNEL_DIR, default
# /var/cache/ttlpapers/kernel. Running it again is cheap: it does nothing
# when the current kernel version is already extracted there.
set -eu

dir=${TTLPAPERS_KERNEL_DIR:-/var/cache/ttlpapers/kernel}

# The versioned package the linux-image-amd64 metapackage depends on.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
if [ -z "$pkg" ]; then
	echo "fetch-kernel.sh: cannot resolve linux-image-amd64 to a versioned kernel package; run apt-get update first" >&2
	exit 1
fi
release=${pkg#linux-image-}

if [ -f "$dir/$release.done" ]; then
	echo "fetch-kernel.sh: $pkg already in $dir"
	exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "$pkg")
deb=$(ls "$tmp"/*.deb)
rm -rf "$dir/root.new"
dpkg-deb -x "$deb" "$dir/root.new"
rm -rf "$dir/root"
mv "$dir/root.new" "$dir/root"
ln -sf "root/boot/vmlinuz-$release" "$dir/vmlinuz"
echo "$release" > "$dir/release"
rm -f "$dir"/*.done
touch "$dir/$release.done"
echo "fetch-kernel.sh: $pkg extracted into $dir (kernel $dir/vmlinuz, modules $dir/root/lib/modules/$release)"
