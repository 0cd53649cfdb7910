#!/usr/bin/env bash
# guest_kit.sh BUILD_DIR: the kit `./cna vm-run` boots, made from Debian's own
# packages and cached in BUILD_DIR/vmkit/:
#
#   vmlinux    the kernel of the package linux-image-amd64 depends on,
#              uncompressed: QEMU enters an ELF kernel through its PVH note,
#              which under TCG boots in a fraction of the bzImage's time
#   initrd.gz  busybox-static, guest_init as /init, and the modules below with
#              everything they depend on
#
# It is rebuilt only when its inputs change: the kernel package's version,
# guest_init or this script. Prints the kit's directory.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
KIT=$(mkdir -p "$1/vmkit" && cd "$1/vmkit" && pwd)
INIT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/guest_init

# What the guest loads: the host's root over virtio-9p, overlayfs to lay the
# guest's files over the host's, VFIO to hand a PCI function to DPDK,
# virtio-net for a baseline NIC. vfio_iommu_type1 is no dependency of
# vfio-pci (vfio requests it at run time), so it is named.
MODULES=(virtio_pci 9pnet_virtio 9p overlay vfio vfio_iommu_type1 vfio-pci virtio_net)
TOOLS=(busybox-static cpio kmod)

log() { printf '\033[1m[vmkit]\033[0m %s\n' "$*" >&2; }
die() { printf '[vmkit] error: %s\n' "$*" >&2; exit 1; }

apt_updated=
apt_update_once() {
    [ -n "$apt_updated" ] && return
    apt-get update -qq || die "apt-get update failed"
    apt_updated=1
}

install_tools() {
    local missing=() p
    for p in "${TOOLS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    log "installing: ${missing[*]}"
    apt_update_once
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The versioned kernel package the metapackage depends on, as "NAME VERSION"
# (its Depends: linux-image-6.1.0-N-amd64 (= V)): what the kit is made of.
kernel_package() {
    apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
        sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*\) (= \([^)]*\)).*/\1 \2/p'
}

# download PACKAGE=VERSION into the kit; root downloads into a directory
# apt's sandbox user cannot write to.
download() {
    (cd "$KIT" && apt-get download -qq -o APT::Sandbox::User=root "$1" >&2)
}

# fetch_deb PACKAGE VERSION: its .deb in the kit, downloaded once.
fetch_deb() {
    local deb=$KIT/${1}_${2//:/%3a}_amd64.deb
    if [ ! -f "$deb" ]; then
        log "downloading $1 $2"
        rm -f "$KIT"/*.deb
        download "$1=$2" || { apt_update_once && download "$1=$2"; } || die "apt-get download $1=$2 failed"
    fi
    echo "$deb"
}

# extract_vmlinux VMLINUZ OUT: a bzImage carries the kernel as an xz stream.
extract_vmlinux() {
    /usr/bin/python3 - "$1" "$2" <<'PYEOF'
import lzma, sys
image = open(sys.argv[1], "rb").read()
start = image.find(b"\xfd7zXZ\x00")
if start < 0:
    sys.exit(f"{sys.argv[1]}: no xz payload")
# the stream ends before the bzImage's trailer: the decompressor stops there
elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(image[start:])
if elf[:4] != b"\x7fELF":
    sys.exit(f"{sys.argv[1]}: the xz payload is no ELF kernel")
open(sys.argv[2], "wb").write(elf)
PYEOF
}

# copy_modules SRC DEST: MODULES and their dependencies, by modules.dep, from
# the module tree SRC (lib/modules/KV) into DEST (the same path in the initrd).
copy_modules() {
    local src=$1 dest=$2 m path
    local -A want=()
    for m in "${MODULES[@]}"; do
        # modules.dep names files, in which '-' and '_' are the same to modprobe
        path=$(awk -F: -v m="${m//-/_}" '{ n = $1; sub(/.*\//, "", n); sub(/\.ko.*/, "", n); gsub(/-/, "_", n) }
                                         n == m { print $0; exit }' "$src/modules.dep")
        [ -n "$path" ] || die "no module $m in $src"
        for f in ${path/:/ }; do want[$f]=1; done
    done
    for f in "${!want[@]}"; do
        mkdir -p "$dest/$(dirname "$f")"
        cp "$src/$f" "$dest/$f"
    done
    printf '%s\n' "${!want[@]}" >"$dest/modules.order"
    # depmod indexes the built-in modules too, for kmod's users in the guest
    # (modprobe, lspci -k)
    cp "$src"/modules.builtin "$src"/modules.builtin.modinfo "$dest/"
}

build_kit() {
    local pkg=$1 version=$2 deb kv
    deb=$(fetch_deb "$pkg" "$version")
    rm -rf "$KIT"/build.* # what a killed build left
    tmp=$(mktemp -d "$KIT/build.XXXXXX") # global: the EXIT trap removes it
    trap 'rm -rf "$tmp"' EXIT
    log "building the guest kit from $pkg $version"
    dpkg-deb -x "$deb" "$tmp/pkg"
    kv=$(ls "$tmp/pkg/lib/modules")
    # the package's modules.dep is made by its postinst, not shipped
    depmod -b "$tmp/pkg" "$kv"
    extract_vmlinux "$tmp/pkg/boot/vmlinuz-$kv" "$tmp/vmlinux"

    local root=$tmp/root
    mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,host,lib/modules/"$kv"}
    cp /bin/busybox "$root/bin/busybox" # busybox-static's: it runs with no libc beside it
    copy_modules "$tmp/pkg/lib/modules/$kv" "$root/lib/modules/$kv"
    depmod -b "$root" "$kv"
    install -m 0755 "$INIT" "$root/init"
    (cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -6) >"$tmp/initrd.gz"

    mv "$tmp/vmlinux" "$tmp/initrd.gz" "$KIT/"
    echo "$kv" >"$KIT/kernel-release"
}

kit_made() {
    [ -f "$KIT/stamp" ] && [ -f "$KIT/vmlinux" ] && [ -f "$KIT/initrd.gz" ]
}

main() {
    install_tools
    exec 9>"$KIT/.lock"
    flock 9 # one build at a time; a second vm-run waits and finds the kit made

    # The kernel package can change only with apt's lists: a kit newer than
    # them and than its scripts needs no asking apt (which takes a while).
    if kit_made && [ "$KIT/stamp" -nt /var/lib/apt/lists ] && [ "$KIT/stamp" -nt "$INIT" ] &&
        [ "$KIT/stamp" -nt "${BASH_SOURCE[0]}" ]; then
        echo "$KIT"
        return
    fi
    local kernel pkg version stamp
    kernel=$(kernel_package)
    [ -n "$kernel" ] || { apt_update_once; kernel=$(kernel_package); }
    [ -n "$kernel" ] || die "apt knows no linux-image-amd64 depending on a kernel package"
    read -r pkg version <<<"$kernel"
    stamp="$pkg $version $(cat "$INIT" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"
    if ! kit_made || [ "$(cat "$KIT/stamp")" != "$stamp" ]; then
        rm -f "$KIT/stamp"
        build_kit "$pkg" "$version"
        echo "$stamp" >"$KIT/stamp"
        log "guest kit: kernel $(cat "$KIT/kernel-release"), $(du -h "$KIT/initrd.gz" | cut -f1) initrd"
    fi
    touch "$KIT/stamp"
    echo "$KIT"
}

main
