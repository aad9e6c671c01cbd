# run_golden.cmake -- one golden test of idlc (run by ctest through `cmake -P`).
#
#   -DIDLC=path -DINPUT=dir/NAME.x -DEXPECTED=dir -DWORK=dir -DCC=compiler
#   -DINCLUDES="dir|dir" [-DCXX=g++] [-DOPTIONS="--opt|..."] [-DREGEN=ON]
#
# Runs `idlc -o WORK NAME.x` in the input's folder and compares the four outputs with
# EXPECTED/NAME.h, NAME_xdr.c, NAME_clnt.c, NAME_svc.c byte for byte (and idlc's stderr
# with EXPECTED/NAME.stderr, empty if that file does not exist); checks that no line is wider
# than 100 columns (check_width.cmake); compiles NAME.h as C++17 with CXX (check_cxx.cmake);
# then compiles the three .c files with -std=c11 -Wall -Wextra -Werror -Wpedantic, and the
# samples of `idlc -a` likewise (check_samples.cmake). OPTIONS are more idlc arguments
# (golden/NAME.opts, one a line).
#
# To regenerate every expected file after a deliberate change of idlc's output:
#   cmake --build BUILD --target idlc-regen-goldens
# (runs this script with -DREGEN=ON, which writes instead of comparing), then review
# `git diff tests/idlc`.
get_filename_component(dir ${INPUT} DIRECTORY)
get_filename_component(file ${INPUT} NAME)
get_filename_component(name ${INPUT} NAME_WE)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
string(REPLACE "|" ";" OPTIONS "${OPTIONS}")
execute_process(COMMAND ${IDLC} ${OPTIONS} -o ${WORK} ${file}
  WORKING_DIRECTORY ${dir}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "idlc ${file} failed (${rc}):\n${err}")
endif()

set(outputs ${name}.h ${name}_xdr.c ${name}_clnt.c ${name}_svc.c)
if(REGEN)
  file(MAKE_DIRECTORY ${EXPECTED})
  foreach(f ${outputs})
    file(COPY ${WORK}/${f} DESTINATION ${EXPECTED})
  endforeach()
  if(err)
    file(WRITE ${EXPECTED}/${name}.stderr "${err}")
  else()
    file(REMOVE ${EXPECTED}/${name}.stderr)
  endif()
  message(STATUS "regenerated ${EXPECTED}")
  return()
endif()

set(want_err "")
if(EXISTS ${EXPECTED}/${name}.stderr)
  file(READ ${EXPECTED}/${name}.stderr want_err)
endif()
if(NOT err STREQUAL want_err)
  message(FATAL_ERROR "idlc ${file}: diagnostics differ.\nexpected:\n${want_err}\ngot:\n${err}")
endif()

set(failed "")
foreach(f ${outputs})
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${EXPECTED}/${f} ${WORK}/${f}
    RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    execute_process(COMMAND diff -u ${EXPECTED}/${f} ${WORK}/${f} OUTPUT_VARIABLE d)
    message("---- ${f} differs from the golden file:\n${d}")
    list(APPEND failed ${f})
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "outputs differ from the golden files: ${failed}")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/check_width.cmake)
list(TRANSFORM outputs PREPEND ${WORK}/ OUTPUT_VARIABLE paths)
idlc_check_width(${INPUT} ${paths})
if(CXX)
  include(${CMAKE_CURRENT_LIST_DIR}/check_cxx.cmake)
  idlc_check_cxx(${CXX} "${INCLUDES}" "" ${WORK}/${name}.h)
endif()

set(flags -std=c11 -Wall -Wextra -Werror -Wpedantic -I${WORK})
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
foreach(i ${INCLUDES})
  list(APPEND flags -isystem ${i})
endforeach()
foreach(f ${name}_xdr.c ${name}_clnt.c ${name}_svc.c)
  execute_process(COMMAND ${CC} ${flags} -c ${WORK}/${f} -o ${WORK}/${f}.o
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "generated ${f} does not compile:\n${err}")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/check_samples.cmake)
idlc_check_samples(${IDLC} ${INPUT} ${WORK}/samples ${CC} "${OPTIONS}" ${flags})
