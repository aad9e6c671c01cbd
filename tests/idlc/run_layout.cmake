# run_layout.cmake -- idlc_layout_sunlay: idlc --rpcgen-types gives rpcgen's C layout.
#
#   -DIDLC=path -DRPCGEN=path -DCC=compiler -DSRC=tests/idlc/rt -DINCLUDES="dir|dir"
#   -DTIRPC_INC=dir -DWORK=dir
#
# Runs rpcgen -h and idlc --rpcgen-types -h on rt/sunlay.x, builds rt/layout_probe.c against
# each header (rpcgen's with libtirpc's headers, idlc's with remotecall's) and compares what
# the two print: sizeof and offsetof of every type and member must agree. idlc's default
# header must differ (bool is 1 byte, long 4), or the check would prove nothing.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/rpcgen ${WORK}/idlc ${WORK}/default)
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
set(rc_incs)
foreach(i ${INCLUDES})
  list(APPEND rc_incs -I${i})
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(COPY ${SRC}/sunlay.x DESTINATION ${WORK}/rpcgen)
run("rpcgen" ${RPCGEN} -h -o sunlay.h sunlay.x WORKING_DIRECTORY ${WORK}/rpcgen)
run("idlc --rpcgen-types" ${IDLC} --rpcgen-types -h -o ${WORK}/idlc/sunlay.h ${SRC}/sunlay.x)
run("idlc" ${IDLC} -h -o ${WORK}/default/sunlay.h ${SRC}/sunlay.x)
set(layouts)
foreach(side rpcgen idlc default)
  if(side STREQUAL "rpcgen")
    set(incs -I${TIRPC_INC})
  else()
    set(incs ${rc_incs})
  endif()
  run("layout_probe against ${side}'s header" ${CC} -std=c11 -Wall -Wextra -Werror
    -I${WORK}/${side} ${incs} ${SRC}/layout_probe.c -o ${WORK}/${side}/probe)
  run("${side}'s probe" ${WORK}/${side}/probe)
  set(layout_${side} "${out}")
endforeach()
if(NOT layout_rpcgen STREQUAL layout_idlc)
  message(FATAL_ERROR "idlc --rpcgen-types differs from rpcgen:\nrpcgen:\n${layout_rpcgen}\n"
    "idlc --rpcgen-types:\n${layout_idlc}")
endif()
if(layout_default STREQUAL layout_rpcgen)
  message(FATAL_ERROR "idlc's default types have rpcgen's layout: the check proves nothing")
endif()
message(STATUS "rpcgen and idlc --rpcgen-types agree:\n${layout_idlc}")
