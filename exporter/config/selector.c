/* The series selector's parser and matcher. The text comes from the
 * configuration: it is bounded, and every regular expression is compiled
 * once, anchored at both ends. */
#include "selector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RE_MAX 512
#define RE_DEPTH_MAX 8

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

/* A double-quoted string with PromQL's escapes \" \\ \n \t. */
static const char *quoted(const char *p, char **out)
{
	char *v = malloc(strlen(p) + 1);
	size_t n = 0;

	if (!v)
		return NULL;
	if (*p++ != '"')
		goto err_free;
	while (*p && *p != '"') {
		char c = *p++;
		if (c == '\\') {
			c = *p++;
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (c != '"' && c != '\\')
				goto err_free;
		}
		v[n++] = c;
	}
	if (*p != '"')
		goto err_free;
	v[n] = '\0';
	*out = v;
	return p + 1;
err_free:
	free(v);
	return NULL;
}

/* glibc's regcomp copies a repeated group once per repetition, and the
 * copies of nested ones multiply: `a+++...` or `(a{99}){99}` takes
 * gigabytes. So no bounded repetition, no quantifier right after another,
 * and groups at most RE_DEPTH_MAX deep (2^8 copies at worst). */
static const char *regex_unsafe(const char *re)
{
	bool after_quantifier = false;
	int depth = 0;

	for (const char *p = re; *p; p++) {
		bool quantifier = *p == '*' || *p == '+' || *p == '?';
		if (*p == '{')
			return "bounded repetition {m,n} is not supported";
		if (quantifier && after_quantifier)
			return "a quantifier may not follow another";
		if (*p == '(' && ++depth > RE_DEPTH_MAX)
			return "groups may nest at most 8 deep";
		if (*p == ')' && depth > 0)
			depth--;
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '[') { /* a bracket expression: its characters are literal */
			const char *q = p + 1 + (p[1] == '^');
			q += *q == ']';
			while (*q && *q != ']')
				q++;
			if (!*q)
				return NULL; /* unterminated: regcomp says so */
			p = q;
		}
		after_quantifier = quantifier;
	}
	return NULL;
}

static int add(struct selector *s, const char *label, size_t len, enum selector_op op, char *value,
	       char *err, size_t errlen)
{
	struct selector_matcher *m;
	char re[RE_MAX + 8];

	if (!value) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (s->n == SELECTOR_MATCHERS_MAX) {
		snprintf(err, errlen, "at most %d matchers", SELECTOR_MATCHERS_MAX);
		goto err_free_value;
	}
	m = &s->m[s->n];
	*m = (struct selector_matcher){.op = op, .value = value};
	if (!(m->label = strndup(label, len)))
		goto err_free_value;
	if (op == SEL_RE || op == SEL_NRE) {
		if (strlen(value) > RE_MAX) {
			snprintf(err, errlen, "a regular expression of at most %d bytes", RE_MAX);
			goto err_free_label;
		}
		const char *unsafe = regex_unsafe(value);
		if (unsafe) {
			snprintf(err, errlen, "regular expression \"%.64s\": %s", value, unsafe);
			goto err_free_label;
		}
		snprintf(re, sizeof(re), "^(%s)$", value);
		int rc = regcomp(&m->re, re, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char why[128];
			regerror(rc, &m->re, why, sizeof(why));
			snprintf(err, errlen, "bad regular expression \"%s\": %s", value, why);
			goto err_free_label;
		}
	}
	s->n++;
	return 0;
err_free_label:
	free(m->label);
err_free_value:
	free(value);
	return -EINVAL;
}

static bool matches(const struct selector_matcher *m, const char *v)
{
	switch (m->op) {
	case SEL_EQ:
		return strcmp(v, m->value) == 0;
	case SEL_NE:
		return strcmp(v, m->value) != 0;
	case SEL_RE:
		return regexec(&m->re, v, 0, NULL, 0) == 0;
	case SEL_NRE:
		return regexec(&m->re, v, 0, NULL, 0) != 0;
	}
	return false;
}

static int parse_matchers(struct selector *s, const char *p, char *err, size_t errlen)
{
	p = skip_blank(p + 1); /* after '{' */
	while (*p != '}') {
		const char *label = p;
		enum selector_op op;
		char *value;

		while (name_char(*p, p == label))
			p++;
		size_t len = (size_t)(p - label);
		p = skip_blank(p);
		if (len == 0) {
			snprintf(err, errlen, "a label name expected at \"%.20s\"", p);
			return -EINVAL;
		}
		if (p[0] == '=' && p[1] == '~')
			op = SEL_RE, p += 2;
		else if (p[0] == '!' && p[1] == '~')
			op = SEL_NRE, p += 2;
		else if (p[0] == '!' && p[1] == '=')
			op = SEL_NE, p += 2;
		else if (p[0] == '=')
			op = SEL_EQ, p += 1;
		else {
			snprintf(err, errlen, "=, !=, =~ or !~ expected at \"%.20s\"", p);
			return -EINVAL;
		}
		if (!(p = quoted(skip_blank(p), &value))) {
			snprintf(err, errlen, "a double-quoted value expected for \"%.*s\"",
				 (int)len, label);
			return -EINVAL;
		}
		if (add(s, label, len, op, value, err, errlen) < 0)
			return -EINVAL;
		p = skip_blank(p);
		if (*p == ',')
			p = skip_blank(p + 1);
		else if (*p != '}') {
			snprintf(err, errlen, ", or } expected at \"%.20s\"", p);
			return -EINVAL;
		}
	}
	if (*skip_blank(p + 1)) {
		snprintf(err, errlen, "nothing may follow the closing }");
		return -EINVAL;
	}
	return 0;
}

int selector_parse(struct selector *s, const char *text, char *err, size_t errlen)
{
	const char *p = skip_blank(text), *name = p;
	int rc;

	memset(s, 0, sizeof(*s));
	if (strlen(text) > SELECTOR_TEXT_MAX) {
		snprintf(err, errlen, "a selector of at most %d bytes", SELECTOR_TEXT_MAX);
		return -EINVAL;
	}
	while (name_char(*p, p == name))
		p++;
	if (p > name && (rc = add(s, "__name__", 8, SEL_EQ, strndup(name, (size_t)(p - name)), err,
				  errlen)) < 0)
		goto err_free;
	p = skip_blank(p);
	if (*p == '{' && (rc = parse_matchers(s, p, err, errlen)) < 0)
		goto err_free;
	if (*p && *p != '{') {
		snprintf(err, errlen, "a metric name or { expected at \"%.20s\"", p);
		rc = -EINVAL;
		goto err_free;
	}
	for (size_t i = 0; i < s->n; i++)
		if (!matches(&s->m[i], ""))
			return 0;
	snprintf(err, errlen, "the selector must have a matcher that an empty value fails");
	rc = -EINVAL;
err_free:
	selector_free(s);
	return rc;
}

void selector_free(struct selector *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->m[i].op == SEL_RE || s->m[i].op == SEL_NRE)
			regfree(&s->m[i].re);
		free(s->m[i].label);
		free(s->m[i].value);
	}
	s->n = 0;
}

bool selector_match_name(const struct selector *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->m[i].label, "__name__") == 0 && !matches(&s->m[i], name))
			return false;
	return true;
}

bool selector_match_labels(const struct selector *s, const struct bs_label *labels, size_t n)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct selector_matcher *m = &s->m[i];
		const char *v = "";
		if (strcmp(m->label, "__name__") == 0)
			continue;
		for (size_t k = 0; k < n; k++)
			if (strcmp(labels[k].name, m->label) == 0) {
				v = labels[k].value;
				break;
			}
		if (!matches(m, v))
			return false;
	}
	return true;
}

bool selector_match(const struct selector *s, const char *name, const struct bs_label *labels,
		    size_t n)
{
	return selector_match_name(s, name) && selector_match_labels(s, labels, n);
}
