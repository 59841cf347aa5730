# The header libraries of the kernels' host code, the ones moesim's host code uses: nlohmann_json
# (result and model files), CLI11 (options) and fmt (table cells). A GPU node installs them like
# any other package (Debian/Ubuntu: nlohmann-json3-dev libcli11-dev libfmt-dev); a node without a
# package manager unpacks their .debs into a folder and passes -DCMAKE_PREFIX_PATH=FOLDER/usr
# (kernels/tools/gpu_build_env.sh does both; kernels/README.md says how).
# Defines MOESIM_KERNELS_FMT, the fmt target to link.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
if(NOT DEFINED MOESIM_KERNELS_FMT)
  if(PROJECT_NAME STREQUAL "moesim_kernels")
    # A standalone GPU build compiles fmt into its programs, so they need no libfmt.so at run time.
    set(MOESIM_KERNELS_FMT fmt::fmt-header-only)
  else()
    # Inside moesim's build the host libraries link the compiled libfmt; one program must not mix the two.
    set(MOESIM_KERNELS_FMT fmt::fmt)
  endif()
endif()
