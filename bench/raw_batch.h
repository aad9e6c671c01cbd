/* raw-pingpong's batched UDP null-call servers (raw_batch.c): the kernel interfaces measured
 * side by side for issue 15. */
#ifndef RAW_BATCH_H
#define RAW_BATCH_H

#include <signal.h>
#include <stdbool.h>

/* Whether mode names a batched server: mmsg, offload, uring,
 * uring-offload, uring-ms. */
bool raw_batch_known(const char *mode);

/* Answer every null call arriving on the bound UDP socket fd in the given mode until *stop is
 * set. 0 when stopped; 1 if the mode's set-up fails; 2 for a mode this build lacks (the uring
 * modes need liburing). Messages go to stderr. */
int raw_batch_serve(int fd, const char *mode, volatile sig_atomic_t *stop);

#endif
