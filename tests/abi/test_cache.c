/* test_cache.c — the cache's listing and maintenance calls through tc.h only: a directory
 * without a cache is TC_ERROR_CACHE naming it and is not created; after a tc_tune the listing
 * holds the def's record with its fields and its tuning history (cache_dir NULL: the default,
 * here $TC_CACHE_DIR); indices past the end and NULL arguments are refused; tc_cache_clear
 * empties records and history and leaves the database file (0600). */
#include <sys/stat.h>
#include <unistd.h>

#include "abi_util.h"

#define M 64
#define K 32
#define N 48

static char g_dir[64];

static int setup(void **state) {
  (void)state;
  strcpy(g_dir, "/tmp/tc-abi-cache-XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Tunes mm from a bad start (scalar code, 1x1 tiles: easy to beat) into `cache`. */
static void tune_into(const char *cache) {
  static float a[M * K], b[K * N];
  fill_pattern(a, M * K, 1);
  fill_pattern(b, K * N, 2);
  int64_t sa[2] = {M, K}, sb[2] = {K, N};
  DLTensor in[2] = {make_tensor(a, dt_f32(), 2, sa, NULL), make_tensor(b, dt_f32(), 2, sb, NULL)};
  tc_program *p = define_ok(MM_SRC);
  tc_options *o = NULL;
  assert_tc_ok(tc_options_create(&o));
  const char *kv[][2] = {{"cpu.vectorize", "1"}, {"cpu.tile", "1x1"},       {"threads", "1"},
                         {"tune.population", "6"}, {"tune.generations", "2"}, {"cache", cache},
                         {"tune.budget", "86400"}}; /* two generations on any machine, never cut short */
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; ++i) assert_tc_ok(tc_options_set(o, kv[i][0], kv[i][1]));
  tc_kernel *k = NULL;
  assert_tc_ok(tc_tune(&k, p, NULL, in, 2, o, NULL, NULL));
  tc_kernel_destroy(k);
  tc_options_destroy(o);
  tc_program_destroy(p);
}

static void test_a_missing_cache_is_an_error_and_is_not_created(void **state) {
  (void)state;
  char missing[128];
  snprintf(missing, sizeof missing, "%s/missing", g_dir);
  tc_cache_listing *l = NULL;
  assert_fails_with(tc_cache_list(&l, missing), TC_ERROR_CACHE);
  assert_null(l);
  char want[160];
  snprintf(want, sizeof want, "no cache at '%s'", missing);
  assert_string_equal(tc_last_error_message(), want);
  assert_fails_with(tc_cache_clear(missing), TC_ERROR_CACHE);
  struct stat st;
  assert_int_not_equal(stat(missing, &st), 0);
  assert_fails_with(tc_cache_list(NULL, g_dir), TC_ERROR_INVALID_ARGUMENT);
  tc_cache_listing_destroy(NULL);
}

static void test_lists_a_tuned_record_and_its_history_then_clears(void **state) {
  (void)state;
  char cache[128];
  snprintf(cache, sizeof cache, "%s/cache", g_dir);
  tune_into(cache);
  setenv("TC_CACHE_DIR", cache, 1); /* cache_dir NULL: the default directory */
  tc_cache_listing *l = NULL;
  assert_tc_ok(tc_cache_list(&l, NULL));
  unsetenv("TC_CACHE_DIR");
  size_t count = 0, damaged = 1, total = 0;
  assert_tc_ok(tc_cache_listing_count(l, &count));
  assert_int_equal(count, 2); /* the tuned kernel, and the shared code (Halide's runtime) */
  assert_tc_ok(tc_cache_listing_damage_count(l, &damaged));
  assert_int_equal(damaged, 0);
  tc_cache_entry e = TC_STRUCT_INIT(tc_cache_entry), shared = TC_STRUCT_INIT(tc_cache_entry);
  size_t mm = 0;
  assert_tc_ok(tc_cache_listing_entry(l, 0, &e));
  if (strcmp(e.def, "mm") != 0) mm = 1;
  assert_tc_ok(tc_cache_listing_entry(l, 1 - mm, &shared));
  assert_string_equal(shared.def, "(shared code)");
  assert_int_equal(shared.candidates, 0);
  assert_true(shared.artefact_bytes > 0);
  assert_int_equal(shared.history_count, 0);
  assert_tc_ok(tc_cache_listing_entry(l, mm, &e));
  assert_string_equal(e.def, "mm");
  assert_true(e.artefact_bytes > 0); /* the kernel's code, for warm start */
  assert_string_equal(e.sizes, "M=64 K=32 N=48");
  assert_string_equal(e.backend, "cpu");
  assert_string_equal(e.libtc, tc_version_string());
  assert_int_equal(strlen(e.key_hash), 64);
  assert_int_equal(strlen(e.family), 64);
  assert_non_null(strstr(e.key, "backend cpu\n"));
  assert_non_null(strstr(e.knobs, "cpu.tile="));
  /* At most: a winner that does not hold up against the start gives way to it (tc_tune). */
  assert_true(e.best_ms > 0 && e.best_ms <= e.default_ms);
  assert_true(e.candidates >= 2);
  assert_true(e.history_count >= e.candidates - 1);
  assert_tc_ok(tc_cache_listing_history_total(l, &total));
  assert_int_equal(total, (size_t)e.history_count); /* one key tuned */
  int found_best = 0;
  for (int64_t j = 0; j < e.history_count; ++j) {
    tc_cache_history_entry h = TC_STRUCT_INIT(tc_cache_history_entry);
    assert_tc_ok(tc_cache_listing_history(l, mm, (size_t)j, &h));
    assert_true(strlen(h.outcome) > 0 && strlen(h.date) > 0);
    if (strcmp(h.outcome, "measured") == 0 && strcmp(h.knobs, e.knobs) == 0)
      found_best = h.ms == e.best_ms || e.best_ms == e.default_ms;
  }
  /* The record's winner is in its history, with its time — unless it is the start after the
   * confirmation, whose time is then the confirmation's median. */
  assert_true(found_best);
  /* Past the end, and NULL outputs. */
  tc_cache_history_entry h = TC_STRUCT_INIT(tc_cache_history_entry);
  const char *id = NULL, *why = NULL;
  assert_fails_with(tc_cache_listing_entry(l, 2, &e), TC_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(tc_last_error_message(), "out of range"));
  assert_fails_with(tc_cache_listing_history(l, mm, (size_t)e.history_count, &h), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_cache_listing_history(l, 2, 0, &h), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_cache_listing_damage(l, 0, &id, &why), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_cache_listing_count(NULL, &count), TC_ERROR_INVALID_ARGUMENT);
  assert_fails_with(tc_cache_listing_entry(l, 0, NULL), TC_ERROR_INVALID_ARGUMENT);
  tc_cache_listing_destroy(l);

  assert_tc_ok(tc_cache_clear(cache));
  assert_tc_ok(tc_cache_list(&l, cache));
  assert_tc_ok(tc_cache_listing_count(l, &count));
  assert_tc_ok(tc_cache_listing_history_total(l, &total));
  assert_int_equal(count, 0);
  assert_int_equal(total, 0);
  tc_cache_listing_destroy(l);
  char data[160];
  snprintf(data, sizeof data, "%s/data.mdb", cache);
  struct stat st;
  assert_int_equal(stat(data, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_missing_cache_is_an_error_and_is_not_created),
      cmocka_unit_test(test_lists_a_tuned_record_and_its_history_then_clears),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
