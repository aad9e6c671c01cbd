/* Stand-in for Sun's <rpc/xdr.h> (see README in this folder): its basic types only. */
#include <rpc/types.h>
