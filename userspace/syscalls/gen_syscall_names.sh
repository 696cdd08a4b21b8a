#!/bin/sh
# Writes the x86-64 syscall names of the kernel headers as C initialisers.
# usage: gen_syscall_names.sh UNISTD_64_H OUTPUT
set -eu
sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$/{\2, "\1"},/p' "$1" > "$2.tmp"
mv "$2.tmp" "$2"
