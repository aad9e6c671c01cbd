# run_sysx.cmake -- a system .x file through idlc (run by ctest via `cmake -P`).
#
#   -DIDLC=path -DINPUT=/usr/include/.../NAME.x -DWORK=dir -DCC=compiler
#   -DINCLUDES="dir|dir" -DCOMPILE=ON|OFF [-DPRE="other.x;..."] [-DCFLAGS="..."] [-DCXX=g++]
#
# idlc must accept the file (warnings are allowed, errors are not), and no line it composed
# may be wider than 100 columns (check_width.cmake: %-lines are the user's); with CXX, NAME.h
# must compile as C++17 (check_cxx.cmake). With COMPILE,
# the three generated .c files must compile with -std=c11 -Wall -Wextra -Werror -Wpedantic,
# and so must the samples of `idlc -a`, written into WORK/samples (check_samples.cmake).
# PRE lists
# .x files whose headers this one's %-lines include (<rpcsvc/NAME.h>): they are generated
# first into WORK/inc/rpcsvc, which is on the include path.
get_filename_component(name ${INPUT} NAME_WE)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/out ${WORK}/inc/rpcsvc)

foreach(p ${PRE})
  get_filename_component(pn ${p} NAME_WE)
  execute_process(COMMAND ${IDLC} -h -o ${WORK}/inc/rpcsvc/${pn}.h ${p}
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "idlc -h ${p} failed (${rc}):\n${err}")
  endif()
endforeach()

execute_process(COMMAND ${IDLC} -o ${WORK}/out ${INPUT}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "idlc ${INPUT} failed (${rc}):\n${err}")
endif()
if(err)
  message("idlc ${INPUT} warned:\n${err}")
endif()
foreach(f ${name}.h ${name}_xdr.c ${name}_clnt.c ${name}_svc.c)
  if(NOT EXISTS ${WORK}/out/${f})
    message(FATAL_ERROR "idlc ${INPUT} did not write ${f}")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/check_width.cmake)
idlc_check_width(${INPUT} ${WORK}/out/${name}.h ${WORK}/out/${name}_xdr.c
  ${WORK}/out/${name}_clnt.c ${WORK}/out/${name}_svc.c)
separate_arguments(extra UNIX_COMMAND "${CFLAGS}")
if(CXX)
  include(${CMAKE_CURRENT_LIST_DIR}/check_cxx.cmake)
  idlc_check_cxx(${CXX} "${INCLUDES}|${WORK}/inc" "${extra}" ${WORK}/out/${name}.h)
endif()
if(NOT COMPILE)
  return()
endif()

set(flags -std=c11 -Wall -Wextra -Werror -Wpedantic ${extra} -I${WORK}/out -I${WORK}/inc)
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
foreach(i ${INCLUDES})
  list(APPEND flags -isystem ${i})
endforeach()
foreach(f ${name}_xdr.c ${name}_clnt.c ${name}_svc.c)
  execute_process(COMMAND ${CC} ${flags} -c ${WORK}/out/${f} -o ${WORK}/out/${f}.o
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "generated ${f} does not compile:\n${err}")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/check_samples.cmake)
list(REMOVE_ITEM flags -I${WORK}/out)
idlc_check_samples(${IDLC} ${INPUT} ${WORK}/samples ${CC} "" ${flags})
