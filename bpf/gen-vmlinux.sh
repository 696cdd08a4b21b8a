#!/bin/sh
# Regenerates bpf/vmlinux.h from the running kernel's BTF.
#
# The committed header comes from a 6.18 kernel. The capture program is
# CO-RE: libbpf relocates every field access against the BTF of the kernel
# it loads on, so the header only needs to contain the types and fields the
# program names. Regenerate it when the program starts using a kernel type
# or field that the committed header lacks.
set -eu
cd "$(dirname "$0")"
bpftool btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h.tmp
mv vmlinux.h.tmp vmlinux.h
echo "bpf/vmlinux.h regenerated from $(uname -r)"
