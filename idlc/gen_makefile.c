/*
 * idlc -- Makefile.NAME (idlc -a, -Sm): builds the samples NAME_client and NAME_server with
 * make, rpcgen -Sm's counterpart: idlc from PATH generates NAME.h, NAME_xdr.c, NAME_clnt.c
 * and NAME_svc.c from NAME.x, and pkg-config gives remotecall's compiler and linker flags
 * (called by the shell in the commands, so any POSIX make will do). `clean` removes what it
 * built and generated, not the samples.
 */
#include "idlc.h"

static const char makefile_text[] =
	"# Makefile.@N@ -- written by idlc -a (or -Sm) from @X@: builds the sample\n"
	"# client @N@_client and server @N@_server. Needs idlc on PATH and pkg-config\n"
	"# knowing remotecall (PKG_CONFIG_PATH). In the folder holding @X@:\n"
	"#\n"
	"#   make -f Makefile.@N@          generate the code, build both programs\n"
	"#   make -f Makefile.@N@ clean    remove the programs, objects and generated files\n"
	"#\n"
	"# (clean leaves @N@_client.c and @N@_server.c, which are yours.)\n"
	"\n"
	"IDLC = idlc\n"
	"IDLCFLAGS =@F@\n"
	"CFLAGS = -g -O2 -Wall\n"
	"RC_CFLAGS = `pkg-config --cflags remotecall`\n"
	"RC_LIBS = `pkg-config --libs remotecall`\n"
	"\n"
	"GENERATED = @N@.h @N@_xdr.c @N@_clnt.c @N@_svc.c\n"
	"CLIENT_OBJS = @N@_client.o @N@_clnt.o @N@_xdr.o\n"
	"SERVER_OBJS = @N@_server.o @N@_svc.o @N@_xdr.o\n"
	"\n"
	"all: @N@_client @N@_server\n"
	"\n"
	"@N@_client: $(CLIENT_OBJS)\n"
	"\t$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLIENT_OBJS) $(RC_LIBS) $(LDLIBS)\n"
	"\n"
	"@N@_server: $(SERVER_OBJS)\n"
	"\t$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(SERVER_OBJS) $(RC_LIBS) $(LDLIBS)\n"
	"\n"
	"$(CLIENT_OBJS) $(SERVER_OBJS): @N@.h\n"
	"\n"
	".c.o:\n"
	"\t$(CC) $(CFLAGS) $(CPPFLAGS) $(RC_CFLAGS) -c $<\n"
	"\n"
	"$(GENERATED): @X@\n"
	"\t$(IDLC) $(IDLCFLAGS) @X@\n"
	"\n"
	"clean:\n"
	"\trm -f @N@_client @N@_server $(CLIENT_OBJS) $(SERVER_OBJS) $(GENERATED)\n"
	"\n"
	".PHONY: all clean\n";

/* idlc_gen_makefile -- Makefile.NAME (see the top of this file). */
void
idlc_gen_makefile(idlc_gen *g)
{
	idlc_expand(g, g->out, makefile_text);
}
