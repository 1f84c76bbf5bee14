/* Loads collector plugins (shared objects) and checks their ABI.
 * Each plugin is loaded once; reloads of the config reuse the handle. */
#include "plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define PLUGIN_CACHE_MAX 64
#define PLUGIN_PATH_MAX 4096

struct loaded {
	char path[PLUGIN_PATH_MAX];
	const struct bs_collector *ops;
};

static struct loaded cache[PLUGIN_CACHE_MAX];
static size_t ncache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int check_ops(const struct bs_collector *c, const char *path, const char *name, char *err,
		     size_t errlen)
{
	if (c->abi_version < BS_COLLECTOR_ABI_OLDEST || c->abi_version > BS_COLLECTOR_ABI_VERSION) {
		snprintf(err, errlen,
			 "%s: collector ABI version %u, this exporter "
			 "loads %u to %u: rebuild the plugin",
			 path, c->abi_version, BS_COLLECTOR_ABI_OLDEST, BS_COLLECTOR_ABI_VERSION);
		return -EPROTO;
	}
	if (!c->name || strcmp(c->name, name) != 0 || !c->init || !c->collect || !c->shutdown) {
		snprintf(err, errlen,
			 "%s: collector '%s' lacks a name matching the "
			 "file, or an init, collect or shutdown operation",
			 path, name);
		return -EPROTO;
	}
	return 0;
}

static int load(const char *path, const char *name, const struct bs_collector **out, char *err,
		size_t errlen)
{
	char sym[sizeof(BS_COLLECTOR_SYMBOL_PREFIX) + CONFIG_NAME_MAX];
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(err, errlen, "cannot load plugin: %s", dlerror());
		return -ENOENT;
	}
	snprintf(sym, sizeof(sym), "%s%s", BS_COLLECTOR_SYMBOL_PREFIX, name);
	const struct bs_collector *c = dlsym(h, sym);
	if (!c) {
		snprintf(err, errlen, "%s: no symbol %s: not a binstat collector plugin", path,
			 sym);
		dlclose(h);
		return -ENOENT;
	}
	int rc = check_ops(c, path, name, err, errlen);
	if (rc < 0) {
		dlclose(h);
		return rc;
	}
	*out = c;
	return 0;
}

int plugin_load(const char *dir, const char *name, const struct bs_collector **out, char *err,
		size_t errlen)
{
	char path[PLUGIN_PATH_MAX];
	int rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.so", dir, name) >= sizeof(path)) {
		snprintf(err, errlen, "plugin path too long");
		return -ENAMETOOLONG;
	}
	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < ncache; i++)
		if (strcmp(cache[i].path, path) == 0) {
			*out = cache[i].ops;
			goto out_unlock;
		}
	if (ncache == PLUGIN_CACHE_MAX) {
		snprintf(err, errlen, "%s: too many plugins loaded", path);
		rc = -EMFILE;
		goto out_unlock;
	}
	rc = load(path, name, out, err, errlen);
	if (rc == 0) {
		memcpy(cache[ncache].path, path, sizeof(path));
		cache[ncache++].ops = *out;
	}
out_unlock:
	pthread_mutex_unlock(&cache_lock);
	return rc;
}
