/*
 * The TLS tests' certificates: made by tls_certs.sh (openssl) in a directory of the process's
 * own, removed at the end. RC_SOURCE_DIR must be defined (the test's CMake target does).
 */
#ifndef RT_CERTS_H
#define RT_CERTS_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Make the certificates in /tmp/rc-TAG.PID, whose path goes to dir (len bytes). 0, or -1 when
 * the script failed. */
static inline int rt_certs_make(char *dir, size_t len, const char *tag)
{
	char cmd[700];
	snprintf(dir, len, "/tmp/rc-%s.%d", tag, (int)getpid());
	snprintf(cmd, sizeof(cmd), "bash %s/tests/runtime/tls_certs.sh %s", RC_SOURCE_DIR, dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Remove them. 0, or -1. */
static inline int rt_certs_remove(const char *dir)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
