# The DCI collector (seeds 002 and 003): statistic suppliers on local sockets.
dci_LIBS := dci4 statmap unixsock collkit
