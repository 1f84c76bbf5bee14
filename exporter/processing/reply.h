/* Refusals of the /statistics/ interface (reply.c). */
#ifndef BS_REPLY_H
#define BS_REPLY_H

#include "stage.h"

/* The errno's name as stats(3) documents it ("EINVAL"), for -rc. */
const char *reply_errname(int rc);
/* Sets the status and appends "ENAME: why". */
void reply_fail(struct stage_reply *r, int status, int rc, const char *why);

#endif
