# run_fnsan.cmake -- idlc_multi_fnsan: the generated multi-destination stubs under clang's
# -fsanitize=function (run by ctest through `cmake -P`).
#
#   -DCLANG=clang-19 -DSRC=project source dir -DGEN=dir of idlc's outputs for golden/basic.x
#   and golden/lists.x -DLIB=libremotecall.a -DCMOCKA_INC=dir -DCMOCKA_LIB=lib -DWORK=dir
#
# Calling a function through a pointer to another function type is undefined behaviour; the
# generated multi stubs once passed the caller's typed handler to rc_multicall cast to
# rc_multi_fn. This builds test_idlc_calls.c (whose multi calls use typed handlers) with the
# generated stubs and the runtime's multi.c -- the call site of the handler -- under
# -fsanitize=function -fno-sanitize-recover=function, links the rest of libremotecall.a
# (uninstrumented) and runs it: a handler called through a pointer of another type aborts it.
# The generated _clnt.c files must also compile with -Wcast-function-type-strict -Werror.
#
# NAME_xdr.c is built without the check: rc_multicall calls the argument's XDR routine through
# rc_xdrproc, the Sun RPC convention (xdrproc_t) that every xdr_T routine is cast to, which
# this test does not judge.
#
# First a probe proves the compiler's check works in C (clang < 17 checks only C++): a cast
# handler must be caught, or the test fails rather than pass without checking anything.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
  endif()
endfunction()

set(san -fsanitize=function -fno-sanitize-recover=function)
set(ENV{UBSAN_OPTIONS} "symbolize=0:print_stacktrace=0")

# ---- the probe ---------------------------------------------------------------------------
file(WRITE ${WORK}/probe.c [=[
#include <stdbool.h>
#include <stddef.h>
typedef bool (*fn)(size_t, int, void *, void *);
static bool typed(size_t i, int st, int *res, void *u)
{
	(void)i; (void)st; (void)res; (void)u;
	return true;
}
int main(void)
{
	fn f = (fn)typed;
	return f(0, 0, NULL, NULL) ? 0 : 1;
}
]=])
run("compiling the probe" ${CLANG} ${san} ${WORK}/probe.c -o ${WORK}/probe)
execute_process(COMMAND ${WORK}/probe RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "incorrect function type")
  message(FATAL_ERROR "${CLANG} -fsanitize=function does not catch a cast handler in C "
    "(exit ${rc}):\n${err}")
endif()

# ---- the stubs ---------------------------------------------------------------------------
set(flags -std=c11 -g -D_GNU_SOURCE -Wall -Wextra -Werror -I${GEN} -I${SRC}
  -I${SRC}/xdr/include -I${SRC}/runtime/include -I${CMOCKA_INC})
set(objs)
foreach(n basic lists)
  run("${n}_clnt.c with -Wcast-function-type-strict" ${CLANG} ${flags} ${san}
    -Wcast-function-type-strict -c ${GEN}/${n}_clnt.c -o ${WORK}/${n}_clnt.o)
  run("${n}_svc.c" ${CLANG} ${flags} ${san} -c ${GEN}/${n}_svc.c -o ${WORK}/${n}_svc.o)
  run("${n}_xdr.c" ${CLANG} ${flags} -c ${GEN}/${n}_xdr.c -o ${WORK}/${n}_xdr.o)
  list(APPEND objs ${WORK}/${n}_clnt.o ${WORK}/${n}_svc.o ${WORK}/${n}_xdr.o)
endforeach()
run("multi.c" ${CLANG} ${flags} ${san} -c ${SRC}/runtime/client/multi.c -o ${WORK}/multi.o)
run("test_idlc_calls.c" ${CLANG} ${flags} ${san} -c ${SRC}/tests/idlc/test_idlc_calls.c
  -o ${WORK}/test.o)
run("linking" ${CLANG} ${san} ${WORK}/test.o ${WORK}/multi.o ${objs} ${LIB} ${CMOCKA_LIB}
  -lssl -lcrypto -lgssapi_krb5 -lngtcp2_crypto_gnutls -lngtcp2 -lgnutls -lpthread
  -o ${WORK}/test_idlc_calls_fnsan)
run("test_idlc_calls under -fsanitize=function" ${WORK}/test_idlc_calls_fnsan)
message(STATUS "test_idlc_calls passed under -fsanitize=function")
