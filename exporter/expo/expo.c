/* Exposition writer: family headers and sample lines in Prometheus text 0.0.4
 * or OpenMetrics 1.0.0. One sample line is one reserve, a few memcpys, one commit. */
#include "expo.h"

#include <errno.h>
#include <string.h>

#include "fmt.h"
#include "names.h"
#include "sink.h"

static const char *const om_type_name[] = {
    [BS_COUNTER] = "counter", [BS_GAUGE] = "gauge", [BS_HISTOGRAM] = "histogram",
    [BS_SUMMARY] = "summary", [BS_INFO] = "info",   [BS_STATESET] = "stateset",
    [BS_UNKNOWN] = "unknown",
};

/* Text 0.0.4 has no info, stateset or unknown: they travel as gauges and untyped. */
static const char *const text_type_name[] = {
    [BS_COUNTER] = "counter", [BS_GAUGE] = "gauge", [BS_HISTOGRAM] = "histogram",
    [BS_SUMMARY] = "summary", [BS_INFO] = "gauge",  [BS_STATESET] = "gauge",
    [BS_UNKNOWN] = "untyped",
};

/* Copies n bytes, usually few: up to 32 by two fixed-size moves that
 * overlap (inlined, no call), never reading or writing outside [0, n). */
static char *put(char *p, const char *s, size_t n)
{
	if (n > 32)
		memcpy(p, s, n);
	else if (n >= 16) {
		memcpy(p, s, 16);
		memcpy(p + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(p, s, 8);
		memcpy(p + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(p, s, 4);
		memcpy(p + n - 4, s + n - 4, 4);
	} else if (n > 0) {
		p[0] = s[0];
		p[n / 2] = s[n / 2];
		p[n - 1] = s[n - 1];
	}
	return p + n;
}

#define PUTS(p, lit) put((p), (lit), sizeof(lit) - 1)

/* Text format names the family after its samples: x_total, x_info. */
static const char *text_family_suffix(enum bs_metric_type t)
{
	if (t == BS_COUNTER)
		return "_total";
	if (t == BS_INFO)
		return "_info";
	return "";
}

static char *meta_line(char *p, const char *kind, size_t kind_len, const struct expo_family *fam,
		       const char *suffix)
{
	p = put(p, kind, kind_len);
	p = put(p, fam->base, fam->base_len);
	p = put(p, suffix, strlen(suffix));
	*p++ = ' ';
	return p;
}

int expo_family_header(struct sink *s, enum expo_format f, const struct expo_family *fam,
		       struct names_repairs *repaired)
{
	size_t unit_len = fam->unit ? strlen(fam->unit) : 0;
	size_t need = 3 * (fam->base_len + 16) + 3 * fam->help_len + unit_len + 64;
	char *p = sink_reserve(s, need);
	if (!p)
		return -ENOBUFS;

	bool om = f == EXPO_OPENMETRICS;
	const char *suffix = om ? "" : text_family_suffix(fam->type);
	const char *type = om ? om_type_name[fam->type] : text_type_name[fam->type];

	p = meta_line(p, "# HELP ", 7, fam, suffix);
	bool cut;
	p = names_escape(p, fam->help, fam->help_len, om, repaired, &cut);
	*p++ = '\n';
	p = meta_line(p, "# TYPE ", 7, fam, suffix);
	p = put(p, type, strlen(type));
	*p++ = '\n';
	if (om && unit_len) {
		p = meta_line(p, "# UNIT ", 7, fam, suffix);
		p = put(p, fam->unit, unit_len);
		*p++ = '\n';
	}
	sink_commit(s, p);
	return 0;
}

static char *put_value(char *p, struct bs_value v)
{
	switch (v.kind) {
	case BS_VAL_U64:
		return fmt_u64(p, v.u);
	case BS_VAL_I64:
		return fmt_i64(p, v.i);
	case BS_VAL_F64:
		return fmt_f64(p, v.f);
	}
	return p;
}

int expo_line(struct sink *s, const char *name, size_t name_len, const char *suffix,
	      size_t suffix_len, const char *labels, size_t labels_len,
	      const struct expo_extra *extra, struct bs_value v)
{
	size_t need = name_len + suffix_len + labels_len + FMT_NUM_MAX + 8;
	if (extra)
		need += extra->name_len + extra->value_len + 4;
	char *p = sink_reserve(s, need);
	if (!p)
		return -ENOBUFS;

	p = put(p, name, name_len);
	p = put(p, suffix, suffix_len);
	if (labels_len || extra) {
		*p++ = '{';
		if (labels_len) /* labels is NULL for a series without labels */
			p = put(p, labels, labels_len);
		if (extra) {
			if (labels_len)
				*p++ = ',';
			p = put(p, extra->name, extra->name_len);
			*p++ = '=';
			*p++ = '"';
			p = put(p, extra->value, extra->value_len);
			*p++ = '"';
		}
		*p++ = '}';
	}
	*p++ = ' ';
	p = put_value(p, v);
	*p++ = '\n';
	sink_commit(s, p);
	return 0;
}

/* In one reservation: the lines differ only in le and the count, so each
 * starts as a copy of the first's start (name, labels, `le="`), and a
 * histogram of 33 buckets costs one check of the sink, not 33. */
int expo_buckets(struct sink *s, const char *name, size_t name_len, const char *labels,
		 size_t labels_len, const struct lebounds *b, const uint64_t *count, size_t n,
		 bool add_inf, uint64_t total)
{
	size_t head_len = name_len + 8 + labels_len + (labels_len ? 1 : 0) + 4;
	size_t lines = n + add_inf, bounds_len = n ? b->end[n - 1] : 0;
	char *p = sink_reserve(s, lines * (head_len + 3 + FMT_NUM_MAX + 1) + bounds_len + 4);
	uint64_t cum = 0;

	if (!p)
		return -ENOBUFS;
	const char *head = p;
	p = put(p, name, name_len);
	p = PUTS(p, "_bucket{");
	if (labels_len) {
		p = put(p, labels, labels_len);
		*p++ = ',';
	}
	p = PUTS(p, "le=\"");
	for (size_t i = 0; i < lines; i++) {
		size_t le_len = 4;
		const char *le = i < n ? lebounds_text(b, i, &le_len) : "+Inf";
		if (i)
			p = put(p, head, head_len);
		p = put(p, le, le_len);
		p = PUTS(p, "\"} ");
		cum = i < n ? cum + count[i] : total;
		p = fmt_u64(p, cum);
		*p++ = '\n';
	}
	sink_commit(s, p);
	return 0;
}

int expo_eof(struct sink *s, enum expo_format f)
{
	if (f != EXPO_OPENMETRICS)
		return 0;
	char *p = sink_reserve(s, 8);
	if (!p)
		return -ENOBUFS;
	sink_commit(s, PUTS(p, "# EOF\n"));
	return 0;
}
