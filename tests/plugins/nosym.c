/* A shared object that is not a collector: it lacks binstat_collector_nosym. */
int binstat_not_a_collector(void);
int binstat_not_a_collector(void)
{
	return 0;
}
