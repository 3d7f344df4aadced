# SPDX-License-Identifier: BSD-3-Clause
# Finds libbfd (binutils-dev).  Defines BFD_FOUND and the imported target BFD::BFD.
find_path(BFD_INCLUDE_DIR bfd.h)
find_library(BFD_LIBRARY bfd)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(BFD DEFAULT_MSG BFD_LIBRARY BFD_INCLUDE_DIR)
if(BFD_FOUND AND NOT TARGET BFD::BFD)
  add_library(BFD::BFD UNKNOWN IMPORTED)
  set_target_properties(BFD::BFD PROPERTIES IMPORTED_LOCATION "${BFD_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${BFD_INCLUDE_DIR}")
endif()
mark_as_advanced(BFD_INCLUDE_DIR BFD_LIBRARY)
