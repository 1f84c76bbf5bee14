/* A reply of the /statistics/ interface that refuses: stats(3)'s
 * errno names, as its man pages document them. */
#include "reply.h"

#include <errno.h>

const char *reply_errname(int rc)
{
	if (rc == REPLY_EFTYPE)
		return "EFTYPE";
	switch (-rc) {
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	case ESRCH:
		return "ESRCH";
	case EFBIG:
		return "EFBIG";
	case EEXIST:
		return "EEXIST";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case ENOMEM:
		return "ENOMEM";
	}
	return "EIO";
}

void reply_fail(struct stage_reply *r, int status, int rc, const char *why)
{
	r->status = status;
	textbuf_printf(&r->text, "%s: %s\n", reply_errname(rc), why);
}
