# Install rules: headers, libshoal.so / libshoal.a, shoal.pc and the CMake
# package (find_package(shoal) -> shoal::shoal, shoal::static).
# Included from the top-level CMakeLists.txt after the libraries are defined.
#
# Visibility: shoal_objects compiles with -fvisibility=hidden
# (C_VISIBILITY_PRESET hidden), so the shared library exports exactly the
# functions marked SHOAL_API in include/shoal/*.h (include/shoal/export.h);
# tests/install_test.sh checks that every exported symbol starts with shoal_
# and that every SHOAL_API function of the installed headers is exported.
#
# Versions: the shared library is libshoal.so.PROJECT_VERSION with SONAME
# libshoal.so.SHOAL_ABI_VERSION (set next to project(); bumped whenever binary
# compatibility breaks). The CMake package's version check: while the major
# version is 0, find_package(shoal 0.N) accepts only 0.N.x (SameMinorVersion:
# 0.x releases may still change the API); from 1.0 on, any release of the same
# major version (SameMajorVersion).

include(GNUInstallDirs) # already included by CMakeLists.txt; harmless
include(CMakePackageConfigHelpers)

# The CMake package is two export sets so that a host that links only the
# shared library does not need OpenMP or the hwloc/cJSON/zstd development files:
# shoalConfig.cmake always loads shoal::shoal and loads shoal::static when its
# link dependencies are found (or fails if the static component was asked for).
set_target_properties(shoal_shared PROPERTIES EXPORT_NAME shoal)
set_target_properties(shoal_static PROPERTIES EXPORT_NAME static)

set(SHOAL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/shoal)

install(TARGETS shoal_shared EXPORT shoalSharedTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT shoal_Runtime
    NAMELINK_COMPONENT shoal_Development
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT shoal_Runtime
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT shoal_Development)
install(TARGETS shoal_static EXPORT shoalStaticTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT shoal_Development)
# Every header of include/shoal/ (shoal.h includes id.h, types.h, ground.h and
# planner.h; a new public header is installed without a change here, and
# tests/install_test.sh checks that each is installed and compiles alone).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/shoal DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT shoal_Development FILES_MATCHING PATTERN "*.h")

install(EXPORT shoalSharedTargets NAMESPACE shoal:: DESTINATION ${SHOAL_INSTALL_CMAKEDIR}
  COMPONENT shoal_Development)
install(EXPORT shoalStaticTargets NAMESPACE shoal:: DESTINATION ${SHOAL_INSTALL_CMAKEDIR}
  COMPONENT shoal_Development)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/shoalConfig.cmake.in
  ${PROJECT_BINARY_DIR}/shoalConfig.cmake INSTALL_DESTINATION ${SHOAL_INSTALL_CMAKEDIR})
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_shoal_compat SameMinorVersion)
else()
  set(_shoal_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shoalConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_shoal_compat})
install(FILES ${PROJECT_BINARY_DIR}/shoalConfig.cmake ${PROJECT_BINARY_DIR}/shoalConfigVersion.cmake
  DESTINATION ${SHOAL_INSTALL_CMAKEDIR} COMPONENT shoal_Development)

# shoal.pc is relocatable: prefix is found from the .pc file's own place
# (${pcfiledir}), so `cmake --install --prefix DIR` works for any DIR.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(SHOAL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(SHOAL_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(SHOAL_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH _shoal_pc_up "/_/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_")
  string(REGEX REPLACE "/$" "" _shoal_pc_up "${_shoal_pc_up}")
  set(SHOAL_PC_PREFIX "\${pcfiledir}/${_shoal_pc_up}")
  set(SHOAL_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(SHOAL_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# What a static link needs besides libshoal.a: the flag that links the
# OpenMP runtime (libgomp), the hwloc, cJSON and zstd modules, and libm.
string(REPLACE ";" " " SHOAL_PC_OPENMP "${OpenMP_C_FLAGS}")
# With SHOAL_WITH_RECAST, DetourCrowd, Detour, Recast and the C++ runtime their bridge
# needs (the shared library links them itself).
set(SHOAL_PC_RECAST "")
if(SHOAL_WITH_RECAST)
  set(SHOAL_PC_RECAST " -lDetourCrowd -lDetour -lRecast -lstdc++")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/shoal.pc.in ${PROJECT_BINARY_DIR}/shoal.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/shoal.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT shoal_Development)

# The license (MIT), beside the library's other documents; shoal.pc and the
# CMake package name it.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT shoal_Runtime)
