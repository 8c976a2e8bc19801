# Building CUDA programs with cudalab: the same .cu files for the cuda backend (nvcc) or the emu
# backend (translated by CUDALAB_TRANSLATE, compiled as C++, linked to the CPU runtime). Used by
# this project and, installed, by any project through find_package(cudalab) (cmake/cudalabConfig.cmake).
#
#   cudalab_add_executable(prog main.cu kernels.cu [UNCHECKED])   a program, every .cu checked
#   cudalab_executable(target plain.cu ... INSTRUMENT checked.cu ...)   the finer form
#
# Expects CUDALAB_BACKEND (cuda or emu), CUDALAB_TRANSLATE, Python3_EXECUTABLE and
# CUDALAB_BACKEND_TARGET (what a program links: the CUDA runtime, or the emu runtime).

# Turns .cu files into what the backend compiles: themselves (cuda) or translated C++ (emu).
# With INSTRUMENT (emu only), the compiler puts a call before every memory access of the code:
# ThreadSanitizer's instrumentation, whose entry points common/emu/src/hooks.cpp implements with
# the backend's checks and counters. Only the student's code gets it, not the harness. DWARF 4:
# binutils' addr2line names the #line file of GCC's DWARF 5 tables wrongly.
# TARGET: the target they are compiled for, whose include folders and definitions the translator's
# front end (Clang) reads them with.
function(cudalab_sources out)
  cmake_parse_arguments(arg "INSTRUMENT" "TARGET" "" ${ARGN})
  set(result)
  set(flags)
  if(arg_TARGET)
    set(dirs $<TARGET_PROPERTY:${arg_TARGET},INCLUDE_DIRECTORIES>)
    set(defs $<TARGET_PROPERTY:${arg_TARGET},COMPILE_DEFINITIONS>)
    set(flags "$<$<BOOL:${dirs}>:-I$<JOIN:${dirs},$<SEMICOLON>-I>>" "$<$<BOOL:${defs}>:-D$<JOIN:${defs},$<SEMICOLON>-D>>")
  endif()
  foreach(src IN LISTS arg_UNPARSED_ARGUMENTS)
    get_filename_component(src ${src} ABSOLUTE)
    if(CUDALAB_BACKEND STREQUAL "emu")
      file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${src})
      if(rel MATCHES "^\\.\\.")  # outside the project: by its full path
        string(REGEX REPLACE "^/" "" rel ${src})
      endif()
      set(cpp ${CMAKE_BINARY_DIR}/emu-src/${rel}.cpp)
      # A source that several targets of a folder compile is translated once, with the first
      # one's flags.
      get_property(translated DIRECTORY PROPERTY CUDALAB_TRANSLATED)
      if(cpp IN_LIST translated)
        list(APPEND result ${cpp})
        continue()
      endif()
      set_property(DIRECTORY APPEND PROPERTY CUDALAB_TRANSLATED ${cpp})
      add_custom_command(
        OUTPUT ${cpp}
        COMMAND ${Python3_EXECUTABLE} ${CUDALAB_TRANSLATE} ${src} ${cpp} --depfile ${cpp}.d ${flags}
        DEPENDS ${src} ${CUDALAB_TRANSLATE} ${CUDALAB_FRONT_END}
        DEPFILE ${cpp}.d
        COMMENT "Translating ${rel} for the emu backend" VERBATIM COMMAND_EXPAND_LISTS)
      if(arg_INSTRUMENT)
        set_source_files_properties(${cpp} PROPERTIES COMPILE_OPTIONS "${CUDALAB_INSTRUMENT_FLAGS}")
      endif()
      list(APPEND result ${cpp})
    else()
      list(APPEND result ${src})
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()
# GCC folds functions whose code is identical into one (-fipa-icf, on at -O2): a __device__
# function that is a host function's twin (a CPU reference's) would then be reported at the host
# function's lines.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(CUDALAB_INSTRUMENT_FLAGS -gdwarf-4 -fsanitize=thread --param=tsan-instrument-func-entry-exit=0
                               -fno-ipa-icf)
else()
  set(CUDALAB_INSTRUMENT_FLAGS -gdwarf-4 -fsanitize=thread -mllvm -tsan-instrument-func-entry-exit=false)
endif()

# An executable built from .cu files (and any .cpp) for the chosen backend; the files after
# INSTRUMENT are the checked ones.
function(cudalab_executable target)
  cmake_parse_arguments(arg "" "" "INSTRUMENT" ${ARGN})
  cudalab_sources(plain ${arg_UNPARSED_ARGUMENTS} TARGET ${target})
  cudalab_sources(checked INSTRUMENT ${arg_INSTRUMENT} TARGET ${target})
  add_executable(${target} ${plain} ${checked})
  target_link_libraries(${target} PRIVATE ${CUDALAB_BACKEND_TARGET})
endfunction()


# A program whose .cu files are all checked on the emu backend (UNCHECKED: none are, faster).
function(cudalab_add_executable target)
  cmake_parse_arguments(arg "UNCHECKED" "" "" ${ARGN})
  set(cu)
  set(other)
  foreach(src IN LISTS arg_UNPARSED_ARGUMENTS)
    if(src MATCHES "\\.cu$")
      list(APPEND cu ${src})
    else()
      list(APPEND other ${src})
    endif()
  endforeach()
  if(arg_UNCHECKED)
    cudalab_executable(${target} ${cu} ${other})
  else()
    cudalab_executable(${target} ${other} INSTRUMENT ${cu})
  endif()
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  # assert() stays on, as it does under nvcc without -DNDEBUG.
  target_compile_options(${target} PRIVATE -UNDEBUG)
endfunction()
