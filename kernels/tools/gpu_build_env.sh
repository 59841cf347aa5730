# shellcheck shell=bash
# Sourced by run_calibration.sh and run_layer_validation.sh: how a GPU node finds NCCL and builds
# kernels/. Not executable on its own.
#
#   moesim_find_nccl_root          sets nccl_root ("" when the toolkit has nccl.h; else the pip
#                                  wheel nvidia-nccl-cu*'s folder) and exports LD_LIBRARY_PATH for it
#   moesim_header_prefix REPO      unpacks the header libraries' .debs found in $MOESIM_HEADER_DEBS
#                                  (default REPO/.debs, filled by tools/fetch_header_debs.sh) with
#                                  dpkg -x and prints the CMake prefix to use ("" when there are none:
#                                  the node has the packages installed)
#   moesim_build_kernels REPO BUILD LOG [TARGET...]
#                                  configures kernels/ for CUDA (sm_90) into BUILD and builds the
#                                  targets (all when none), appending to LOG; returns the build status

# Never NVLink multicast on the shared hosts (NCCL NVLS, torch symmetric memory, NVSHMEM).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

moesim_find_nccl_root() {
  nccl_root=""
  if [ ! -f /usr/local/cuda/include/nccl.h ]; then
    nccl_root=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null || true)
    [ -z "$nccl_root" ] && nccl_root=$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
  fi
  if [ -n "$nccl_root" ]; then export LD_LIBRARY_PATH=$nccl_root/lib:${LD_LIBRARY_PATH:-}; fi
}

moesim_header_prefix() {
  local debs=${MOESIM_HEADER_DEBS:-$1/.debs} prefix=${MOESIM_WORK_DIR:-/tmp}/moesim-header-debs
  compgen -G "$debs/*.deb" > /dev/null || return 0
  mkdir -p "$prefix"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$prefix" || return 1; done
  echo "$prefix/usr"
}

moesim_build_kernels() {
  local repo=$1 build=$2 log=$3
  shift 3
  local nvcc_path prefix
  nvcc_path=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  prefix=$(moesim_header_prefix "$repo") || return 1
  cmake -S "$repo/kernels" -B "$build" -DMOESIM_GPU_BACKEND=CUDA -DCMAKE_CUDA_COMPILER="$nvcc_path" \
    -DMOESIM_GIT_SHA="${MOESIM_GIT_SHA:-unknown}" ${nccl_root:+-DNCCL_ROOT=$nccl_root} \
    ${prefix:+-DCMAKE_PREFIX_PATH=$prefix} >> "$log" 2>&1 || return 1
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$build" -j "$(nproc)" "${targets[@]}" >> "$log" 2>&1
}
