# The Xen collector: the Xen PV statistics sets guests advertise in xenstore.
xen_LIBS := statmap collkit pvstats
xen_PKGS := xenstore xengnttab xenevtchn
