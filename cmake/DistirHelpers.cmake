# distir_add_library(NAME SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# One static library per src/ directory, with the house warnings (STYLE.md §8).
function(distir_apply_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Woverloaded-virtual -Wimplicit-fallthrough>)
  # GCC 12 at -O3 reports -Wrestrict false positives inside libstdc++ for
  # `"literal" + std::string` (GCC bug 105329); the warning is not about our code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  if(DISTIR_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()

function(distir_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  distir_apply_warnings(${name})
endfunction()

# DISTIR_TEST_OPT on a test target's own sources (it comes after the build type's flags,
# so its -O wins).
function(distir_apply_test_opt target)
  if(DISTIR_TEST_OPT)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${DISTIR_TEST_OPT}>)
  endif()
endfunction()

# distir_add_test(NAME SOURCES ... DEPS ...): a GoogleTest executable registered with CTest.
function(distir_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} distir_testing GTest::gtest_main GTest::gmock)
  distir_apply_warnings(${name})
  distir_apply_test_opt(${name})
  gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       PROPERTIES ENVIRONMENT "DISTIR_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                       DISCOVERY_TIMEOUT 60)
endfunction()

# Links a faster allocator into an executable that builds and frees millions of
# IR objects: `distir` and the benchmarks that measure what it does. glibc's
# malloc spent a third of the search's time consolidating and unlinking chunks;
# mimalloc (Debian's libmimalloc-dev) beats gperftools' tcmalloc on the search,
# whose thread cache sends every wave of frees through its central lists
# (docs/cost_model.md §3.7), and is the one linked; tcmalloc where mimalloc is
# not installed. mimalloc_options.cc keeps freed pages committed: returning
# them cost the search system time and page faults. Not with the sanitizers,
# which bring their own allocator.
function(distir_link_allocator target)
  if(DISTIR_SANITIZE)
    return()
  endif()
  find_library(DISTIR_MIMALLOC NAMES mimalloc)
  find_path(DISTIR_MIMALLOC_INCLUDE NAMES mimalloc.h)
  if(DISTIR_MIMALLOC AND DISTIR_MIMALLOC_INCLUDE)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src/tools/mimalloc_options.cc)
    target_include_directories(${target} PRIVATE ${DISTIR_MIMALLOC_INCLUDE})
    target_link_libraries(${target} PRIVATE ${DISTIR_MIMALLOC})
    return()
  endif()
  find_library(DISTIR_TCMALLOC NAMES tcmalloc_minimal libtcmalloc_minimal.so.4)
  if(DISTIR_TCMALLOC)
    target_link_libraries(${target} PRIVATE ${DISTIR_TCMALLOC})
  endif()
endfunction()
