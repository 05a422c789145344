# Registers one CTest test per GoogleTest suite of a test binary (run after each build of it, as
# gtest_discover_tests does per test). Loading LibTorch takes ~0.6 s a process: one process per test
# spent a third of the torch suite's time on start-ups, and the fixtures a suite trains once (a
# tiny model, a prepared corpus; cli_helpers.h) were trained again for each of its tests.
#   cmake -DBINARY=... -DOUT=... -DTIMEOUT=... -P add_test_suites.cmake
execute_process(COMMAND "${BINARY}" --gtest_list_tests OUTPUT_VARIABLE listing RESULT_VARIABLE rc
                ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BINARY} --gtest_list_tests failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(content "")
foreach(line IN LISTS lines)
  # Suites start a line and end in '.'; their tests are indented below them.
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND content "add_test([=[${suite}]=] [=[${BINARY}]=] [=[--gtest_filter=${suite}.*]=] --gtest_brief=1 --skip-code=77)\n")
    string(APPEND content "set_tests_properties([=[${suite}]=] PROPERTIES TIMEOUT ${TIMEOUT} SKIP_RETURN_CODE 77)\n")
  endif()
endforeach()
file(WRITE "${OUT}" "${content}")
