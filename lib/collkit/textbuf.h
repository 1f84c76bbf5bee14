/* A capped text buffer that formatted text is appended to: the landing
 * page, the /statistics/ interface's replies, the statistics' definition
 * and data files. */
#ifndef BS_TEXTBUF_H
#define BS_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

/* `failed` once an append found no memory or would pass `max` bytes (0:
 * no cap); the text is then incomplete. A zeroed one is empty. */
struct textbuf {
	char *p;
	size_t len, cap, max;
	bool failed;
};

void textbuf_free(struct textbuf *t);
/* Appends formatted text (grows it, up to max). */
void textbuf_printf(struct textbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
