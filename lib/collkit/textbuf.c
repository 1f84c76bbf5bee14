/* A capped text buffer, grown by vsnprintf's answer. */
#include "textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define TEXT_CHUNK 4096

void textbuf_free(struct textbuf *t)
{
	free(t->p);
	t->p = NULL;
	t->len = t->cap = 0;
}

/* Grown here rather than by a growarr: the exporter makes and reads this
 * struct (p, len, max) itself, and growth is sized by vsnprintf's answer. */
void textbuf_printf(struct textbuf *t, const char *fmt, ...)
{
	va_list ap;

	for (int tries = 0; tries < 2 && !t->failed; tries++) {
		size_t room = t->cap - t->len;
		va_start(ap, fmt);
		int n = vsnprintf(t->p ? t->p + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
		} else if ((size_t)n < room) {
			t->len += (size_t)n;
			return;
		} else {
			size_t cap = t->cap + (size_t)n + 1 + TEXT_CHUNK;
			char *p = t->max && cap > t->max + 1 ? NULL : realloc(t->p, cap);
			if (!p)
				t->failed = true;
			else
				t->p = p, t->cap = cap;
		}
	}
}
