# The DCI collector: DCI4 statistic suppliers on local sockets.
dci_LIBS := dci4 statmap unixsock collkit
