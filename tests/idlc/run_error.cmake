# run_error.cmake -- one expected-diagnostics test of idlc (run by ctest via `cmake -P`).
#
#   -DIDLC=path -DINPUT=dir/NAME.x -DEXPECTED=dir/NAME.err -DWORK=dir [-DREGEN=ON]
#
# Runs `idlc -o WORK NAME.x` in the input's folder: it must exit with status 1, print
# exactly the text of NAME.err on stderr (messages, source lines, carets) and write no file.
# Regenerate with `cmake --build BUILD --target idlc-regen-goldens` (see run_golden.cmake).
get_filename_component(dir ${INPUT} DIRECTORY)
get_filename_component(file ${INPUT} NAME)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${IDLC} -o ${WORK} ${file}
  WORKING_DIRECTORY ${dir}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(REGEN)
  file(WRITE ${EXPECTED} "${err}")
  message(STATUS "regenerated ${EXPECTED}")
  return()
endif()
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "idlc ${file}: exit status ${rc}, expected 1\n${err}")
endif()
file(READ ${EXPECTED} want)
if(NOT err STREQUAL want)
  file(WRITE ${WORK}/got.err "${err}")
  execute_process(COMMAND diff -u ${EXPECTED} ${WORK}/got.err OUTPUT_VARIABLE d)
  message(FATAL_ERROR "idlc ${file}: diagnostics differ from ${EXPECTED}:\n${d}")
endif()
file(GLOB left ${WORK}/* ${WORK}/.*)
list(REMOVE_ITEM left ${WORK}/got.err)
if(left)
  message(FATAL_ERROR "idlc ${file} failed but left files behind: ${left}")
endif()
