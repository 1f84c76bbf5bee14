/* Linked into every unit suite: BS_TEST_CASE (a cmocka pattern, set by
 * `make test T=suite:case`) runs only the cases it matches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

__attribute__((constructor)) static void case_filter(void)
{
	const char *pattern = getenv("BS_TEST_CASE");

	if (pattern && *pattern)
		cmocka_set_test_filter(pattern);
}
