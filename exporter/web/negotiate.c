/* Picks the exposition format from Accept and gzip from Accept-Encoding
 * (RFC 9110 q-values). Both walk the header once with no allocation, so a
 * hostile header costs its length and nothing more. */
#include "negotiate.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct span {
	const char *p;
	size_t n;
};

static struct span trim(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return (struct span){p, (size_t)(end - p)};
}

static bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && strncasecmp(s.p, lit, s.n) == 0;
}

/* q from "0", "0.5", "1", "1.000"; -1 when malformed (the element is ignored). */
static double parse_q(struct span v)
{
	if (v.n == 0 || v.n > 5 || (v.p[0] != '0' && v.p[0] != '1'))
		return -1;
	double q = v.p[0] - '0', scale = 0.1;
	if (v.n > 1 && v.p[1] != '.')
		return -1;
	for (size_t i = 2; i < v.n; i++, scale /= 10) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return -1;
		q += (v.p[i] - '0') * scale;
	}
	return q > 1 ? -1 : q;
}

struct element {
	struct span type;    /* "text/plain", "gzip", ... */
	struct span version; /* the version= parameter, if any */
	double q;
};

/* Splits "type;a=b;q=0.5" into its parts. */
static struct element parse_element(const char *p, const char *end)
{
	struct element e = {.q = 1};
	const char *semi = memchr(p, ';', (size_t)(end - p));

	e.type = trim(p, semi ? semi : end);
	while (semi) {
		const char *start = semi + 1;
		semi = memchr(start, ';', (size_t)(end - start));
		struct span param = trim(start, semi ? semi : end);
		const char *eq = memchr(param.p, '=', param.n);
		if (!eq)
			continue;
		struct span key = trim(param.p, eq);
		struct span val = trim(eq + 1, param.p + param.n);
		if (span_is(key, "q"))
			e.q = parse_q(val);
		else if (span_is(key, "version"))
			e.version = val;
	}
	return e;
}

/* Parses the element at *cursor and moves past it; false at the end. */
static bool next_element(const char **cursor, struct element *e)
{
	const char *p = *cursor;
	if (!p || !*p)
		return false;
	const char *end = p + strcspn(p, ",");
	*e = parse_element(p, end);
	*cursor = *end ? end + 1 : end;
	return true;
}

enum expo_format negotiate_format(const char *accept)
{
	struct element e;
	double best_om = -1, best_text = -1;

	while (next_element(&accept, &e)) {
		if (e.q <= 0)
			continue;
		if (span_is(e.type, "application/openmetrics-text")) {
			if (e.q > best_om)
				best_om = e.q;
		} else if (span_is(e.type, "text/plain") || span_is(e.type, "*/*") ||
			   span_is(e.type, "text/*")) {
			if (e.version.n && !span_is(e.version, "0.0.4") &&
			    span_is(e.type, "text/plain"))
				continue; /* a text version we do not write */
			if (e.q > best_text)
				best_text = e.q;
		}
	}
	return best_om > 0 && best_om >= best_text ? EXPO_OPENMETRICS : EXPO_TEXT;
}

bool negotiate_gzip(const char *accept_encoding)
{
	struct element e;
	double gzip = -1, star = -1;

	while (next_element(&accept_encoding, &e)) {
		if (span_is(e.type, "gzip") || span_is(e.type, "x-gzip"))
			gzip = e.q > gzip ? e.q : gzip;
		else if (span_is(e.type, "*"))
			star = e.q > star ? e.q : star;
	}
	return gzip > 0 || (gzip < 0 && star > 0);
}
