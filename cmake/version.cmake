# Writes OUT, a header with yoke's version and the git commit of SOURCE_DIR (run at every build by
# the yoke_version target). The file is replaced only when its text changes, so a build at the same
# commit recompiles nothing. Outside a git checkout (a tarball) the commit reads "unknown".
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT changes STREQUAL "")
    set(commit "${commit}+dirty")
  endif()
endif()
file(WRITE "${OUT}.new" "// Written by cmake/version.cmake at build time.\n#define YOKE_VERSION \"${VERSION}\"\n#define YOKE_COMMIT \"${commit}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.new" "${OUT}")
file(REMOVE "${OUT}.new")
