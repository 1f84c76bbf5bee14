/* Series keys for the processing, by the emitter's rules (names.c's
 * checks and escaping, emitter.c's family check). */
#include "serieskey.h"

#include <errno.h>
#include <string.h>

#include "emitter.h"
#include "names.h"

bool serieskey_family_valid(const struct bs_family *f)
{
	if (!f || !f->name)
		return false;
	size_t n = strlen(f->name);
	return emitter_family_check(f, emitter_family_base_len(f->name, n, f->type)) == 0;
}

static bool name_repeated(const char *const *at, const size_t *len, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (len[j] == len[i] && memcmp(at[j], at[i], len[i]) == 0)
			return true;
	return false;
}

ssize_t serieskey_write(char *key, size_t max, const char *name, const struct bs_label *labels,
			size_t n)
{
	const char *at[EMITTER_MAX_LABELS];
	size_t len[EMITTER_MAX_LABELS], nl = strlen(name);
	char *p = key, *end = key + max;
	struct names_repairs repaired = {0};

	if (n > EMITTER_MAX_LABELS)
		return -EINVAL;
	if (nl + 2 >= max)
		return -E2BIG;
	memcpy(p, name, nl);
	p += nl;
	*p++ = '{';
	for (size_t i = 0; i < n; i++) {
		/* A name, `="`, the value's escape (3 bytes a byte read, and 3
		 * more), `"`, and `,` or `}` with the NUL. */
		if (!labels[i].name || !labels[i].value)
			return -EINVAL;
		if (end - p < NAMES_LABEL_NAME_MAX + 16)
			return -E2BIG;
		char *name_end = names_copy_label(p, labels[i].name);
		if (!name_end)
			return -EINVAL;
		at[i] = p;
		len[i] = (size_t)(name_end - p);
		if (name_repeated(at, len, i))
			return -EINVAL;
		p = name_end;
		*p++ = '=';
		*p++ = '"';
		size_t room = (size_t)(end - p), read_max = (room - 8) / 3;
		bool cut;
		p = names_escape(p, labels[i].value, read_max, true, &repaired, &cut);
		if (cut)
			return -E2BIG;
		*p++ = '"';
		if (i + 1 < n)
			*p++ = ',';
	}
	*p++ = '}';
	*p = '\0';
	return p - key;
}
