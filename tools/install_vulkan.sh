#!/usr/bin/env bash
# A software Vulkan driver that SAPIEN (ManiSkill's simulator) accepts, on Debian 12 (bookworm).
#
# SAPIEN opens a Vulkan device even for state observations. Debian 12's own lavapipe (Mesa 22.3)
# lacks VK_KHR_external_semaphore_fd, so SAPIEN refuses it; mesa-vulkan-drivers from
# bookworm-backports (Mesa 25.x) has it. Idempotent: does nothing when a new enough driver is
# already installed. Run as root: `bash tools/install_vulkan.sh`.
set -euo pipefail

MIN_MESA=24 # the first Mesa major version known good here is 25.0.7; 22.3 is known bad
LIST=/etc/apt/sources.list.d/bookworm-backports.list

installed_mesa() {
    dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' mesa-vulkan-drivers 2>/dev/null |
        awk '$1 == "ii" { print $2 }'
}

have_driver() {
    local version
    version="$(installed_mesa)"
    [ -n "$version" ] && dpkg --compare-versions "$version" ge "$MIN_MESA" &&
        dpkg-query -W -f='${db:Status-Abbrev}\n' libvulkan1 2>/dev/null | grep -q '^ii' &&
        ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1
}

if have_driver; then
    echo "install_vulkan: mesa-vulkan-drivers $(installed_mesa) (lavapipe) is already installed."
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install_vulkan: run as root (apt-get install is needed)." >&2
    exit 1
fi

. /etc/os-release
if [ "${VERSION_CODENAME:-}" != bookworm ]; then
    echo "install_vulkan: written for Debian 12 (bookworm), found ${PRETTY_NAME:-unknown}." >&2
    exit 1
fi

if ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" >"$LIST"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libvulkan1

if ! have_driver; then
    echo "install_vulkan: mesa-vulkan-drivers is $(installed_mesa), still older than $MIN_MESA." >&2
    exit 1
fi
echo "install_vulkan: installed mesa-vulkan-drivers $(installed_mesa) (lavapipe)."
