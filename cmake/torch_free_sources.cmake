# yoke_skip_pch_without_torch(SOURCE...): sources that include no LibTorch header, directly or
# through the project's own headers, compile without the target's precompiled header. Loading
# LibTorch's header costs a file that does not use it more than parsing its own includes does
# (GCC 12, -O2, the idle 2-core Intel Xeon, CPU seconds through the header and without:
# src/experiment/grid.cpp 4.7 and 3.0, src/train/train_state.cpp 3.5 and 1.9,
# src/serve/http_listener.cpp 18.7 and 16.5). The scan reads `#include` lines at configure
# time (quoted ones resolved beside the file, then under src/, tests/torch/ and the source root); a
# file that later starts to include LibTorch still compiles, only without the header's speed-up,
# until CMake configures again.

function(_yoke_includes_torch file result)
  get_property(known GLOBAL PROPERTY "yoke_torch_scan:${file}" SET)
  if(known)
    get_property(value GLOBAL PROPERTY "yoke_torch_scan:${file}")
    set(${result} ${value} PARENT_SCOPE)
    return()
  endif()
  # Marked first, so that headers including each other end the recursion.
  set_property(GLOBAL PROPERTY "yoke_torch_scan:${file}" OFF)
  set(value OFF)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  get_filename_component(dir "${file}" DIRECTORY)
  foreach(line IN LISTS lines)
    if(line MATCHES "<(torch|ATen|c10|caffe2)/")
      set(value ON)
      break()
    endif()
    if(NOT line MATCHES "\"([^\"]+)\"")
      continue()
    endif()
    set(name "${CMAKE_MATCH_1}")
    foreach(base "${dir}" "${CMAKE_SOURCE_DIR}/src" "${CMAKE_SOURCE_DIR}/tests/torch" "${CMAKE_SOURCE_DIR}")
      if(EXISTS "${base}/${name}" AND NOT IS_DIRECTORY "${base}/${name}")
        get_filename_component(header "${base}/${name}" REALPATH)
        _yoke_includes_torch("${header}" header_value)
        if(header_value)
          set(value ON)
        endif()
        break()
      endif()
    endforeach()
    if(value)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "yoke_torch_scan:${file}" ${value})
  set(${result} ${value} PARENT_SCOPE)
endfunction()

function(yoke_skip_pch_without_torch)
  foreach(source IN LISTS ARGN)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}")
    get_filename_component(path "${path}" REALPATH)
    if(NOT path MATCHES "\\.cpp$")
      continue()
    endif()
    _yoke_includes_torch("${path}" uses_torch)
    if(NOT uses_torch)
      set_source_files_properties("${source}" PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
