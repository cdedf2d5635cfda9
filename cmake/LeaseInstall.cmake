# LeaseInstall.cmake: install rules, included by CMakeLists.txt.
#
#   lib/lua/<5.4|5.3|5.1>/lease.so     the Lua module (luv's layout)
#   lib/liblease.so.X.Y, liblease.a    the C library, shared and static
#   include/lease.h                    its API
#   lib/pkgconfig/lease.pc             pkg-config --cflags --libs lease
#   lib/cmake/lease/                   find_package(lease) -> lease::lease
#   bin/lease, share/man/man1/lease.1  the host program and its manual
#   share/doc/lease/                   LICENSE, README.md, CHANGELOG.md, docs/ (the guides)
#
# Under luarocks (LEASE_ROCK), only the module, into the rock's lib
# directory, and bin/lease into its bin directory (LEASE_ROCK_BINDIR),
# which luarocks puts on the tree's bin/.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(LEASE_ROCK)
  install(TARGETS lease_lua LIBRARY DESTINATION ${LEASE_ROCK_LIBDIR})
  if(TARGET lease_host AND LEASE_ROCK_BINDIR)
    install(TARGETS lease_host RUNTIME DESTINATION ${LEASE_ROCK_BINDIR})
  endif()
  return()
endif()

set(LEASE_INSTALL_CMOD "lib/lua/${LEASE_LUA_ABI}" CACHE STRING
    "Where the Lua module goes, relative to the prefix")
set(LEASE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/lease" CACHE STRING
    "Where the CMake package goes, relative to the prefix")

# The shared library, from the static library's sources and settings, so a
# source added to lease_core is in both.
get_target_property(_core_sources lease_core SOURCES)
add_library(lease_shared SHARED ${_core_sources})
target_include_directories(lease_shared
  PRIVATE $<TARGET_PROPERTY:lease_core,INCLUDE_DIRECTORIES>
  INTERFACE $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/src>)
target_compile_definitions(lease_shared PRIVATE $<TARGET_PROPERTY:lease_core,COMPILE_DEFINITIONS>)
target_link_libraries(lease_shared PRIVATE SQLite::SQLite3 m Threads::Threads)
if(LEASE_HAVE_POSTGRESQL)
  target_include_directories(lease_shared PRIVATE ${LIBPQ_INCLUDE_DIRS})
  target_link_libraries(lease_shared PRIVATE ${LIBPQ_LINK_LIBRARIES})
endif()
set_target_properties(lease_shared PROPERTIES
  OUTPUT_NAME lease EXPORT_NAME lease
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})

install(TARGETS lease_shared lease_core EXPORT leaseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/src/lease.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT leaseTargets NAMESPACE lease:: FILE leaseTargets.cmake
        DESTINATION ${LEASE_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/leaseConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/leaseConfig.cmake
                              INSTALL_DESTINATION ${LEASE_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/leaseConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/leaseConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/leaseConfigVersion.cmake
        DESTINATION ${LEASE_INSTALL_CMAKEDIR})

# lease.pc finds its prefix from its own place (${pcfiledir}), so it is
# right for `cmake --install --prefix P` whatever the configured prefix.
file(RELATIVE_PATH LEASE_PC_TO_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/lease.pc.in ${CMAKE_CURRENT_BINARY_DIR}/lease.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lease.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(TARGET lease_lua)
  install(TARGETS lease_lua LIBRARY DESTINATION ${LEASE_INSTALL_CMOD})
endif()
if(TARGET lease_host)
  install(TARGETS lease_host RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/docs/lease.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE ${CMAKE_CURRENT_SOURCE_DIR}/README.md
              ${CMAKE_CURRENT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The guides the README links to (docs/*.md, with their plots and the contract).
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.svg" PATTERN "*.txt")
