/* PromQL's series selector, as users of this exporter already write it:
 * `name{label="v", label!="v", label=~"re", label!~"re"}`, or `{...}` with
 * __name__ among the matchers. Regular expressions are POSIX extended and,
 * as in PromQL, match the whole value. */
#ifndef BS_SELECTOR_H
#define BS_SELECTOR_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include <binstat/collector.h>

#define SELECTOR_MATCHERS_MAX 16
#define SELECTOR_TEXT_MAX 1024

enum selector_op { SEL_EQ, SEL_NE, SEL_RE, SEL_NRE };

struct selector_matcher {
	char *label; /* "__name__" for the metric name */
	char *value;
	enum selector_op op;
	regex_t re; /* SEL_RE and SEL_NRE */
};

struct selector {
	struct selector_matcher m[SELECTOR_MATCHERS_MAX];
	size_t n;
};

/* Parses text; -EINVAL with a reason in err. A selector must name at
 * least one matcher that a missing label fails, so `{}` (everything) and
 * `{a=""}` are refused, as Prometheus refuses them. */
int selector_parse(struct selector *s, const char *text, char *err, size_t errlen);
void selector_free(struct selector *s);
/* Whether the metric name alone can match (the __name__ matchers). */
bool selector_match_name(const struct selector *s, const char *name);
/* Whether the labels alone can match (every matcher but __name__'s). */
bool selector_match_labels(const struct selector *s, const struct bs_label *labels, size_t n);
/* Whether the series `name` with labels[0..n) matches; a label the series
 * lacks has the value "". */
bool selector_match(const struct selector *s, const char *name, const struct bs_label *labels,
		    size_t n);

#endif
