/* A stand-in for the Xen hypervisor beneath the real libraries, loaded
 * with LD_PRELOAD: grant tables as shared files, event channels as Unix
 * datagrams, and the few libxenctrl calls and /proc/xen files cxenstored
 * needs. Everything above it (libxenstore against the real cxenstored, the
 * exporter's Xen backend, the provider library) is the shipped code.
 *
 * FAKEXEN_DIR   the "hypervisor's" state (grants, ports); required
 * FAKEXEN_DOMID the domain this process plays (default 0, the toolstack)
 * FAKEXEN_LAX   set for xenstored: binding a port nobody offered succeeds
 * FAKEXEN_NO_HYPERCALLS  xencall_open fails, as in a guest without privcmd
 * FAKEXEN_EVTCHN_NONBLOCK  evtchn fds open non-blocking: for builds older
 *               than the stand-in's blocking read (bench/xen.sh's baseline) */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <xencall.h>
#include <xenctrl.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xen/event_channel.h>

#define PAGE 4096
#define PORTS_MAX 65536
#define EXPORT __attribute__((visibility("default")))

static const char *dir(void)
{
	const char *d = getenv("FAKEXEN_DIR");
	return d ? d : "/tmp/fakexen";
}

static uint32_t my_domid(void)
{
	const char *d = getenv("FAKEXEN_DOMID");
	return d ? (uint32_t)strtoul(d, NULL, 10) : 0;
}

static void path_of(char *out, size_t n, const char *kind, uint32_t a, uint32_t b)
{
	snprintf(out, n, "%s/%s-%u-%u", dir(), kind, a, b);
}

static void ensure_dir(void)
{
	mkdir(dir(), 0755);
}

/* ---- /proc/xen for cxenstored ---- */

EXPORT int open(const char *path, int flags, ...) /* checksrc: varargs libc's own prototype */
{
	static int (*real_open)(const char *, int, ...); /* checksrc: varargs libc's open */
	char alt[512];
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	if (!real_open)
		real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (strcmp(path, "/proc/xen/xsd_port") == 0 || strcmp(path, "/proc/xen/xsd_kva") == 0) {
		ensure_dir();
		snprintf(alt, sizeof(alt), "%s/%s", dir(), strrchr(path, '/') + 1);
		int fd = real_open(alt, O_RDWR | O_CREAT, 0600);
		if (fd >= 0 && strstr(path, "port") && lseek(fd, 0, SEEK_END) == 0 &&
		    write(fd, "1\n", 2) != 2)
			return -1;
		if (fd >= 0 && strstr(path, "kva") && ftruncate(fd, PAGE) < 0)
			return -1;
		if (fd >= 0)
			lseek(fd, 0, SEEK_SET);
		return fd;
	}
	return real_open(path, flags, mode);
}

/* ---- libxenctrl: every domain exists ---- */

EXPORT xc_interface *xc_interface_open(xentoollog_logger *l, xentoollog_logger *d, unsigned f)
{
	(void)l, (void)d, (void)f;
	static int token;
	return (xc_interface *)&token;
}

EXPORT int xc_interface_close(xc_interface *xch)
{
	(void)xch;
	return 0;
}

EXPORT int xc_domain_getinfo(xc_interface *xch, uint32_t first, unsigned int max,
			     xc_dominfo_t *info)
{
	(void)xch;
	if (max == 0)
		return 0;
	memset(info, 0, sizeof(*info));
	info->domid = first;
	info->running = 1;
	return 1;
}

/* ---- grant tables: page <domid>,<ref> is the file gnt-<domid>-<ref> ---- */

struct share {
	void *addr;
	uint32_t count, first_ref;
	struct share *next;
};

/* One struct for both handles, as in the library. */
struct xengntdev_handle {
	uint32_t domid; /* FAKEXEN_DOMID when opened */
	struct share *shares;
};

EXPORT xengnttab_handle *xengnttab_open(xentoollog_logger *l, unsigned f)
{
	(void)l, (void)f;
	return calloc(1, sizeof(struct xengntdev_handle));
}

EXPORT int xengnttab_close(xengnttab_handle *h)
{
	free(h);
	return 0;
}

EXPORT int xengnttab_set_max_grants(xengnttab_handle *h, uint32_t n)
{
	(void)h, (void)n;
	return 0;
}

EXPORT void *xengnttab_map_domain_grant_refs(xengnttab_handle *h, uint32_t count, uint32_t domid,
					     uint32_t *refs, int prot)
{
	char p[512];
	(void)h;
	uint8_t *base =
	    mmap(NULL, (size_t)count * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	for (uint32_t i = 0; i < count; i++) {
		path_of(p, sizeof(p), "gnt", domid, refs[i]);
		int fd = open(p, (prot & PROT_WRITE) ? O_RDWR : O_RDONLY);
		void *m = MAP_FAILED;
		if (fd >= 0) {
			m = mmap(base + (size_t)i * PAGE, PAGE, prot, MAP_SHARED | MAP_FIXED, fd,
				 0);
			close(fd);
		} else if (getenv("FAKEXEN_LAX")) { /* xenstored's ring of a domain it is told of */
			m = mmap(base + (size_t)i * PAGE, PAGE, prot,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		}
		if (m == MAP_FAILED) {
			munmap(base, (size_t)count * PAGE);
			errno = EINVAL; /* a reference the domain never granted */
			return NULL;
		}
	}
	return base;
}

EXPORT void *xengnttab_map_grant_ref(xengnttab_handle *h, uint32_t domid, uint32_t ref, int prot)
{
	return xengnttab_map_domain_grant_refs(h, 1, domid, &ref, prot);
}

EXPORT int xengnttab_unmap(xengnttab_handle *h, void *addr, uint32_t count)
{
	(void)h;
	return munmap(addr, (size_t)count * PAGE);
}

EXPORT xengntshr_handle *xengntshr_open(xentoollog_logger *l, unsigned f)
{
	(void)l, (void)f;
	ensure_dir();
	struct xengntdev_handle *h = calloc(1, sizeof(*h));
	if (h)
		h->domid = my_domid();
	return h;
}

EXPORT void *xengntshr_share_pages(xengntshr_handle *h, uint32_t domid, int count, uint32_t *refs,
				   int writable)
{
	struct xengntdev_handle *s = h;
	static uint32_t next_ref = 8;
	char p[512];
	(void)domid, (void)writable;
	uint8_t *base =
	    mmap(NULL, (size_t)count * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	for (int i = 0; i < count; i++) {
		int fd;
		do { /* refs are the domain's: unique across its processes */
			refs[i] = next_ref++;
			path_of(p, sizeof(p), "gnt", s->domid, refs[i]);
		} while ((fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0 && errno == EEXIST);
		if (fd < 0 || ftruncate(fd, PAGE) < 0 ||
		    mmap(base + (size_t)i * PAGE, PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			return NULL;
		close(fd);
	}
	struct share *sh = malloc(sizeof(*sh));
	*sh = (struct share){base, (uint32_t)count, refs[0], s->shares};
	s->shares = sh;
	/* refs of one call are consecutive here; the unshare below relies on it */
	for (int i = 1; i < count; i++)
		if (refs[i] != refs[0] + (uint32_t)i)
			sh->count = 0;
	return base;
}

EXPORT int xengntshr_unshare(xengntshr_handle *h, void *addr, uint32_t count)
{
	struct xengntdev_handle *s = h;
	char p[512];
	for (struct share **sp = &s->shares; *sp; sp = &(*sp)->next) {
		struct share *sh = *sp;
		if (sh->addr != addr)
			continue;
		for (uint32_t i = 0; i < sh->count; i++) {
			path_of(p, sizeof(p), "gnt", s->domid, sh->first_ref + i);
			unlink(p); /* the grant ends: no new mapping can be made */
		}
		*sp = sh->next;
		free(sh);
		break;
	}
	return munmap(addr, (size_t)count * PAGE);
}

EXPORT int xengntshr_close(xengntshr_handle *h)
{
	free(h);
	return 0;
}

/* ---- event channels: port <domid>,<port> is the file port-<domid>-<port>
 * naming its handle's socket and, once bound, the peer "<domid> <port>".
 * Each handle has a shared bitmap of pending ports (<socket>.bits), as Xen
 * keeps pending bits in shared memory: a flood on one port sets one bit
 * and cannot crowd out another port's event. The socket only wakes. ---- */

#define WORDS (PORTS_MAX / 64)

#define CACHED_PORTS 16384

struct port_cache {
	uint64_t generation; /* + 1: 0 is "nothing cached" */
	int32_t peer_port, peer;
};

struct xenevtchn_handle {
	uint32_t domid; /* FAKEXEN_DOMID when opened: one process may play many */
	struct port_cache *cache;
	int fd;
	char path[256];
	uint64_t *pending; /* shared: set by notifiers, cleared on delivery */
	uint64_t masked[WORDS];
	unsigned cursor;
};

/* The handle behind each evtchn fd, for read() and write() on it. */
#define FDS_MAX 65536
static xenevtchn_handle *handle_of_fd[FDS_MAX];

static xenevtchn_handle *evt_handle(int fd)
{
	return fd >= 0 && fd < FDS_MAX ? __atomic_load_n(&handle_of_fd[fd], __ATOMIC_ACQUIRE)
				       : NULL;
}

static uint64_t *map_bits(const char *sock_path, bool create)
{
	char p[300];
	snprintf(p, sizeof(p), "%s.bits", sock_path);
	int fd = open(p, O_RDWR | (create ? O_CREAT : 0), 0600);
	if (fd < 0)
		return NULL;
	void *m = MAP_FAILED;
	if (!create || ftruncate(fd, WORDS * 8) == 0)
		m = mmap(NULL, WORDS * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* Peers this process signals: socket path and bitmap, mapped once each,
 * and a socket connected to the path (as fd + 1; 0: none yet). */
#define PEERS_MAX 16384
static struct peer {
	char *path;
	uint64_t *bits;
	int wake_fd1;
} peers[PEERS_MAX];
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;

static int peer_slot(const char *sock_path)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = sock_path; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	for (unsigned i = 0; i < PEERS_MAX; i++) {
		struct peer *p = &peers[(h + i) % PEERS_MAX];
		if (p->path && strcmp(p->path, sock_path) == 0)
			return (int)((h + i) % PEERS_MAX);
		if (p->path)
			continue;
		if (!(p->bits = map_bits(sock_path, false)) || !(p->path = strdup(sock_path)))
			return -1;
		return (int)((h + i) % PEERS_MAX);
	}
	return -1;
}

/* A socket per wake: a datagram is charged to its sender until read, so
 * one long-lived sending socket for all would run out of buffer and lose
 * wakes. For the rare wake of a handle's own socket (an unmask). */
static void wake(const char *sock_path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char one = 1;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.107s", sock_path);
	/* A full queue already means "readable": nothing is lost by EAGAIN. */
	sendto(fd, &one, 1, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
}

/* A notify's wake, on the peer's own connected socket: what is charged to
 * it is that peer's unread wakes alone, so EAGAIN means that peer already
 * has one (readable); a real notify is a hypercall, not a socket, a path
 * lookup and a close as wake() costs. A peer bound anew (a restarted
 * guest) refuses the old connection: connect again. */
static void wake_peer(struct peer *p)
{
	char one = 1;

	pthread_mutex_lock(&wake_lock);
	for (int tries = 0; tries < 2; tries++) {
		if (!p->wake_fd1) {
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			snprintf(sa.sun_path, sizeof(sa.sun_path), "%.107s", p->path);
			if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
				close(fd);
				fd = -1;
			}
			if (fd < 0)
				break; /* nobody bound there: the event is lost */
			p->wake_fd1 = fd + 1;
		}
		if (send(p->wake_fd1 - 1, &one, 1, MSG_DONTWAIT) == 1 || errno == EAGAIN)
			break;
		close(p->wake_fd1 - 1);
		p->wake_fd1 = 0;
	}
	pthread_mutex_unlock(&wake_lock);
}

/* Bumped on every bind and unbind anywhere: cached port lookups stay
 * valid while it does not move (real notifies are a hypercall; these
 * should not cost two file reads each). */
static volatile uint64_t *generation(void)
{
	static volatile uint64_t *g;
	if (!g) {
		char p[512];
		snprintf(p, sizeof(p), "%s/generation", dir());
		int fd = open(p, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || ftruncate(fd, 8) < 0)
			abort();
		g = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (g == MAP_FAILED)
			abort();
	}
	return g;
}

static void bump(void)
{
	__atomic_fetch_add(generation(), 1, __ATOMIC_SEQ_CST);
}

EXPORT xenevtchn_handle *xenevtchn_open(xentoollog_logger *l, unsigned f)
{
	static unsigned n;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	(void)l, (void)f;
	ensure_dir();
	xenevtchn_handle *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->domid = my_domid();
	snprintf(h->path, sizeof(h->path), "%s/h-%u-%d-%u", dir(), h->domid, (int)getpid(), n++);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.107s", h->path);
	unlink(h->path);
	/* Blocking, as libxenevtchn opens /dev/xen/evtchn. */
	h->fd = socket(
	    AF_UNIX,
	    SOCK_DGRAM | SOCK_CLOEXEC | (getenv("FAKEXEN_EVTCHN_NONBLOCK") ? SOCK_NONBLOCK : 0), 0);
	if (h->fd < 0 || h->fd >= FDS_MAX || bind(h->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    !(h->pending = map_bits(h->path, true)) ||
	    !(h->cache = calloc(CACHED_PORTS, sizeof(*h->cache)))) {
		free(h);
		return NULL;
	}
	__atomic_store_n(&handle_of_fd[h->fd], h, __ATOMIC_RELEASE);
	return h;
}

EXPORT xenevtchn_handle *xenevtchn_fdopen(xentoollog_logger *l, int fd, unsigned f)
{
	(void)l, (void)fd, (void)f;
	errno = ENOSYS;
	return NULL;
}

EXPORT int xenevtchn_close(xenevtchn_handle *h)
{
	char p[300];
	if (!h)
		return 0;
	__atomic_store_n(&handle_of_fd[h->fd], NULL, __ATOMIC_RELEASE);
	close(h->fd);
	free(h->cache);
	munmap(h->pending, WORDS * 8);
	snprintf(p, sizeof(p), "%s.bits", h->path);
	unlink(p);
	unlink(h->path);
	free(h);
	return 0;
}

EXPORT int xenevtchn_fd(xenevtchn_handle *h)
{
	return h->fd;
}

/* A new port of this domain, its file naming the handle (and peer). The
 * search starts after this process's last port: O_EXCL keeps processes
 * sharing a domain apart, the hint keeps a thousand binds from costing a
 * million opens. */
static int new_port(xenevtchn_handle *h, uint32_t peer_dom, int peer_port)
{
	static uint32_t last;
	char p[512];
	for (uint32_t k = 1; k < PORTS_MAX; k++) {
		uint32_t port = (last + k) % PORTS_MAX;
		if (port == 0)
			continue;
		path_of(p, sizeof(p), "port", h->domid, port);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -1;
		dprintf(fd, "%s %u %d\n", h->path, peer_dom, peer_port);
		close(fd);
		bump();
		last = port;
		return (int)port;
	}
	errno = ENOSPC;
	return -1;
}

static int read_port(uint32_t dom, uint32_t port, char *sock, uint32_t *peer_dom, int *peer_port)
{
	char p[512], line[600];
	path_of(p, sizeof(p), "port", dom, port);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int ok = fgets(line, sizeof(line), f) &&
		 sscanf(line, "%255s %u %d", sock, peer_dom, peer_port) == 3;
	fclose(f);
	return ok ? 0 : -1;
}

static int write_peer(uint32_t dom, uint32_t port, uint32_t peer_dom, int peer_port)
{
	char sock[256], p[512];
	uint32_t od;
	int op;
	if (read_port(dom, port, sock, &od, &op) < 0)
		return -1;
	path_of(p, sizeof(p), "port", dom, port);
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	fprintf(f, "%s %u %d\n", sock, peer_dom, peer_port);
	fclose(f);
	bump();
	return 0;
}

EXPORT xenevtchn_port_or_error_t xenevtchn_bind_unbound_port(xenevtchn_handle *h, uint32_t dom)
{
	(void)dom;
	return new_port(h, 0, -1);
}

EXPORT xenevtchn_port_or_error_t xenevtchn_bind_interdomain(xenevtchn_handle *h, uint32_t dom,
							    evtchn_port_t remote)
{
	char sock[256];
	uint32_t pd;
	int pp;
	if (read_port(dom, remote, sock, &pd, &pp) < 0 || pp >= 0) {
		if (!getenv("FAKEXEN_LAX")) {
			errno = EINVAL; /* not an unbound port of that domain */
			return -1;
		}
		return new_port(h, dom, -1);
	}
	int port = new_port(h, dom, (int)remote);
	if (port > 0 && write_peer(dom, remote, h->domid, port) < 0)
		return -1;
	return port;
}

EXPORT xenevtchn_port_or_error_t xenevtchn_bind_virq(xenevtchn_handle *h, unsigned int virq)
{
	(void)virq;
	return new_port(h, 0, -1);
}

/* Closes the wake socket this process holds to the peer at sock_path,
 * if any: an unbound channel's peer may be gone for good, and its socket
 * must not outlive it here (the next notify to it connects again). */
static void peer_forget(const char *sock_path)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = sock_path; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	pthread_mutex_lock(&wake_lock);
	for (unsigned i = 0; i < PEERS_MAX; i++) {
		struct peer *p = &peers[(h + i) % PEERS_MAX];
		if (!p->path)
			break;
		if (strcmp(p->path, sock_path) == 0) {
			if (p->wake_fd1)
				close(p->wake_fd1 - 1);
			p->wake_fd1 = 0;
			break;
		}
	}
	pthread_mutex_unlock(&wake_lock);
}

EXPORT int xenevtchn_unbind(xenevtchn_handle *h, evtchn_port_t port)
{
	char sock[256], peer_sock[256], p[512];
	uint32_t pd, x;
	int pp, xp;
	if (read_port(h->domid, port, sock, &pd, &pp) == 0 && pp >= 0) {
		if (read_port(pd, (uint32_t)pp, peer_sock, &x, &xp) == 0)
			peer_forget(peer_sock);
		write_peer(pd, (uint32_t)pp, 0, -1); /* the other end is unbound again */
	}
	/* A peer that unbound first left no name of its socket in the port's
	 * file: the one this port last notified is forgotten all the same,
	 * or its wake socket would stay open here after the peer is gone. */
	if (port < CACHED_PORTS && h->cache[port].generation && h->cache[port].peer >= 0)
		peer_forget(peers[h->cache[port].peer].path);
	path_of(p, sizeof(p), "port", h->domid, port);
	int rc = unlink(p);
	bump();
	return rc;
}

EXPORT int xenevtchn_notify(xenevtchn_handle *h, evtchn_port_t port)
{
	char sock[256], peer_sock[256];
	uint32_t pd, x;
	int pp, xp;
	uint64_t g = *generation() + 1;
	struct port_cache uncached, *c = port < CACHED_PORTS ? &h->cache[port] : &uncached;

	if (c == &uncached || c->generation != g) {
		if (read_port(h->domid, port, sock, &pd, &pp) < 0)
			return -1;
		int slot = -1;
		if (pp >= 0 && pp < PORTS_MAX &&
		    read_port(pd, (uint32_t)pp, peer_sock, &x, &xp) == 0)
			slot = peer_slot(peer_sock);
		*c = (struct port_cache){g, pp, slot};
	}
	if (c->peer < 0)
		return 0; /* nobody bound at the other end: the event is lost */
	struct peer *p = &peers[c->peer];
	__atomic_fetch_or(&p->bits[c->peer_port / 64], 1ull << (c->peer_port % 64),
			  __ATOMIC_RELEASE);
	wake_peer(p);
	return 0;
}

/* The evtchn device's read and write (Linux drivers/xen/evtchn.c), which
 * libxenevtchn's pending and unmask make with one port each. A read takes
 * the delivered ports, as many as fit and at most a page's worth, and
 * masks each until unmasked; a masked port's events stay in its pending
 * bit. With nothing delivered it fails with EAGAIN on an O_NONBLOCK fd and
 * waits otherwise. A write unmasks every port it holds. */
static size_t evt_take(xenevtchn_handle *h, uint32_t *ports, size_t max)
{
	char buf[64];
	size_t n = 0;

	while (recv(h->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	for (unsigned k = 0; k < WORDS && n < max; k++) {
		unsigned w = (h->cursor + k) % WORDS;
		uint64_t ready = __atomic_load_n(&h->pending[w], __ATOMIC_ACQUIRE) & ~h->masked[w];
		for (; ready && n < max; ready &= ready - 1) {
			unsigned b = (unsigned)__builtin_ctzll(ready);
			__atomic_fetch_and(&h->pending[w], ~(1ull << b), __ATOMIC_ACQ_REL);
			h->masked[w] |= 1ull << b;
			ports[n++] = w * 64 + b;
		}
		if (n == max)
			h->cursor = w; /* fair: the next search starts here */
	}
	return n;
}

static ssize_t evt_read(xenevtchn_handle *h, void *buf, size_t count)
{
	uint32_t ports[PAGE / sizeof(uint32_t)];
	size_t max = (count < PAGE ? count : PAGE) / sizeof(uint32_t), n;

	if (max == 0)
		return 0;
	while ((n = evt_take(h, ports, max)) == 0) {
		struct pollfd pfd = {h->fd, POLLIN, 0};
		if (fcntl(h->fd, F_GETFL) & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		if (poll(&pfd, 1, -1) < 0)
			return -1;
	}
	memcpy(buf, ports, n * sizeof(uint32_t));
	return (ssize_t)(n * sizeof(uint32_t));
}

static ssize_t evt_write(xenevtchn_handle *h, const void *buf, size_t count)
{
	size_t n = (count < PAGE ? count : PAGE) / sizeof(uint32_t);
	bool raised = false;

	for (size_t i = 0; i < n; i++) {
		uint32_t port;
		memcpy(&port, (const uint8_t *)buf + i * sizeof(port), sizeof(port));
		if (port >= PORTS_MAX)
			continue; /* the device ignores ports it has not bound */
		h->masked[port / 64] &= ~(1ull << (port % 64));
		raised |=
		    (__atomic_load_n(&h->pending[port / 64], __ATOMIC_ACQUIRE) >> (port % 64)) & 1;
	}
	if (raised)
		wake(h->path); /* raised again, as Xen does on unmask */
	return (ssize_t)(n * sizeof(uint32_t));
}

EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	static ssize_t (*real_read)(int, void *, size_t);
	xenevtchn_handle *h = evt_handle(fd);

	if (h)
		return evt_read(h, buf, count);
	if (!real_read)
		real_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	return real_read(fd, buf, count);
}

EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	static ssize_t (*real_write)(int, const void *, size_t);
	xenevtchn_handle *h = evt_handle(fd);

	if (h)
		return evt_write(h, buf, count);
	if (!real_write)
		real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	return real_write(fd, buf, count);
}

/* As libxenevtchn's Linux backend makes them. */
EXPORT xenevtchn_port_or_error_t xenevtchn_pending(xenevtchn_handle *h)
{
	uint32_t port;
	return evt_read(h, &port, sizeof(port)) == sizeof(port) ? (int)port : -1;
}

EXPORT int xenevtchn_unmask(xenevtchn_handle *h, evtchn_port_t port)
{
	return evt_write(h, &port, sizeof(port)) == sizeof(port) ? 0 : -1;
}

/* ---- hypercalls: EVTCHNOP_status on a domain's own port, the one a
 * guest's provider library makes while it withdraws ---- */

struct xencall_handle {
	uint32_t domid;
};

EXPORT xencall_handle *xencall_open(struct xentoollog_logger *l, unsigned f)
{
	(void)l, (void)f;
	if (getenv("FAKEXEN_NO_HYPERCALLS")) {
		errno = ENOENT; /* no /dev/xen/privcmd */
		return NULL;
	}
	xencall_handle *h = calloc(1, sizeof(*h));
	if (h)
		h->domid = my_domid();
	return h;
}

EXPORT int xencall_close(xencall_handle *h)
{
	free(h);
	return 0;
}

EXPORT void *xencall_alloc_buffer(xencall_handle *h, size_t size)
{
	(void)h;
	return calloc(1, size);
}

EXPORT void xencall_free_buffer(xencall_handle *h, void *p)
{
	(void)h;
	free(p);
}

/* The port's file says whether its other end is bound (unbind writes it
 * back to -1, as Xen puts the remote end back to unbound). */
EXPORT int xencall2(xencall_handle *h, unsigned op, uint64_t arg1, uint64_t arg2)
{
	struct evtchn_status *st = (struct evtchn_status *)(uintptr_t)arg2;
	char sock[256];
	uint32_t pd;
	int pp;

	if (op != __HYPERVISOR_event_channel_op || arg1 != EVTCHNOP_status) {
		errno = ENOSYS;
		return -1;
	}
	if (st->dom != DOMID_SELF && st->dom != h->domid) {
		errno = EPERM; /* only a privileged domain may ask of another's */
		return -1;
	}
	if (read_port(h->domid, st->port, sock, &pd, &pp) < 0) {
		st->status = EVTCHNSTAT_closed;
		return 0;
	}
	st->status = pp >= 0 ? EVTCHNSTAT_interdomain : EVTCHNSTAT_unbound;
	if (pp >= 0) {
		st->u.interdomain.dom = (domid_t)pd;
		st->u.interdomain.port = (evtchn_port_t)pp;
	}
	return 0;
}
