# The Xen collector (seed 002): PV statistics sets guests advertise in xenstore.
xen_LIBS := statmap collkit pvstats
xen_PKGS := xenstore xengnttab xenevtchn
