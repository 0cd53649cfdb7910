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
# Every source compiles to an object of its own, through ccache where the
# machine has it (a clone fuzzed again compiles only what changed), as many
# compilers at a time as there are CPUs; the targets link them.
CXX=clang++
command -v ccache >/dev/null && CXX="ccache clang++"
CXXFLAGS="-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -D_GLIBCXX_ASSERTIONS"
DPDK_INC=$(pkg-config --cflags-only-I libdpdk | sed 's/-I/-isystem /g')
INC="-I$ROOT/firmware -I$ROOT/base/ecore -I$ROOT/hsi -I$ROOT/osal/dpdk -I$ROOT/osal/dpdk/os -I$ROOT/osal/dpdk/pci -I$ROOT/transport -I$ROOT/transport/protocol -I$ROOT/transport/client -I$ROOT/firmware/src -I$ROOT/firmware/include -I$ROOT/app/fwdriver -I$ROOT/pmd/net -I$ROOT/pmd/rdma/cm $DPDK_INC -isystem $ROOT/.sdk/include -DALLOW_INTERNAL_API -include rte_config.h"
JOBS=$(nproc)

obj() { # obj TAG SOURCE: the object SOURCE compiles to under TAG's flags
    echo "$OUT/obj/$1/$(echo "$2" | md5sum | cut -c1-12).o"
}

compile() { # compile TAG FLAGS SOURCES...
    local tag=$1 flags=$2; shift 2
    mkdir -p "$OUT/obj/$tag"
    printf '%s\n' "$@" | xargs -P"$JOBS" -I{} sh -c '$0 $1 -c {} -o $2/$(echo {} | md5sum | cut -c1-12).o' \
        "$CXX $CXXFLAGS -fsanitize=fuzzer-no-link" "$flags" "$OUT/obj/$tag" 2>>"$OUT/compile.log"
}

link() { # link NAME OBJECTS... -- LIBS...
    local name=$1; shift
    local objs=() libs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do objs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    libs=("$@")
    clang++ $CXXFLAGS -fsanitize=fuzzer "${objs[@]}" -o "$OUT/$name" "${libs[@]}" 2>"$OUT/$name.build.log"
}

seed() { # dir files...
    local dir=$1; shift
    rm -rf "$dir" && mkdir -p "$dir"
    for f in "$@"; do cp "$f" "$dir/"; done
}

# The whole adapter and the tests' fake driver, the parsers the small
# targets take, and the targets themselves.
ADAPTER_SRCS=("$ROOT"/firmware/src/*/*.cpp "$ROOT"/app/fwdriver/fake_driver.cpp "$ROOT"/app/fwdriver/fake_rdma.cpp
              "$ROOT"/app/fwdriver/frames.cpp
              "$BUILD/firmware/cna_fw_builtin.cpp" "$ROOT/base/ecore/ecore_init_image.cpp"
              "$ROOT/osal/dpdk/os/osal_util.cpp")
PARSER_SRCS=("$ROOT/pmd/net/cna_devargs.cpp" "$ROOT/transport/daemon/daemon_options.cpp"
             "$ROOT/transport/daemon/client_session.cpp" "$ROOT/transport/daemon/process_memory.cpp"
             "$ROOT/base/ecore/ecore_iov_tlv.cpp"
             "$ROOT/base/ecore/ecore_iov_checks.cpp")
CM_SRCS=("$ROOT"/pmd/rdma/cm/cm_ip_service.cpp "$ROOT"/pmd/rdma/cm/cm_mad.cpp "$ROOT"/pmd/rdma/cm/cm_manager.cpp)
TARGETS=(fuzz_init_image fuzz_frame fuzz_devargs fuzz_host_writes fuzz_roce fuzz_daemon fuzz_daemon_config
         fuzz_vm fuzz_vf_channel fuzz_vf_pf fuzz_cm fuzz_switch)
rm -rf "$OUT/obj" "$OUT/compile.log"
TARGET_SRCS=($(for t in "${TARGETS[@]}"; do echo "$ROOT/app/test/fuzz/$t.cpp"; done))
compile main "$INC" "${ADAPTER_SRCS[@]}" "${PARSER_SRCS[@]}" "${CM_SRCS[@]}" "${TARGET_SRCS[@]}"
src() { obj main "$1"; }
main_of() { obj main "$ROOT/app/test/fuzz/$1.cpp"; }
ADAPTER_OBJS=($(for s in "${ADAPTER_SRCS[@]}"; do src "$s"; done))

# ecore and the OSAL on the adapter, instrumented too (DPDK's libraries are
# not), in an archive: the PF's end of its VFs' channel takes what it needs
# of them. RDMA's QP state checks and the daemon's spawning are none of it
# (and clang 14 refuses the checks' `using enum` of an alias).
VF_PF_SRCS=($(ls "$ROOT"/base/ecore/*.cpp "$ROOT"/osal/dpdk/os/*.cpp "$ROOT"/osal/dpdk/pci/*.cpp "$ROOT"/transport/client/*.cpp |
              grep -v -e ecore_init_image.cpp -e osal_util.cpp -e ecore_rdma_qp_state.cpp -e pci_daemon_spawn.cpp))
compile vf_pf "$INC -DALLOW_EXPERIMENTAL_API" "${VF_PF_SRCS[@]}"
rm -f "$OUT/libvf_pf.a"
ar rcs "$OUT/libvf_pf.a" "$OUT"/obj/vf_pf/*.o

link fuzz_init_image "$(main_of fuzz_init_image)" "$(src "$ROOT/base/ecore/ecore_init_image.cpp")" \
    "$(src "$ROOT/osal/dpdk/os/osal_util.cpp")" -- -lz
link fuzz_frame "$(main_of fuzz_frame)" "$(src "$ROOT/firmware/src/frame/frame.cpp")"
link fuzz_devargs "$(main_of fuzz_devargs)" "$(src "$ROOT/pmd/net/cna_devargs.cpp")" -- -lrte_kvargs -lrte_net \
    -lrte_ethdev
link fuzz_switch "$(main_of fuzz_switch)" "$(src "$ROOT/firmware/src/switch/switch_table.cpp")" \
    "$(src "$ROOT/firmware/src/switch/rewrite.cpp")" "$(src "$ROOT/firmware/src/frame/flow_key.cpp")" \
    "$(src "$ROOT/firmware/src/frame/frame.cpp")" -- -lisal
link fuzz_daemon_config "$(main_of fuzz_daemon_config)" "$(src "$ROOT/transport/daemon/daemon_options.cpp")"
link fuzz_vf_channel "$(main_of fuzz_vf_channel)" "$(src "$ROOT/base/ecore/ecore_iov_tlv.cpp")" \
    "$(src "$ROOT/base/ecore/ecore_iov_checks.cpp")" "$(src "$ROOT/osal/dpdk/os/osal_util.cpp")" -- -lz
link fuzz_host_writes "$(main_of fuzz_host_writes)" "${ADAPTER_OBJS[@]}" -- -lz -lisal -pthread
link fuzz_roce "$(main_of fuzz_roce)" "${ADAPTER_OBJS[@]}" -- -lz -lisal -pthread
link fuzz_cm "$(main_of fuzz_cm)" $(for s in "${CM_SRCS[@]}"; do src "$s"; done) "${ADAPTER_OBJS[@]}" \
    -- -lz -lisal -pthread
link fuzz_daemon "$(main_of fuzz_daemon)" "$(src "$ROOT/transport/daemon/client_session.cpp")" \
    "$(src "$ROOT/transport/daemon/process_memory.cpp")" "${ADAPTER_OBJS[@]}" -- -lz -lisal -pthread
link fuzz_vm "$(main_of fuzz_vm)" "$(src "$ROOT/transport/daemon/client_session.cpp")" \
    "$(src "$ROOT/transport/daemon/process_memory.cpp")" "${ADAPTER_OBJS[@]}" -- -lz -lisal -pthread
link fuzz_vf_pf "$(main_of fuzz_vf_pf)" "$OUT/libvf_pf.a" "${ADAPTER_OBJS[@]}" \
    -- $(pkg-config --libs libdpdk) -lz -lisal -pthread

# run NAME CORPUS: one target for its time, its verdict into NAME.verdict
run() {
    local name=$1 corpus=$2 verdict
    if [ ! -x "$OUT/$name" ]; then
        verdict="fuzz $name: build failed
$(cat "$OUT/compile.log" "$OUT/$name.build.log")"
    elif (cd "$OUT" && "./$name" -max_total_time="$SECONDS_EACH" -print_final_stats=1 "$corpus" >"$OUT/$name.log" 2>&1); then
        verdict="fuzz $name: ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$name.log" | grep -o '[0-9]*$') inputs in ${SECONDS_EACH} s"
    else
        verdict="fuzz $name: FAILED
$(tail -40 "$OUT/$name.log")"
    fi
    echo "$verdict" >"$OUT/$name.verdict"
}

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
seed "$OUT/corpus_cm" "$ROOT"/app/test/fuzz/seeds/cm_*
seed "$OUT/corpus_switch" "$ROOT"/app/test/fuzz/seeds/switch_*

# One target per CPU at a time; the verdicts in the targets' order.
rm -f "$OUT"/*.verdict
for name in "${TARGETS[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    corpus=$OUT/corpus_${name#fuzz_}
    [ "$name" = fuzz_init_image ] && corpus=$OUT/corpus_image
    run "$name" "$corpus" &
done
wait
failed=0
passed=0
for name in "${TARGETS[@]}"; do
    cat "$OUT/$name.verdict"
    if grep -q "^fuzz $name: ok" "$OUT/$name.verdict"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
