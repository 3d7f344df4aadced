# SPDX-License-Identifier: BSD-3-Clause
# Finds libnuma (libnuma-dev).  Defines NUMA_FOUND and the imported target NUMA::NUMA.
find_path(NUMA_INCLUDE_DIR numa.h)
find_library(NUMA_LIBRARY numa)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NUMA DEFAULT_MSG NUMA_LIBRARY NUMA_INCLUDE_DIR)
if(NUMA_FOUND AND NOT TARGET NUMA::NUMA)
  add_library(NUMA::NUMA UNKNOWN IMPORTED)
  set_target_properties(NUMA::NUMA PROPERTIES IMPORTED_LOCATION "${NUMA_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NUMA_INCLUDE_DIR}")
endif()
mark_as_advanced(NUMA_INCLUDE_DIR NUMA_LIBRARY)
