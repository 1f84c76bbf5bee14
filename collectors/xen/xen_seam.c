/* The real backend of the seam: the libraries a dom0 toolstack uses, and
 * the evtchn device beneath libxenevtchn for ports in bulk. */
#include "xen_seam.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

struct xen_seam {
	struct xs_handle *xs;
	xengnttab_handle *gnt;
	xenevtchn_handle *evt;
};

static int err(void)
{
	return errno ? -errno : -EIO;
}

/* libxenevtchn opens the device blocking: its pending would then wait
 * for the next event where a scrape takes only what has come. */
static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int xen_seam_open(struct xen_seam **out)
{
	struct xen_seam *x = calloc(1, sizeof(*x));
	int rc = -ENOMEM;

	if (!x)
		return rc;
	errno = 0;
	if (!(x->xs = xs_open(0)) || !(x->gnt = xengnttab_open(NULL, 0)) ||
	    !(x->evt = xenevtchn_open(NULL, 0)) || set_nonblocking(xenevtchn_fd(x->evt)) < 0) {
		rc = err();
		xen_seam_close(x);
		return rc;
	}
	*out = x;
	return 0;
}

void xen_seam_close(struct xen_seam *x)
{
	if (!x)
		return;
	if (x->evt)
		xenevtchn_close(x->evt);
	if (x->gnt)
		xengnttab_close(x->gnt);
	if (x->xs)
		xs_close(x->xs);
	free(x);
}

char **xen_xs_directory(struct xen_seam *x, const char *path, unsigned *n)
{
	return xs_directory(x->xs, XBT_NULL, path, n);
}

char *xen_xs_read(struct xen_seam *x, const char *path, unsigned *len)
{
	return xs_read(x->xs, XBT_NULL, path, len);
}

int xen_xs_make_owned(struct xen_seam *x, const char *path, uint32_t domid)
{
	/* The first entry names the owner, who may read and write; others may not. */
	struct xs_permissions perms[1] = {{.id = domid, .perms = XS_PERM_NONE}};

	if (!xs_mkdir(x->xs, XBT_NULL, path) ||
	    !xs_set_permissions(x->xs, XBT_NULL, path, perms, 1))
		return err();
	return 0;
}

int xen_xs_watch(struct xen_seam *x, const char *path, const char *token)
{
	return xs_watch(x->xs, path, token) ? 0 : err();
}

int xen_xs_unwatch(struct xen_seam *x, const char *path, const char *token)
{
	return xs_unwatch(x->xs, path, token) ? 0 : err();
}

int xen_xs_next_watch(struct xen_seam *x, char ***vec)
{
	errno = 0;
	*vec = xs_check_watch(x->xs);
	if (*vec)
		return 1;
	return errno == EAGAIN || errno == 0 ? 0 : err();
}

int xen_xs_fd(struct xen_seam *x)
{
	return xs_fileno(x->xs);
}

bool xen_xs_alive(struct xen_seam *x)
{
	unsigned len;
	char *root = xs_read(x->xs, XBT_NULL, "/", &len); /* the root node always exists */
	free(root);
	return root != NULL;
}

int xen_xs_reconnect(struct xen_seam *x)
{
	struct xs_handle *xs;

	errno = 0;
	if (!(xs = xs_open(0)))
		return err();
	xs_close(x->xs);
	x->xs = xs;
	return 0;
}

int xen_gnt_map_ro(struct xen_seam *x, uint32_t domid, const uint32_t *refs, uint32_t n, void **out)
{
	errno = 0;
	*out = xengnttab_map_domain_grant_refs(x->gnt, n, domid, (uint32_t *)refs, PROT_READ);
	return *out ? 0 : err();
}

void xen_gnt_unmap(struct xen_seam *x, void *addr, uint32_t n)
{
	xengnttab_unmap(x->gnt, addr, n);
}

int xen_evt_bind(struct xen_seam *x, uint32_t domid, uint32_t remote_port)
{
	errno = 0;
	int p = xenevtchn_bind_interdomain(x->evt, domid, remote_port);
	return p < 0 ? err() : p;
}

int xen_evt_unbind(struct xen_seam *x, uint32_t port)
{
	return xenevtchn_unbind(x->evt, port) < 0 ? err() : 0;
}

int xen_evt_notify(struct xen_seam *x, uint32_t port)
{
	return xenevtchn_notify(x->evt, port) < 0 ? err() : 0;
}

/* The device's read and write of port numbers, as libxenevtchn's Linux
 * backend makes them one port at a time; each moves at most a page's
 * worth, and a write says how many it took. */
int xen_evt_pending(struct xen_seam *x, uint32_t *ports, size_t max)
{
	errno = 0;
	ssize_t got = read(xenevtchn_fd(x->evt), ports, max * sizeof(*ports));
	if (got < 0)
		return errno == EAGAIN ? 0 : err();
	return (int)((size_t)got / sizeof(*ports));
}

int xen_evt_unmask(struct xen_seam *x, const uint32_t *ports, size_t n)
{
	while (n > 0) {
		errno = 0;
		ssize_t done = write(xenevtchn_fd(x->evt), ports, n * sizeof(*ports));
		if (done < (ssize_t)sizeof(*ports))
			return err();
		ports += (size_t)done / sizeof(*ports);
		n -= (size_t)done / sizeof(*ports);
	}
	return 0;
}

int xen_evt_fd(struct xen_seam *x)
{
	return xenevtchn_fd(x->evt);
}
