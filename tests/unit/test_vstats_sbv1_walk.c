/* lib/vstats' reader of statsblob V1 bytes: it reads back the fields the
 * encoder wrote, and it refuses, rather than reads past, a blob whose
 * sizes or offsets point outside its bytes (a blob handed over by
 * someone else may say anything). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "vstats.h"
#include "vstats_sbv1.h"
#include "vstats_sbv1_walk.h"

/* One VOI, s64, SUM and MAX, updated once with 9: 32 + 8 + 3 * 8 + 16 =
 * 80 bytes (voistats at 40, data at 64). */
static size_t one_voi(uint8_t *b, size_t room, struct vstats_voi *v)
{
	const struct vstats_spec sp[] = {{.stype = VSTATS_SUM}, {.stype = VSTATS_MAX}};
	const char *why;
	size_t len;

	assert_int_equal(vstats_voi_init(v, VSTATS_INT, false, sp, 2, &why), 0);
	assert_int_equal(vstats_update_abs(v, (struct vstats_value){VSTATS_INT, {.i = 9}}), 0);
	struct vstats_sbv1_blob blob = {v, 1, 77, 5, 6};
	assert_int_equal(vstats_sbv1_encode(&blob, b, room, &len, &why), 0);
	return len;
}

static void test_reads_back_what_was_encoded(void **state)
{
	struct vstats_voi v;
	uint8_t b[256];
	size_t len = one_voi(b, sizeof(b), &v);
	struct vstats_sbv1_hdr h;
	struct vstats_sbv1_voi voi;
	struct vstats_sbv1_voistat vs;
	(void)state;

	assert_int_equal(len, 80);
	assert_int_equal(vstats_sbv1_walk_hdr(b, len, &h), 0);
	assert_int_equal(h.cursz, 80);
	assert_int_equal(h.tplhash, 77);
	assert_int_equal(h.nvois, 1);
	assert_int_equal(h.stats_off, 40);
	assert_int_equal(h.statsdata_off, 64);
	assert_true(h.created == 5 && h.lastrst == 6);
	assert_int_equal(vstats_sbv1_walk_voi(b, &h, 0, &voi), 0);
	assert_int_equal(voi.id, 0);
	assert_int_equal(voi.voistatmaxid, 2);
	assert_string_equal(vstats_sbv1_dtype_name(voi.dtype), "INT_S64");
	assert_int_equal(vstats_sbv1_walk_voistat(b, &h, &voi, 0, &vs), 0);
	assert_int_equal(vs.stype, -1); /* no VOISTATE: not relative */
	assert_int_equal(vstats_sbv1_walk_voistat(b, &h, &voi, 2, &vs), 0);
	assert_string_equal(vstats_sbv1_stype_name(vs.stype), "MAX");
	assert_int_equal(vs.dsz, 8);
	assert_true(vstats_sbv1_get64(vs.data) == 9);
	assert_int_equal(vstats_sbv1_walk_voi(b, &h, 1, &voi), -EINVAL);
	vstats_voi_free(&v);
}

static void test_refuses_what_points_outside(void **state)
{
	struct vstats_voi v;
	uint8_t b[256];
	size_t len = one_voi(b, sizeof(b), &v);
	struct vstats_sbv1_hdr h;
	struct vstats_sbv1_voi voi;
	struct vstats_sbv1_voistat vs;
	(void)state;

	assert_int_equal(vstats_sbv1_walk_hdr(b, 31, &h), -EINVAL);	 /* no whole header */
	assert_int_equal(vstats_sbv1_walk_hdr(b, len - 1, &h), -EINVAL); /* cursz past the bytes */
	b[14] = 200; /* statsdata_off past cursz */
	assert_int_equal(vstats_sbv1_walk_hdr(b, len, &h), -EINVAL);
	b[14] = 64;
	b[35] = 20; /* voistatmaxid 20: slots past the voistat region */
	assert_int_equal(vstats_sbv1_walk_hdr(b, len, &h), 0);
	assert_int_equal(vstats_sbv1_walk_voi(b, &h, 0, &voi), -EINVAL);
	b[35] = 2;
	assert_int_equal(vstats_sbv1_walk_voi(b, &h, 0, &voi), 0);
	b[40 + 2 * 8 + 4] = 40; /* MAX's dsz 40: data past cursz */
	assert_int_equal(vstats_sbv1_walk_voistat(b, &h, &voi, 2, &vs), -EINVAL);
	assert_int_equal(vstats_sbv1_walk_voistat(b, &h, &voi, 3, &vs), -EINVAL);
	vstats_voi_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reads_back_what_was_encoded),
	    cmocka_unit_test(test_refuses_what_points_outside),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
