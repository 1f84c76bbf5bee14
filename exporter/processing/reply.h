/* Refusals of the /statistics/ interface (reply.c). */
#ifndef BS_REPLY_H
#define BS_REPLY_H

#include "stage.h"

/* stats(3)'s EFTYPE (a fetch of another data type), which Linux has not:
 * a code no errno takes. */
#define REPLY_EFTYPE (-4096)

/* The errno's name as stats(3) documents it ("EINVAL"), for -rc. */
const char *reply_errname(int rc);
/* Sets the status and appends "ENAME: why". */
void reply_fail(struct stage_reply *r, int status, int rc, const char *why);

#endif
