# check_samples.cmake -- idlc -a's samples of one .x file (included by run_golden.cmake and
# run_sysx.cmake).
#
# idlc_check_samples(IDLC INPUT DIR CC "OPTIONS" FLAGS...) runs `IDLC OPTIONS -a -o DIR NAME.x`
# in INPUT's folder, checks that it wrote the seven files (NAME.h, NAME_xdr.c, NAME_clnt.c,
# NAME_svc.c, NAME_client.c, NAME_server.c, Makefile.NAME) and nothing else, that no line of
# the samples is wider than 100 columns (check_width.cmake), and compiles NAME_client.c and
# NAME_server.c with CC and FLAGS (-IDIR first).
include(${CMAKE_CURRENT_LIST_DIR}/check_width.cmake)
function(idlc_check_samples idlc input dir cc options)
  get_filename_component(xdir ${input} DIRECTORY)
  get_filename_component(file ${input} NAME)
  get_filename_component(name ${input} NAME_WE)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  execute_process(COMMAND ${idlc} ${options} -a -o ${dir} ${file}
    WORKING_DIRECTORY ${xdir} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "idlc -a ${file} failed (${rc}):\n${err}")
  endif()
  set(want ${name}.h ${name}_client.c ${name}_clnt.c ${name}_server.c ${name}_svc.c
    ${name}_xdr.c Makefile.${name})
  list(SORT want)
  file(GLOB got RELATIVE ${dir} ${dir}/* ${dir}/.*)
  list(SORT got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "idlc -a ${file} wrote '${got}', not '${want}'")
  endif()
  idlc_check_width(${input} ${dir}/${name}_client.c ${dir}/${name}_server.c
    ${dir}/Makefile.${name})
  foreach(f ${name}_client.c ${name}_server.c)
    execute_process(COMMAND ${cc} -I${dir} ${ARGN} -c ${dir}/${f} -o ${dir}/${f}.o
      RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the sample ${f} of ${file} does not compile:\n${err}")
    endif()
  endforeach()
endfunction()
