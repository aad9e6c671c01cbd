# gen_xdr_table.cmake -- the table of xdr_T routines declared in an idlc header
# (run at build time: cmake -DHEADER=NAME.h -DNAME=NAME -DOUT=NAME_table.c -P gen_xdr_table.cmake).
file(STRINGS ${HEADER} decls REGEX "^bool xdr_[A-Za-z0-9_]+\\(rc_xdr \\*xdrs, [A-Za-z0-9_ ]+ \\*objp\\);")
set(body "/* generated from ${NAME}.h by gen_xdr_table.cmake */\n#include \"${NAME}.h\"\n#include \"fuzz_xdr_table.h\"\n\nconst fuzz_xdr_type fuzz_xdr_${NAME}[] = {\n")
foreach(d ${decls})
  string(REGEX REPLACE "^bool xdr_([A-Za-z0-9_]+)\\(rc_xdr \\*xdrs, ([A-Za-z0-9_ ]+) \\*objp\\);.*" "\\1;\\2" m "${d}")
  list(GET m 0 fn)
  list(GET m 1 ty)
  string(APPEND body "\t{\"${NAME}\", \"${fn}\", (rc_xdrproc)xdr_${fn}, sizeof(${ty})},\n")
endforeach()
string(APPEND body "\t{0, 0, 0, 0},\n};\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
