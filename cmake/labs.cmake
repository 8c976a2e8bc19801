# How a lab becomes test programs.
#
# labs/NN_name/       test_*.cu (the harness), demo_*.cu (optional: a program to try the code
#                     on real data), the other *.cu (the student's code), the interface .h
# solutions/NN_name/  *.cu (the reference code for the same interface)
#
# Each lab gives two test programs: NN_name-labs (harness + the student's code, run by
# `make check`) and NN_name-solutions (harness + reference, run by `make test`), and NN_name-demo
# (demo + the student's code) where there is a demo. On the emu backend every .cu is first
# translated to C++ by common/emu/translate.py.

set(CUDALAB_TOOLS ${PROJECT_SOURCE_DIR}/common/tools)

function(cudalab_add_lab lab)
  set(lab_dir ${PROJECT_SOURCE_DIR}/labs/${lab})
  set(solution_dir ${PROJECT_SOURCE_DIR}/solutions/${lab})
  file(GLOB harness CONFIGURE_DEPENDS ${lab_dir}/test_*.cu)
  file(GLOB demo CONFIGURE_DEPENDS ${lab_dir}/demo_*.cu)
  file(GLOB student CONFIGURE_DEPENDS ${lab_dir}/*.cu)
  file(GLOB reference CONFIGURE_DEPENDS ${solution_dir}/*.cu)
  list(REMOVE_ITEM student ${harness} ${demo})
  if(NOT harness)
    message(FATAL_ERROR "labs/${lab} has no test_*.cu harness")
  endif()

  # The remote runner (common/remote): NN_name-checker decides (the harness, no student code) and
  # runs each variant's program with --serve, which holds the student's code.
  file(GLOB header CONFIGURE_DEPENDS ${lab_dir}/*.h)
  set(remote_dir ${PROJECT_BINARY_DIR}/remote)
  add_custom_command(
    OUTPUT ${remote_dir}/${lab}-checker.cu ${remote_dir}/${lab}-runner.cu
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${CUDALAB_TOOLS} ${Python3_EXECUTABLE}
            -m cudalab_tools.interface ${header} ${harness} ${remote_dir}/${lab}-checker.cu
            ${remote_dir}/${lab}-runner.cu
    DEPENDS ${header} ${harness} ${CUDALAB_TOOLS}/cudalab_tools/interface.py
            ${CUDALAB_TOOLS}/cudalab_tools/cuda_ast.py ${PROJECT_SOURCE_DIR}/common/emu/include/cudalab/emu/front_end.h
    COMMENT "Reading the interface of ${lab} (the checker and the runner)" VERBATIM)
  # The checker is translated and compiled as C++ on either backend.
  set(checker_cpp ${remote_dir}/${lab}-checker.cu.cpp)
  add_custom_command(
    OUTPUT ${checker_cpp}
    COMMAND ${Python3_EXECUTABLE} ${CUDALAB_TRANSLATE} ${remote_dir}/${lab}-checker.cu ${checker_cpp}
            --checker --depfile ${checker_cpp}.d
    DEPENDS ${remote_dir}/${lab}-checker.cu ${CUDALAB_TRANSLATE}
    DEPFILE ${checker_cpp}.d
    COMMENT "Translating the checker of ${lab}" VERBATIM)
  add_executable(${lab}-checker ${checker_cpp})
  target_include_directories(${lab}-checker PRIVATE ${lab_dir})
  target_compile_definitions(${lab}-checker PRIVATE CUDALAB_LAB_DIR="${lab_dir}")
  target_link_libraries(${lab}-checker PRIVATE cudalab_remote_checker)
  set_target_properties(${lab}-checker PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/labs)

  # The harness (the runner's side of it), compiled once for both test programs.
  cudalab_sources(runner ${remote_dir}/${lab}-runner.cu TARGET ${lab}-runner)
  add_library(${lab}-runner OBJECT ${runner})
  target_include_directories(${lab}-runner PRIVATE ${lab_dir})
  target_compile_definitions(${lab}-runner PRIVATE CUDALAB_LAB_DIR="${lab_dir}")  # the lab's data files
  target_link_libraries(${lab}-runner PUBLIC cudalab_testing cudalab_remote_runner ${CUDALAB_BACKEND_TARGET})

  foreach(variant labs solutions)
    set(code ${student})
    if(variant STREQUAL "solutions")
      if(NOT reference)
        continue()  # a student's copy has no solutions
      endif()
      set(code ${reference})
    endif()
    set(target ${lab}-${variant})
    cudalab_executable(${target} INSTRUMENT ${code})
    target_include_directories(${target} PRIVATE ${lab_dir})
    target_compile_definitions(${target} PRIVATE CUDALAB_LAB_DIR="${lab_dir}")
    target_link_libraries(${target} PRIVATE ${lab}-runner)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/labs)
    add_dependencies(${target} ${lab}-checker)  # make check runs each test through it
  endforeach()

  if(demo)
    cudalab_executable(${lab}-demo ${demo} INSTRUMENT ${student})
    target_include_directories(${lab}-demo PRIVATE ${lab_dir})
    target_compile_definitions(${lab}-demo PRIVATE CUDALAB_LAB_DIR="${lab_dir}")
    set_target_properties(${lab}-demo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/labs)
  endif()

  # The student's tests, one CTest test per GoogleTest test (for IDEs; make check runs them itself).
  gtest_discover_tests(${lab}-labs TEST_PREFIX "${lab}/" DISCOVERY_MODE PRE_TEST
                       PROPERTIES LABELS "check" TIMEOUT 120)
  if(TARGET ${lab}-solutions)
    # make test: the reference passes every test, the untouched skeleton fails every test, and the
    # rubric gives points to exactly the tests that exist.
    gtest_discover_tests(${lab}-solutions TEST_PREFIX "solution/${lab}/" DISCOVERY_MODE PRE_TEST
                         PROPERTIES LABELS "selftest" TIMEOUT 120)
    add_test(NAME skeleton/${lab}
             COMMAND ${Python3_EXECUTABLE} ${CUDALAB_TOOLS}/selftest.py skeleton-fails $<TARGET_FILE:${lab}-labs>)
    add_test(NAME rubric/${lab}
             COMMAND ${Python3_EXECUTABLE} ${CUDALAB_TOOLS}/selftest.py rubric ${lab_dir}/rubric.toml
                     $<TARGET_FILE:${lab}-solutions>)
    set_tests_properties(skeleton/${lab} rubric/${lab} PROPERTIES LABELS "selftest" TIMEOUT 600)
  endif()
endfunction()
