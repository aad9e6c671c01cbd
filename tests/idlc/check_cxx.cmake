# check_cxx.cmake -- headers as C++17 (included by run_golden.cmake and run_sysx.cmake; run
# alone with `cmake -DCXX=g++ -DHEADERS="a.h|b.h" -DINCLUDES="dir|dir" -P` it is the
# cxx_public_headers test).
#
# idlc_check_cxx(CXX INCLUDES EXTRA HEADERS...) compiles each header as a C++ file, with
# -std=c++17 -fsyntax-only -Wall -Wextra -Werror and the flags of the ';'-list EXTRA (those
# the C compile of the same output gets); any diagnostic fails.
function(idlc_check_cxx cxx includes extra)
  string(REPLACE "|" ";" includes "${includes}")
  set(flags -x c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror ${extra})
  foreach(i ${includes})
    list(APPEND flags -isystem ${i})
  endforeach()
  foreach(h ${ARGN})
    get_filename_component(dir ${h} DIRECTORY)
    execute_process(COMMAND ${cxx} ${flags} -I${dir} -
      INPUT_FILE ${h} RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
    if(NOT rc EQUAL 0 OR err)
      message(FATAL_ERROR "${h} does not compile as C++17:\n${err}")
    endif()
  endforeach()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED HEADERS)
  string(REPLACE "|" ";" HEADERS "${HEADERS}")
  idlc_check_cxx(${CXX} "${INCLUDES}" "" ${HEADERS})
  list(LENGTH HEADERS n)
  message(STATUS "${n} headers compile as C++17")
endif()
