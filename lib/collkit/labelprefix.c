/* Hands a source's labels to the emitter once, when it can take them. */
#include "labelprefix.h"

void labelprefix_init(struct labelprefix *p, const struct bs_host *host)
{
	p->able = host->abi_version >= 4;
	p->owner = NULL;
}

size_t labelprefix_use(struct labelprefix *p, struct bs_emitter *em, const void *owner,
		       const struct bs_label *l, size_t n)
{
	if (!p->able || !em->ops->prefix)
		return 0;
	if (p->owner != owner) {
		/* A wrong prefix makes the emitter refuse its series itself. */
		em->ops->prefix(em, l, n);
		p->owner = owner;
	}
	return n;
}

void labelprefix_end(struct labelprefix *p, struct bs_emitter *em)
{
	if (p->owner)
		em->ops->prefix(em, NULL, 0);
	p->owner = NULL;
}
