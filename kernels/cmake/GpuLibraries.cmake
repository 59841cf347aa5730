# Sets up the resolved GPU backend (_moe_resolved = CUDA or HIP) and its optional libraries.
# Defines:
#   moe_gpu_options     INTERFACE target: language flags, MOESIM_USE_HIP, include path of common/
#   moe_gpu_blaslt      INTERFACE target: cuBLASLt or hipBLASLt (when MOESIM_HAVE_BLASLT)
#   moe_gpu_ccl         INTERFACE target: NCCL or RCCL (when MOESIM_HAVE_CCL)
#   moe_gpu_sources(<target> <sources...>)  marks .cu sources for the backend's compiler
add_library(moe_gpu_options INTERFACE)
target_include_directories(moe_gpu_options INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/common)
target_compile_definitions(moe_gpu_options INTERFACE MOESIM_KERNELS_VERSION="${MOESIM_KERNELS_VERSION}"
                                                     MOESIM_GIT_SHA="${MOESIM_GIT_SHA}")
set(MOESIM_HAVE_BLASLT OFF)
set(MOESIM_HAVE_CCL OFF)

if(_moe_resolved STREQUAL "CUDA")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES ${MOESIM_CUDA_ARCHITECTURES})
  endif()
  enable_language(CUDA)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    # CMake 3.25 predates nvcc's C++20 support; teach it the flag (nvcc >= 12 has it).
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  target_link_libraries(moe_gpu_options INTERFACE CUDA::cudart)
  target_compile_options(moe_gpu_options INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo --expt-relaxed-constexpr>)
  message(STATUS "kernels: CUDA backend, nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")

  if(TARGET CUDA::cublasLt)
    add_library(moe_gpu_blaslt INTERFACE)
    target_link_libraries(moe_gpu_blaslt INTERFACE CUDA::cublasLt CUDA::cublas)
    set(MOESIM_HAVE_BLASLT ON)
  endif()
  # NCCL: the toolkit folder, NCCL_ROOT (cache or environment), or a pip wheel's nvidia/nccl.
  find_path(MOESIM_NCCL_INCLUDE_DIR nccl.h
            HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(MOESIM_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
  if(MOESIM_NCCL_INCLUDE_DIR AND MOESIM_NCCL_LIBRARY)
    add_library(moe_gpu_ccl INTERFACE)
    target_include_directories(moe_gpu_ccl INTERFACE ${MOESIM_NCCL_INCLUDE_DIR})
    target_link_libraries(moe_gpu_ccl INTERFACE ${MOESIM_NCCL_LIBRARY})
    set(MOESIM_HAVE_CCL ON)
  endif()
  set(_moe_blas_name cuBLASLt)
  set(_moe_ccl_name NCCL)
else()
  # Compile the .cu files as HIP through hipcc (the C++ compiler of this project).
  include(CheckCXXSourceCompiles)
  set(_moe_hip_archs "")
  foreach(arch IN LISTS MOESIM_HIP_ARCHITECTURES)
    set(CMAKE_REQUIRED_FLAGS "-x hip --offload-arch=${arch}")
    check_cxx_source_compiles("#include <hip/hip_runtime.h>\n__global__ void k() {}\nint main() { return 0; }"
                              MOESIM_HIPCC_KNOWS_${arch})
    unset(CMAKE_REQUIRED_FLAGS)
    if(MOESIM_HIPCC_KNOWS_${arch})
      list(APPEND _moe_hip_archs ${arch})
    else()
      message(WARNING "kernels: ${MOESIM_HIPCC} does not know --offload-arch=${arch} (gfx942 needs the clang of "
                      "ROCm >= 5.7; Debian's hipcc 5.2 uses clang 15). Building for gfx90a instead: such a "
                      "build checks that the HIP sources compile; build with ROCm's hipcc on the MI300X/MI325X node.")
      list(APPEND _moe_hip_archs gfx90a)
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _moe_hip_archs)
  list(TRANSFORM _moe_hip_archs PREPEND "--offload-arch=" OUTPUT_VARIABLE _moe_hip_arch_flags)
  target_compile_definitions(moe_gpu_options INTERFACE MOESIM_USE_HIP=1 __HIP_PLATFORM_AMD__=1)
  target_compile_options(moe_gpu_options INTERFACE ${_moe_hip_arch_flags})
  target_link_options(moe_gpu_options INTERFACE ${_moe_hip_arch_flags})
  message(STATUS "kernels: HIP backend through ${CMAKE_CXX_COMPILER}, architectures ${_moe_hip_archs}")

  find_package(hipblaslt CONFIG QUIET HINTS $ENV{ROCM_PATH} /opt/rocm)
  if(TARGET roc::hipblaslt)
    add_library(moe_gpu_blaslt INTERFACE)
    target_link_libraries(moe_gpu_blaslt INTERFACE roc::hipblaslt)
    set(MOESIM_HAVE_BLASLT ON)
  endif()
  find_package(rccl CONFIG QUIET HINTS $ENV{ROCM_PATH} /opt/rocm)
  if(TARGET rccl::rccl)
    add_library(moe_gpu_ccl INTERFACE)
    target_link_libraries(moe_gpu_ccl INTERFACE rccl::rccl)
    set(MOESIM_HAVE_CCL ON)
  endif()
  set(_moe_blas_name hipBLASLt)
  set(_moe_ccl_name RCCL)
endif()

if(MOESIM_HAVE_BLASLT)
  target_compile_definitions(moe_gpu_blaslt INTERFACE MOESIM_HAVE_BLASLT=1)
else()
  message(WARNING "kernels: ${_moe_blas_name} not found: gemm, grouped_gemm, attention and contention benchmarks "
                  "are not built. On ROCm install hipblaslt (not packaged by Debian); on CUDA install the "
                  "CUDA Toolkit's cuBLAS.")
endif()
if(MOESIM_HAVE_CCL)
  target_compile_definitions(moe_gpu_ccl INTERFACE MOESIM_HAVE_CCL=1)
else()
  message(WARNING "kernels: ${_moe_ccl_name} not found: collectives and contention benchmarks are not built. "
                  "Set NCCL_ROOT to a folder with include/nccl.h and lib/libnccl.so (CUDA) or install rccl "
                  "(ROCm; not packaged by Debian).")
endif()

function(moe_gpu_sources target)
  target_sources(${target} PRIVATE ${ARGN})
  if(_moe_resolved STREQUAL "HIP")
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "-xhip")
  endif()
endfunction()
