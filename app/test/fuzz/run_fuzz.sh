#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# bounded time from a seed corpus. Exit status: non-zero if any target found
# a crash, a sanitizer error or a broken invariant.
#   run_fuzz.sh BUILD_DIR [SECONDS]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=$(cd "$1" && pwd)
SECONDS_EACH=${2:-20}
OUT=$BUILD/fuzz
mkdir -p "$OUT"

# Library assertions too: std::array and std::vector indices are checked.
CXX="clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GLIBCXX_ASSERTIONS"
INC="-I$ROOT/firmware -I$ROOT/base/ecore -I$ROOT/hsi -I$ROOT/osal/dpdk -I$ROOT/osal/dpdk/os -I$ROOT/osal/dpdk/pci -I$ROOT/firmware/src -I$ROOT/firmware/include -I$ROOT/app/fwdriver -I$ROOT/pmd/net"
DPDK_INC=$(pkg-config --cflags-only-I libdpdk | sed 's/-I/-isystem /g')

build() { # name sources... -- libs...
    local name=$1; shift
    local srcs=() libs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do srcs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    libs=("$@")
    $CXX $INC $DPDK_INC -include rte_config.h "${srcs[@]}" -o "$OUT/$name" "${libs[@]}" 2>"$OUT/$name.build.log"
}

seed() { # dir files...
    local dir=$1; shift
    rm -rf "$dir" && mkdir -p "$dir"
    for f in "$@"; do cp "$f" "$dir/"; done
}

failed=0
passed=0
run() { # name corpus-dir
    local name=$1 corpus=$2
    if [ ! -x "$OUT/$name" ]; then
        echo "fuzz $name: build failed"; cat "$OUT/$name.build.log"; failed=$((failed + 1)); return
    fi
    if (cd "$OUT" && "./$name" -max_total_time="$SECONDS_EACH" -print_final_stats=1 "$corpus" >"$OUT/$name.log" 2>&1); then
        echo "fuzz $name: ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$name.log" | grep -o '[0-9]*$') inputs in ${SECONDS_EACH} s"
        passed=$((passed + 1))
    else
        echo "fuzz $name: FAILED"; tail -40 "$OUT/$name.log"; failed=$((failed + 1))
    fi
}

build fuzz_init_image "$ROOT/app/test/fuzz/fuzz_init_image.cpp" "$ROOT/base/ecore/ecore_init_image.cpp" \
    "$ROOT/osal/dpdk/os/osal_util.cpp" -- -lz
build fuzz_frame "$ROOT/app/test/fuzz/fuzz_frame.cpp" "$ROOT/firmware/src/packet/frame.cpp"
build fuzz_devargs "$ROOT/app/test/fuzz/fuzz_devargs.cpp" "$ROOT/pmd/net/cna_devargs.cpp" -- -lrte_kvargs -lrte_net
build fuzz_daemon_config "$ROOT/app/test/fuzz/fuzz_daemon_config.cpp" "$ROOT/firmware/daemon/daemon_options.cpp"
build fuzz_vf_channel "$ROOT/app/test/fuzz/fuzz_vf_channel.cpp" "$ROOT/base/ecore/ecore_iov_tlv.cpp" \
    "$ROOT/base/ecore/ecore_iov_checks.cpp" "$ROOT/osal/dpdk/os/osal_util.cpp" -- -lz

# The whole adapter and the tests' fake driver, instrumented: two compilers
# at a time, the fuzz target's link waits for all.
HOST_WRITES_SRCS=("$ROOT"/firmware/src/*/*.cpp "$ROOT"/app/fwdriver/fake_driver.cpp "$ROOT"/app/fwdriver/fake_rdma.cpp
                  "$ROOT"/app/fwdriver/frames.cpp
                  "$BUILD/firmware/cna_fw_builtin.cpp" "$ROOT/base/ecore/ecore_init_image.cpp"
                  "$ROOT/osal/dpdk/os/osal_util.cpp")
rm -rf "$OUT/host_writes" && mkdir -p "$OUT/host_writes"
printf '%s\n' "${HOST_WRITES_SRCS[@]}" | xargs -P2 -I{} sh -c \
    '$0 $1 -c {} -o $2/host_writes/$(echo {} | md5sum | cut -c1-12).o' \
    "${CXX/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" "$INC" "$OUT" 2>"$OUT/host_writes.compile.log"
build fuzz_host_writes "$ROOT/app/test/fuzz/fuzz_host_writes.cpp" "$OUT"/host_writes/*.o -- -lz -lisal -pthread
build fuzz_roce "$ROOT/app/test/fuzz/fuzz_roce.cpp" "$OUT"/host_writes/*.o -- -lz -lisal -pthread
build fuzz_daemon "$ROOT/app/test/fuzz/fuzz_daemon.cpp" "$ROOT/firmware/daemon/client_session.cpp" \
    "$OUT"/host_writes/*.o -- -lz -lisal -pthread
build fuzz_vm "$ROOT/app/test/fuzz/fuzz_vm.cpp" "$ROOT/firmware/daemon/client_session.cpp" \
    "$OUT"/host_writes/*.o -- -lz -lisal -pthread

# ecore and the OSAL on the adapter, instrumented too (DPDK's libraries are
# not), in an archive: the PF's end of its VFs' channel takes what it needs
# of them. RDMA's QP state checks are none of it (and clang 14 refuses their
# `using enum` of an alias).
VF_PF_SRCS=($(ls "$ROOT"/base/ecore/*.cpp "$ROOT"/osal/dpdk/os/*.cpp "$ROOT"/osal/dpdk/pci/*.cpp |
              grep -v -e ecore_init_image.cpp -e osal_util.cpp -e ecore_rdma_qp_state.cpp))
rm -rf "$OUT/vf_pf" "$OUT/libvf_pf.a" && mkdir -p "$OUT/vf_pf"
printf '%s\n' "${VF_PF_SRCS[@]}" | xargs -P2 -I{} sh -c \
    '$0 $1 -c {} -o $2/vf_pf/$(echo {} | md5sum | cut -c1-12).o' \
    "${CXX/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,} -DALLOW_EXPERIMENTAL_API" \
    "$INC $DPDK_INC -include rte_config.h" "$OUT" 2>"$OUT/vf_pf.compile.log"
ar rcs "$OUT/libvf_pf.a" "$OUT"/vf_pf/*.o
build fuzz_vf_pf "$ROOT/app/test/fuzz/fuzz_vf_pf.cpp" "$OUT/libvf_pf.a" "$OUT"/host_writes/*.o \
    -- $(pkg-config --libs libdpdk) -lz -lisal -pthread

seed "$OUT/corpus_image" "$BUILD/firmware/cna_fw.bin" "$BUILD/firmware/cna_fw_zipped.bin"
seed "$OUT/corpus_frame" "$ROOT"/app/test/fuzz/seeds/frame_*
seed "$OUT/corpus_devargs" "$ROOT"/app/test/fuzz/seeds/devargs_*
seed "$OUT/corpus_host_writes" "$ROOT"/app/test/fuzz/seeds/host_writes_*
seed "$OUT/corpus_roce" "$ROOT"/app/test/fuzz/seeds/roce_*
seed "$OUT/corpus_daemon" $(ls "$ROOT"/app/test/fuzz/seeds/daemon_* | grep -v /daemon_config_)
seed "$OUT/corpus_daemon_config" "$ROOT"/app/test/fuzz/seeds/daemon_config_*
seed "$OUT/corpus_vm" "$ROOT"/app/test/fuzz/seeds/vm_*
seed "$OUT/corpus_vf_channel" "$ROOT"/app/test/fuzz/seeds/vf_channel_*
seed "$OUT/corpus_vf_pf" "$ROOT"/app/test/fuzz/seeds/vf_pf_*

run fuzz_init_image "$OUT/corpus_image"
run fuzz_frame "$OUT/corpus_frame"
run fuzz_devargs "$OUT/corpus_devargs"
run fuzz_host_writes "$OUT/corpus_host_writes"
run fuzz_roce "$OUT/corpus_roce"
run fuzz_daemon "$OUT/corpus_daemon"
run fuzz_daemon_config "$OUT/corpus_daemon_config"
run fuzz_vm "$OUT/corpus_vm"
run fuzz_vf_channel "$OUT/corpus_vf_channel"
run fuzz_vf_pf "$OUT/corpus_vf_pf"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
