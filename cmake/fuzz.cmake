# cmake/fuzz.cmake: the libFuzzer harnesses (specs/fuzz/), included at the
# end of CMakeLists.txt.
#
# The harnesses need clang's -fsanitize=fuzzer, and the normal tree is built
# by gcc, so they live in a tree of their own: configured with CC=clang,
# -DLEASE_FUZZ=ON and -DLEASE_SANITIZE=address,undefined, in which only the
# core library and the two harnesses are built.  The normal tree has the
# ctest tests fuzz_open and fuzz_ops, which run scripts/fuzz: it configures
# and builds that tree under the build directory, replays the regression
# inputs (specs/fuzz/regress/), then fuzzes from the seed corpus for a
# bounded time.
option(LEASE_FUZZ "Build the libFuzzer harnesses (clang only; see cmake/fuzz.cmake)" OFF)

if(LEASE_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LEASE_FUZZ needs clang (configure with CC=clang)")
  endif()
  # The engine gets coverage instrumentation; libFuzzer's main comes with
  # the harness link.
  target_compile_options(lease_core PRIVATE -fsanitize=fuzzer-no-link)
  foreach(_h fuzz_open fuzz_ops)
    add_executable(${_h} ${CMAKE_CURRENT_SOURCE_DIR}/specs/fuzz/${_h}.c)
    target_compile_options(${_h} PRIVATE -fsanitize=fuzzer)
    target_link_options(${_h} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${_h} PRIVATE lease_core)
    set_target_properties(${_h} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endforeach()
elseif(LEASE_BUILD_TESTS AND NOT LEASE_SANITIZE)
  # scripts/fuzz fails, saying so, when clang or libFuzzer is missing.
  foreach(_h fuzz_open fuzz_ops)
    add_test(NAME ${_h}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fuzz ${_h} --dir ${CMAKE_CURRENT_BINARY_DIR}/fuzz
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    # Both build one tree: never at the same time.
    set_tests_properties(${_h} PROPERTIES TIMEOUT 600 RESOURCE_LOCK lease_fuzz_tree)
    set_property(TEST ${_h} APPEND PROPERTY LABELS full)
  endforeach()
endif()
