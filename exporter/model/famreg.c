/* Every metric name claimed in one scrape, across collectors. The suffixes
 * are OpenMetrics' (a counter x owns x, x_total, x_created), which also
 * covers the text format's names. */
#include "famreg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "names.h"

int famreg_init(struct famreg *r)
{
	memset(r, 0, sizeof(*r));
	return pthread_mutex_init(&r->lock, NULL) ? -ENOMEM : 0;
}

static size_t find(const struct famreg *r, const char *s, size_t n)
{
	size_t i = (size_t)hash_bytes(s, n, hash_seed()) & (r->cap - 1);
	while (r->name[i] && (strlen(r->name[i]) != n || memcmp(r->name[i], s, n)))
		i = (i + 1) & (r->cap - 1);
	return i;
}

static int grow(struct famreg *r)
{
	struct famreg bigger = {.cap = r->cap ? r->cap * 2 : 256};
	bigger.name = calloc(bigger.cap, sizeof(char *));
	if (!bigger.name)
		return -ENOMEM;
	for (size_t i = 0; i < r->cap; i++)
		if (r->name[i])
			bigger.name[find(&bigger, r->name[i], strlen(r->name[i]))] = r->name[i];
	free(r->name);
	r->name = bigger.name;
	r->cap = bigger.cap;
	return 0;
}

int famreg_claim(struct famreg *r, const char *base, size_t len, enum bs_metric_type type)
{
	char buf[NAMES_METRIC_MAX + 16];
	const char *const *sfx = names_type_suffixes(type);
	int rc = 0;

	if (len > NAMES_METRIC_MAX)
		return -EINVAL;
	memcpy(buf, base, len);
	pthread_mutex_lock(&r->lock);
	while ((r->used + 5) * 2 > r->cap)
		if ((rc = grow(r)) < 0)
			goto out_unlock;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < NAMES_SUFFIXES_MAX && sfx[k]; k++) {
			size_t sl = strlen(sfx[k]);
			memcpy(buf + len, sfx[k], sl);
			size_t i = find(r, buf, len + sl);
			if (pass == 0 && r->name[i]) {
				rc = -EEXIST;
				goto out_unlock;
			}
			if (pass == 1) {
				if (!(r->name[i] = strndup(buf, len + sl))) {
					rc = -ENOMEM;
					goto out_unlock;
				}
				r->used++;
			}
		}
	}
out_unlock:
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void famreg_free(struct famreg *r)
{
	for (size_t i = 0; i < r->cap; i++)
		free(r->name[i]);
	free(r->name);
	pthread_mutex_destroy(&r->lock);
	memset(r, 0, sizeof(*r));
}
