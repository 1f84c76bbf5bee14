/* The emitter a collector writes into: it enforces the metric model's rules
 * (names, label sets, duplicates, value ranges) and passes what is valid to the
 * exposition writer. Whatever it refuses is counted by reason, never written. */
#include "emitter.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blockpool.h"
#include "fmt.h"
#include "hash.h"
#include "monoclock.h"
#include "sink.h"

/* Reasons are few and fixed per collector; past the table's size (a collector
 * inventing reasons) everything lands in "other", keeping cardinality bounded. */
void drops_add(struct emitter_drop *tab, size_t *ntab, const char *reason, uint64_t n)
{
	for (size_t i = 0; i < *ntab; i++) {
		if (strcmp(tab[i].reason, reason) == 0) {
			tab[i].n += n;
			return;
		}
	}
	struct emitter_drop *d = &tab[EMITTER_MAX_REASONS - 1];
	if (*ntab < EMITTER_MAX_REASONS - 1)
		d = &tab[*ntab];
	else
		reason = "other";
	if (*ntab < EMITTER_MAX_REASONS) {
		memcpy(d->reason, reason, strlen(reason) + 1);
		d->n = 0;
		(*ntab)++;
	}
	d->n += n;
}

static void emitter_drop(struct bs_emitter *pub, const char *reason, uint64_t n)
{
	struct emitter *e = (struct emitter *)pub;

	if (!reason || !names_snake_valid(reason, strlen(reason), EMITTER_REASON_MAX))
		reason = "invalid_reason";
	drops_add(e->drops, &e->ndrops, reason, n);
}

static int refuse(struct emitter *e, const char *reason, int err)
{
	emitter_drop(&e->pub, reason, 1);
	return err;
}

static bool emitter_expired(struct bs_emitter *pub)
{
	struct emitter *e = (struct emitter *)pub;
	return e->deadline_ns && monoclock_ns() > e->deadline_ns;
}

size_t emitter_family_base_len(const char *name, size_t n, enum bs_metric_type t)
{
	if (t == BS_COUNTER && names_has_suffix(name, n, "_total"))
		return n - 6;
	if (t == BS_INFO && names_has_suffix(name, n, "_info"))
		return n - 5;
	return n;
}

int emitter_family_check(const struct bs_family *f, size_t base_len)
{
	size_t n = strlen(f->name);
	if ((unsigned)f->type > BS_UNKNOWN || !names_metric_valid(f->name, n) || base_len == 0)
		return -EINVAL;
	/* A stateset's family name is also the label holding the state. */
	if (f->type == BS_STATESET && !names_label_valid(f->name, base_len))
		return -EINVAL;
	if (f->unit && f->unit[0]) {
		size_t ul = strlen(f->unit);
		if (!names_snake_valid(f->unit, ul, EMITTER_UNIT_MAX) || f->type == BS_INFO ||
		    f->type == BS_STATESET || base_len < ul + 2 ||
		    f->name[base_len - ul - 1] != '_' ||
		    memcmp(f->name + base_len - ul, f->unit, ul) != 0)
			return -EINVAL;
	}
	return 0;
}

static int emitter_family(struct bs_emitter *pub, const struct bs_family *f)
{
	struct emitter *e = (struct emitter *)pub;

	e->has_family = false;
	e->header_done = false;
	e->family_prefix.decided = false;
	seriesset_clear(&e->series);
	prefixset_clear(&e->byprefix);
	if (!f || !f->name)
		return refuse(e, "invalid_family", -EINVAL);
	size_t n = strlen(f->name);
	size_t base_len = emitter_family_base_len(f->name, n, f->type);
	if (emitter_family_check(f, base_len) < 0)
		return refuse(e, "invalid_family", -EINVAL);
	int rc = famreg_claim(e->reg, f->name, base_len, f->type);
	if (rc == -EEXIST)
		return refuse(e, "duplicate_family", rc);
	if (rc < 0)
		return refuse(e, "out_of_memory", rc);

	memcpy(e->base, f->name, base_len);
	e->base[base_len] = '\0';
	e->base_len = base_len;
	e->type = f->type;
	e->unit[0] = '\0';
	if (f->unit)
		memcpy(e->unit, f->unit, strlen(f->unit) + 1);
	const char *help = f->help ? f->help : "";
	e->help_len = names_utf8_cut(help, strlen(help), NAMES_HELP_MAX);
	memcpy(e->help, help, e->help_len);
	e->help[e->help_len] = '\0';
	e->has_family = true;
	return 0;
}

static void report_repairs(struct emitter *e, const struct names_repairs *r)
{
	if (r->utf8)
		emitter_drop(&e->pub, "invalid_utf8_repaired", r->utf8);
	if (r->bidi)
		emitter_drop(&e->pub, "bidi_control_replaced", r->bidi);
}

static int write_header(struct emitter *e)
{
	struct expo_family fam = {
	    .base = e->base,
	    .base_len = e->base_len,
	    .type = e->type,
	    .unit = e->unit,
	    .help = e->help,
	    .help_len = e->help_len,
	};
	struct names_repairs repaired = {0};
	if (expo_family_header(e->sink, e->format, &fam, &repaired) < 0)
		return -ENOBUFS;
	report_repairs(e, &repaired);
	e->header_done = true;
	return 0;
}

/* Room for the longest label block a series may have. Allocated once per
 * emitter, a mapping of its own (memtrim.c): only the pages a scrape
 * touches become resident. */
#define SCRATCH_SIZE (EMITTER_MAX_LABELS * (NAMES_LABEL_NAME_MAX + 3 * NAMES_LABEL_VALUE_MAX + 16))

struct labels_out {
	char *p;       /* where the next label goes in scratch */
	uint64_t hash; /* sum of the labels' hashes: independent of their order */
	struct names_repairs repaired;
	unsigned truncated;
};

/* Writes the name of label i at p, and returns its end; NULL if it is
 * invalid or a name before it. The names before it are the known ones
 * (each was found known or became so), so a name known at i is valid and
 * distinct from them. Another name is checked, then known at i, and the
 * names known after i, checked against the old one, are forgotten. */
static char *name_write(struct emitter *e, char *p, const char *name, size_t i)
{
	size_t len = e->names.len[i];

	if (i < e->names.known && names_same(name, e->names.text[i], len)) {
		/* Whole words: scratch has room past every name. */
		for (size_t j = 0; j < len; j += 8)
			memcpy(p + j, e->names.text[i] + j, 8);
	} else {
		char *end = names_copy_label(p, name);
		if (!end)
			return NULL;
		len = (size_t)(end - p);
		for (size_t j = 0; j < i; j++)
			if (e->name_len[j] == len && memcmp(e->name_at[j], p, len) == 0)
				return NULL;
		memcpy(e->names.text[i], p, len);
		e->names.text[i][len] = '\0';
		e->names.len[i] = len;
		e->names.key[i] = hash_bytes(p, len, hash_seed());
		e->names.known = i + 1;
		if (i < e->family_prefix.n)
			e->family_prefix.renamed = true;
	}
	e->name_at[i] = p;
	e->name_len[i] = len;
	return p + len;
}

/* Writes labels[0..n) as labels `first` on of the block in scratch: one
 * pass over each name and value, each name checked against every one
 * before it. Returns NULL, or the reason to refuse them. `reserved` is the
 * label the type itself adds (le, quantile, a stateset's name). */
static const char *labels_write(struct emitter *e, const struct bs_label *labels, size_t n,
				size_t first, const char *reserved, struct labels_out *o)
{
	char *p = o->p;

	for (size_t k = 0; k < n; k++) {
		size_t i = first + k;
		if (i)
			*p++ = ',';
		char *start = p;
		if (!labels[k].name || !labels[k].value)
			return "invalid_label";
		char *end = name_write(e, p, labels[k].name, i);
		if (!end || (reserved && strcmp(labels[k].name, reserved) == 0))
			return "invalid_label";
		p = end;
		*p++ = '=';
		*p++ = '"';
		bool cut;
		p = names_escape(p, labels[k].value, NAMES_LABEL_VALUE_MAX, true, &o->repaired,
				 &cut);
		o->truncated += cut;
		*p++ = '"';
		e->written[i] = (struct seriesset_label){start, (size_t)(p - start)};
	}
	/* Hashed once all are written: text read back right after its bytes
	 * were stored one by one stalls (store forwarding fails). */
	for (size_t k = 0; k < n; k++) {
		size_t i = first + k, skip = e->name_len[i] + 2; /* name=" */
		o->hash += hash_bytes(e->written[i].text + skip, e->written[i].len - skip - 1,
				      e->names.key[i]);
	}
	o->p = p;
	return NULL;
}

static bool prefix_names(const struct emitter *e, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < e->prefix.n; i++)
		if (e->name_len[i] == len && memcmp(e->name_at[i], name, len) == 0)
			return true;
	return false;
}

/* Adds the series whose labels are e->written[0..first + n) (the prefix's,
 * then its own, hashing to own_hash) to the family's series: by prefix
 * while every series so far came under a prefix of the first one's label
 * names (prefixset.c), else all in the flat set, where a family that
 * changes shape moves what it held. The prefix's names are the first
 * known names (name_write), so they are the first series' while none of
 * those changed. Since both sets compare the same label sets, a series is
 * found as a duplicate however it was split. Returns 1 if added, 0 if
 * already there, -ENOMEM. */
static int series_add(struct emitter *e, uint64_t own_hash, uint64_t h, size_t first, size_t n)
{
	struct emitter_family_prefix *fp = &e->family_prefix;

	if (!fp->decided) {
		fp->decided = true;
		fp->by_prefix = first > 0;
		fp->n = first;
		fp->renamed = false;
	}
	if (fp->by_prefix) {
		if (first == fp->n && !fp->renamed) {
			if (!e->byprefix.cur &&
			    prefixset_enter(&e->byprefix, e->prefix.hash, e->written, first) < 0)
				return -ENOMEM;
			return prefixset_add(&e->byprefix, own_hash, e->written + first, n);
		}
		if (prefixset_move(&e->byprefix, &e->series) < 0)
			return -ENOMEM;
		fp->by_prefix = false;
	}
	return seriesset_add(&e->series, h, e->written, first + n);
}

/* Scratch freed waits here for the next emitter: mapped and unmapped
 * anew for each emitter of each scrape, it made a scrape of 1,000 series
 * cost a fifth more CPU. */
static struct blockpool scratch_pool = BLOCKPOOL_INIT(BLOCKPOOL_MAX, free);

static bool scratch_ready(struct emitter *e)
{
	return e->scratch || (e->scratch = blockpool_take(&scratch_pool)) ||
	       (e->scratch = malloc(SCRATCH_SIZE));
}

void emitter_pool_drain(void)
{
	blockpool_drain(&scratch_pool);
}

/* Validates a series' labels (after the prefix's), checks it is new in its
 * family, and leaves its escaped label block in e->scratch. Returns the
 * block's length or -errno. */
static ssize_t series_begin(struct emitter *e, const struct bs_label *labels, size_t n,
			    const char *reserved)
{
	size_t first = e->prefix.n;

	if (!e->has_family)
		return refuse(e, "no_family", -EINVAL);
	if (e->prefix.refusal)
		return refuse(e, e->prefix.refusal, e->prefix.refusal_rc);
	if (n > EMITTER_MAX_LABELS - first || (n && !labels))
		return refuse(e, "too_many_labels", -E2BIG);
	if (!scratch_ready(e))
		return refuse(e, "out_of_memory", -ENOMEM);
	if (reserved && prefix_names(e, reserved))
		return refuse(e, "invalid_label", -EINVAL);

	struct labels_out o = {e->scratch + e->prefix.len, e->prefix.hash, e->prefix.repaired,
			       e->prefix.truncated};
	const char *refusal = labels_write(e, labels, n, first, reserved, &o);
	if (refusal)
		return refuse(e, refusal, -EINVAL);
	int added = series_add(e, o.hash - e->prefix.hash, o.hash ^ (first + n), first, n);
	if (added == 0)
		return refuse(e, "duplicate_series", -EEXIST);
	if (added < 0)
		return refuse(e, "out_of_memory", -ENOMEM);
	report_repairs(e, &o.repaired);
	if (o.truncated)
		emitter_drop(&e->pub, "label_value_truncated", o.truncated);
	if (!e->header_done && write_header(e) < 0)
		return refuse(e, "output_full", -ENOBUFS);
	return o.p - e->scratch;
}

/* Nothing is counted here: a wrong prefix refuses each series it would
 * have been part of, with the reason those full labels would get. */
static int emitter_prefix(struct bs_emitter *pub, const struct bs_label *labels, size_t n)
{
	struct emitter *e = (struct emitter *)pub;

	memset(&e->prefix, 0, sizeof(e->prefix));
	e->byprefix.cur = 0;
	if (n == 0)
		return 0;
	if (n > EMITTER_MAX_LABELS || !labels) {
		e->prefix.refusal = "too_many_labels";
		e->prefix.refusal_rc = -E2BIG;
	} else if (!scratch_ready(e)) {
		e->prefix.refusal = "out_of_memory";
		e->prefix.refusal_rc = -ENOMEM;
	} else {
		struct labels_out o = {.p = e->scratch};
		e->prefix.refusal = labels_write(e, labels, n, 0, NULL, &o);
		e->prefix.refusal_rc = -EINVAL;
		if (!e->prefix.refusal) {
			e->prefix.n = n;
			e->prefix.len = (size_t)(o.p - e->scratch);
			e->prefix.hash = o.hash;
			e->prefix.repaired = o.repaired;
			e->prefix.truncated = o.truncated;
			return 0;
		}
	}
	return e->prefix.refusal_rc;
}

static int line(struct emitter *e, const char *suffix, size_t suffix_len, size_t labels_len,
		const struct expo_extra *extra, struct bs_value v)
{
	if (expo_line(e->sink, e->base, e->base_len, suffix, suffix_len, e->scratch, labels_len,
		      extra, v) < 0)
		return refuse(e, "output_full", -ENOBUFS);
	e->lines++;
	return 0;
}

static bool value_negative_or_nan(struct bs_value v)
{
	return (v.kind == BS_VAL_I64 && v.i < 0) ||
	       (v.kind == BS_VAL_F64 && (isnan(v.f) || v.f < 0));
}

static int emitter_sample(struct bs_emitter *pub, const struct bs_label *labels, size_t n,
			  struct bs_value v)
{
	struct emitter *e = (struct emitter *)pub;

	if (!e->has_family)
		return refuse(e, "no_family", -EINVAL);
	switch (e->type) {
	case BS_COUNTER:
		if (value_negative_or_nan(v))
			return refuse(e, "invalid_value", -EINVAL);
		break;
	case BS_INFO:
		if (v.kind != BS_VAL_U64 || v.u != 1)
			return refuse(e, "invalid_value", -EINVAL);
		break;
	case BS_GAUGE:
	case BS_UNKNOWN:
		break;
	default:
		return refuse(e, "wrong_type", -EINVAL);
	}
	ssize_t ll = series_begin(e, labels, n, NULL);
	if (ll < 0)
		return (int)ll;
	if (e->type == BS_COUNTER)
		return line(e, "_total", 6, (size_t)ll, NULL, v);
	if (e->type == BS_INFO)
		return line(e, "_info", 5, (size_t)ll, NULL, v);
	return line(e, "", 0, (size_t)ll, NULL, v);
}

/* The bounds are checked by lebounds_use, once per family. */
static int histogram_check(const struct bs_histogram *h, uint64_t *total)
{
	uint64_t sum = 0;

	if (!h || h->nbuckets == 0 || h->nbuckets > EMITTER_MAX_BUCKETS || !h->upper || !h->count)
		return -EINVAL;
	for (size_t i = 0; i < h->nbuckets; i++)
		if (__builtin_add_overflow(sum, h->count[i], &sum))
			return -ERANGE;
	if (h->has_sum && h->sum.kind == BS_VAL_F64 && isnan(h->sum.f))
		return -EINVAL;
	*total = sum;
	return 0;
}

static struct bs_value u64_value(uint64_t u)
{
	return (struct bs_value){.kind = BS_VAL_U64, .u = u};
}

static int emitter_histogram(struct bs_emitter *pub, const struct bs_label *labels, size_t n,
			     const struct bs_histogram *h)
{
	struct emitter *e = (struct emitter *)pub;
	uint64_t total;
	int rc = 0;

	if (!e->has_family)
		return refuse(e, "no_family", -EINVAL);
	if (e->type != BS_HISTOGRAM)
		return refuse(e, "wrong_type", -EINVAL);
	if (histogram_check(h, &total) < 0)
		return refuse(e, "invalid_value", -EINVAL);
	rc = lebounds_use(&e->bounds, h->upper, h->nbuckets);
	if (rc < 0)
		return refuse(e, rc == -ENOMEM ? "out_of_memory" : "invalid_value", rc);
	ssize_t ll = series_begin(e, labels, n, "le");
	if (ll < 0)
		return (int)ll;
	bool add_inf = !isinf(h->upper[h->nbuckets - 1]);
	if (expo_buckets(e->sink, e->base, e->base_len, e->scratch, (size_t)ll, &e->bounds,
			 h->count, h->nbuckets, add_inf, total) < 0)
		return refuse(e, "output_full", -ENOBUFS);
	e->lines += h->nbuckets + add_inf;
	if (e->format == EXPO_TEXT) {
		if (h->has_sum)
			rc = line(e, "_sum", 4, (size_t)ll, NULL, h->sum);
		return rc ? rc : line(e, "_count", 6, (size_t)ll, NULL, u64_value(total));
	}
	/* OpenMetrics: _count only beside _sum, and no _sum with negative buckets. */
	if (!h->has_sum || h->upper[0] < 0)
		return 0;
	rc = line(e, "_count", 6, (size_t)ll, NULL, u64_value(total));
	return rc ? rc : line(e, "_sum", 4, (size_t)ll, NULL, h->sum);
}

static int summary_check(const struct bs_summary *s)
{
	if (!s || s->nquantiles > EMITTER_MAX_BUCKETS ||
	    (s->nquantiles && (!s->quantile || !s->value)))
		return -EINVAL;
	for (size_t i = 0; i < s->nquantiles; i++)
		if (!(s->quantile[i] >= 0 && s->quantile[i] <= 1) || isnan(s->value[i]) ||
		    s->value[i] < 0)
			return -EINVAL;
	if (s->sum.kind == BS_VAL_F64 && isnan(s->sum.f))
		return -EINVAL;
	return 0;
}

static int emitter_summary(struct bs_emitter *pub, const struct bs_label *labels, size_t n,
			   const struct bs_summary *s)
{
	struct emitter *e = (struct emitter *)pub;
	char q[FMT_NUM_MAX + 4];
	struct expo_extra extra = {.name = "quantile", .name_len = 8, .value = q};
	int rc = 0;

	if (!e->has_family)
		return refuse(e, "no_family", -EINVAL);
	if (e->type != BS_SUMMARY)
		return refuse(e, "wrong_type", -EINVAL);
	if (summary_check(s) < 0)
		return refuse(e, "invalid_value", -EINVAL);
	ssize_t ll = series_begin(e, labels, n, "quantile");
	if (ll < 0)
		return (int)ll;
	for (size_t i = 0; i < s->nquantiles && rc == 0; i++) {
		struct bs_value v = {.kind = BS_VAL_F64, .f = s->value[i]};
		extra.value_len = (size_t)(fmt_f64_canonical(q, s->quantile[i]) - q);
		rc = line(e, "", 0, (size_t)ll, &extra, v);
	}
	if (rc == 0)
		rc = line(e, "_sum", 4, (size_t)ll, NULL, s->sum);
	return rc ? rc : line(e, "_count", 6, (size_t)ll, NULL, u64_value(s->count));
}

static int states_check(const char *const *states, const bool *active, size_t n)
{
	if (n == 0 || n > EMITTER_MAX_STATES || !states || !active)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!states[i] || strlen(states[i]) > NAMES_LABEL_VALUE_MAX)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (strcmp(states[i], states[j]) == 0)
				return -EINVAL;
	}
	return 0;
}

static int emitter_stateset(struct bs_emitter *pub, const struct bs_label *labels, size_t n,
			    const char *const *states, const bool *active, size_t nstates)
{
	struct emitter *e = (struct emitter *)pub;
	int rc = 0;

	if (!e->has_family)
		return refuse(e, "no_family", -EINVAL);
	if (e->type != BS_STATESET)
		return refuse(e, "wrong_type", -EINVAL);
	if (states_check(states, active, nstates) < 0)
		return refuse(e, "invalid_value", -EINVAL);
	ssize_t ll = series_begin(e, labels, n, e->base);
	if (ll < 0)
		return (int)ll;
	char *escaped = malloc(3 * NAMES_LABEL_VALUE_MAX + 3);
	if (!escaped)
		return refuse(e, "out_of_memory", -ENOMEM);
	for (size_t i = 0; i < nstates && rc == 0; i++) {
		struct names_repairs repaired = {0};
		bool cut;
		char *end =
		    names_escape(escaped, states[i], NAMES_LABEL_VALUE_MAX, true, &repaired, &cut);
		struct expo_extra extra = {e->base, e->base_len, escaped, (size_t)(end - escaped)};
		report_repairs(e, &repaired);
		rc = line(e, "", 0, (size_t)ll, &extra, u64_value(active[i] ? 1 : 0));
	}
	free(escaped);
	return rc;
}

/* A fork and the sink it writes into. */
struct emitter_fork {
	struct emitter em;
	struct sink sink;
};

static struct bs_emitter *emitter_fork(struct bs_emitter *pub);

static const struct bs_emitter_ops emitter_ops = {
    .family = emitter_family,
    .sample = emitter_sample,
    .histogram = emitter_histogram,
    .summary = emitter_summary,
    .stateset = emitter_stateset,
    .drop = emitter_drop,
    .expired = emitter_expired,
    .prefix = emitter_prefix,
    .fork = emitter_fork,
};

static struct bs_emitter *emitter_fork(struct bs_emitter *pub)
{
	struct emitter *e = (struct emitter *)pub;
	struct emitter_fork *f;

	if (e->is_fork || e->nforks == BS_EMITTER_FORKS_MAX || !(f = malloc(sizeof(*f))))
		return NULL;
	if (sink_init_like(&f->sink, e->sink) < 0) {
		free(f);
		return NULL;
	}
	emitter_init(&f->em, e->format, &f->sink, e->reg, e->deadline_ns);
	f->em.is_fork = true;
	e->fork[e->nforks++] = f;
	return &f->em.pub;
}

static void fork_free(struct emitter_fork *f)
{
	emitter_free(&f->em);
	sink_free(&f->sink);
	free(f);
}

int emitter_join_forks(struct emitter *e)
{
	bool full = e->sink->overflow;
	int rc = sink_finish(e->sink) < 0 || full ? -ENOBUFS : 0;

	for (size_t i = 0; i < e->nforks; i++) {
		struct emitter_fork *f = e->fork[i];
		full = f->sink.overflow;
		if (sink_finish(&f->sink) < 0 || full)
			rc = -ENOBUFS;
		sink_append(e->sink, &f->sink);
		for (size_t d = 0; d < f->em.ndrops; d++)
			drops_add(e->drops, &e->ndrops, f->em.drops[d].reason, f->em.drops[d].n);
		e->lines += f->em.lines;
		fork_free(f);
	}
	e->nforks = 0;
	/* Each sink kept to the limit alone: the whole must too. */
	if (e->sink->raw_bytes > e->sink->limit)
		rc = -ENOBUFS;
	return rc;
}

void emitter_init(struct emitter *e, enum expo_format f, struct sink *s, struct famreg *reg,
		  uint64_t deadline_ns)
{
	memset(e, 0, sizeof(*e));
	e->pub.ops = &emitter_ops;
	e->format = f;
	e->sink = s;
	e->reg = reg;
	e->deadline_ns = deadline_ns;
}

void emitter_adopt(struct emitter *e, struct emitter_kept *kept)
{
	seriesset_free(&e->series);
	prefixset_free(&e->byprefix);
	e->series = kept->series;
	e->byprefix = kept->byprefix;
	memset(kept, 0, sizeof(*kept));
}

void emitter_release(struct emitter *e, struct emitter_kept *kept)
{
	seriesset_free(&kept->series);
	prefixset_free(&kept->byprefix);
	seriesset_trim(&e->series);
	prefixset_trim(&e->byprefix);
	kept->series = e->series;
	kept->byprefix = e->byprefix;
	memset(&e->series, 0, sizeof(e->series));
	memset(&e->byprefix, 0, sizeof(e->byprefix));
}

void emitter_free(struct emitter *e)
{
	for (size_t i = 0; i < e->nforks; i++)
		fork_free(e->fork[i]);
	e->nforks = 0;
	seriesset_free(&e->series);
	prefixset_free(&e->byprefix);
	lebounds_free(&e->bounds);
	blockpool_give(&scratch_pool, e->scratch);
	e->scratch = NULL;
}
