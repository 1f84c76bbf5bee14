/* A forwarding emitter that yields to waiting scrapes (yieldem.h). */
#include "yieldem.h"

static struct yieldem *yieldem_of(struct bs_emitter *pub)
{
	return (struct yieldem *)pub;
}

static int yield_family(struct bs_emitter *pub, const struct bs_family *fam)
{
	struct yieldem *y = yieldem_of(pub);
	return y->yielded ? 0 : y->inner->ops->family(y->inner, fam);
}

static int yield_sample(struct bs_emitter *pub, const struct bs_label *l, size_t n,
			struct bs_value v)
{
	struct yieldem *y = yieldem_of(pub);
	return y->yielded ? 0 : y->inner->ops->sample(y->inner, l, n, v);
}

static int yield_histogram(struct bs_emitter *pub, const struct bs_label *l, size_t n,
			   const struct bs_histogram *h)
{
	struct yieldem *y = yieldem_of(pub);
	return y->yielded ? 0 : y->inner->ops->histogram(y->inner, l, n, h);
}

static int yield_summary(struct bs_emitter *pub, const struct bs_label *l, size_t n,
			 const struct bs_summary *s)
{
	struct yieldem *y = yieldem_of(pub);
	return y->yielded ? 0 : y->inner->ops->summary(y->inner, l, n, s);
}

static int yield_stateset(struct bs_emitter *pub, const struct bs_label *l, size_t n,
			  const char *const *states, const bool *active, size_t nstates)
{
	struct yieldem *y = yieldem_of(pub);
	return y->yielded ? 0 : y->inner->ops->stateset(y->inner, l, n, states, active, nstates);
}

static void yield_drop(struct bs_emitter *pub, const char *reason, uint64_t n)
{
	struct yieldem *y = yieldem_of(pub);
	y->inner->ops->drop(y->inner, reason, n);
}

static bool yield_expired(struct bs_emitter *pub)
{
	struct yieldem *y = yieldem_of(pub);

	if (!y->yielded && __atomic_load_n(y->waiting, __ATOMIC_ACQUIRE) > 0)
		y->yielded = true;
	return y->yielded || y->inner->ops->expired(y->inner);
}

static int yield_prefix(struct bs_emitter *pub, const struct bs_label *l, size_t n)
{
	struct yieldem *y = yieldem_of(pub);
	return y->yielded ? 0 : y->inner->ops->prefix(y->inner, l, n);
}

static const struct bs_emitter_ops yield_ops = {
    .family = yield_family,
    .sample = yield_sample,
    .histogram = yield_histogram,
    .summary = yield_summary,
    .stateset = yield_stateset,
    .drop = yield_drop,
    .expired = yield_expired,
    .prefix = yield_prefix,
    .fork = NULL, /* every write must pass through here */
};

void yieldem_init(struct yieldem *y, struct bs_emitter *inner, const int *waiting)
{
	*y = (struct yieldem){.ops = yield_ops, .inner = inner, .waiting = waiting};
	if (!inner->ops->prefix)
		y->ops.prefix = NULL;
	y->pub.ops = &y->ops;
}
