# Installation and packages (included by the Makefile): `make install`,
# `make deb`, `make rpm`, `make check-packages`.
.PHONY: install deb rpm check-packages

# The pkg-config files, from their templates in packaging/pkgconfig/:
# libdci4's and libpvstats', and binstat-collector.pc, what an out-of-tree
# collector builds with (`pkg-config --cflags binstat-collector`) and where
# its plugin goes (`pkg-config --variable=plugindir binstat-collector`),
# architecture-independent as the header is: under share/.
COLLECTOR_ABI := $(shell awk '$$2 == "BS_COLLECTOR_ABI_VERSION" { print $$3 }' include/binstat/collector.h)
PC_SUBST = sed -e 's|@prefix@|$(PREFIX)|g' -e 's|@libdir@|$(SOLIBDIR)|g' -e 's|@version@|$(VERSION)|g' \
	   -e 's|@plugindir@|$(PLUGINDIR)|g' -e 's|@abi_version@|$(COLLECTOR_ABI)|g'

# install_lib NAME,FILE,HEADERS: a shared library with its soname link, the
# link to build against, its headers and its pkg-config file.
define install_lib
install -d $(DESTDIR)$(SOLIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/$(1)
	install -m 0644 $(2) $(DESTDIR)$(SOLIBDIR)/lib$(1).so.0
	ln -sf lib$(1).so.0 $(DESTDIR)$(SOLIBDIR)/lib$(1).so
	install -m 0644 $(addprefix lib/$(1)/,$(3)) $(DESTDIR)$(PREFIX)/include/$(1)/
	$(PC_SUBST) packaging/pkgconfig/lib$(1).pc.in >$(DESTDIR)$(SOLIBDIR)/pkgconfig/lib$(1).pc
endef

install: $(B)/install/binstat_exporter $(PLUGINS) $(EXTRAS) $(LIBDCI4) $(LIBPVSTATS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(SYSCONFDIR)/binstat_exporter
	$(if $(EXTRAS),install -m 0644 $(EXTRAS) $(DESTDIR)$(LIBDIR)/binstat_exporter/)
	$(call install_lib,dci4,$(LIBDCI4),dci4_wire.h dci4_supplier.h)
	$(if $(LIBPVSTATS),$(call install_lib,pvstats,$(LIBPVSTATS),pvstats.h pvstats_wire.h))
	install -m 0755 $(B)/install/binstat_exporter $(DESTDIR)$(BINDIR)/binstat_exporter
	install -m 0755 $(B)/dci4stat $(B)/dci4-netdev $(DESTDIR)$(BINDIR)/
	install -m 0644 $(PLUGINS) $(DESTDIR)$(PLUGINDIR)/
	install -m 0644 include/binstat/collector.h -D $(DESTDIR)$(PREFIX)/include/binstat/collector.h
	install -d $(DESTDIR)$(PREFIX)/share/pkgconfig
	$(PC_SUBST) packaging/pkgconfig/binstat-collector.pc.in >$(DESTDIR)$(PREFIX)/share/pkgconfig/binstat-collector.pc
	test -e $(DESTDIR)$(SYSCONFDIR)/binstat_exporter/binstat_exporter.yml || \
		install -m 0644 config/binstat_exporter.yml $(DESTDIR)$(SYSCONFDIR)/binstat_exporter/
	install -d $(DESTDIR)$(SHAREDIR)/dashboards $(DESTDIR)$(SHAREDIR)/monitoring/tests \
		$(DESTDIR)$(SHAREDIR)/monitoring/fleet $(DESTDIR)$(SHAREDIR)/examples
	install -m 0644 dashboards/*.json dashboards/README.md $(DESTDIR)$(SHAREDIR)/dashboards/
	install -m 0644 monitoring/*.yml monitoring/README.md $(DESTDIR)$(SHAREDIR)/monitoring/
	install -m 0644 monitoring/tests/*.yml $(DESTDIR)$(SHAREDIR)/monitoring/tests/
	install -m 0644 monitoring/fleet/*.yml $(DESTDIR)$(SHAREDIR)/monitoring/fleet/
	install -m 0644 config/examples/*.yml config/web-config.yml packaging/systemd/xen-as-root.conf \
		$(DESTDIR)$(SHAREDIR)/examples/
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/*.5 $(DESTDIR)$(MANDIR)/man5/

# The Debian packages, built in a copy of the tracked files (as they are in
# the work tree), never in the tree itself; lintian then checks them.
deb:
	rm -rf build-deb && mkdir -p build-deb/src
	git ls-files -z | xargs -0 tar -cf - | tar -xf - -C build-deb/src
	cp -r packaging/debian build-deb/src/debian
	cp packaging/systemd/binstat_exporter.default build-deb/src/debian/binstat-exporter.default
	for u in service socket; do cp packaging/systemd/binstat_exporter.$$u \
		build-deb/src/debian/binstat-exporter.binstat_exporter.$$u; done
	cd build-deb/src && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning,info --info \
		build-deb/*.changes

# The RPM packages from packaging/rpm's spec, from a tarball of the tracked
# files; Debian's rpmbuild builds them (its own dependency checks off: the
# build dependencies are Debian's packages here).
rpm:
	rm -rf build-rpm && mkdir -p build-rpm/SOURCES
	git ls-files -z | xargs -0 tar --transform 's,^,binstat_exporter-$(VERSION)/,' \
		-czf build-rpm/SOURCES/binstat_exporter-$(VERSION).tar.gz
	rpmbuild -bb --nodeps --define "_topdir $(CURDIR)/build-rpm" --define "debug_package %{nil}" \
		packaging/rpm/binstat_exporter.spec

# The packages checked (tests/integration/deb.sh: the .deb and .rpm built,
# lintian, installed and purged, the -dev package used out of the tree).
# Root and Debian's mirror needed; .ci/run runs it after `make check`,
# which stays quick.
check-packages: testbins
	tests/integration/deb.sh $(B)
