// cache.cpp — `tc cache`: export, import, ls, show, verify and clear of a local cache, push
// and pull to and from the remote tier, and ls, show and verify of the remote tier.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace tc_cli {

namespace {

struct ListingDeleter { void operator()(tc_cache_listing* l) const { tc_cache_listing_destroy(l); } };
using Listing = std::unique_ptr<tc_cache_listing, ListingDeleter>;

// Which cache a `tc cache` subcommand reads or writes: the local one (dir, NULL: the default)
// and, with --remote, the remote tier (options cache.remote and cache.remote_key).
struct CacheArgs {
  const char* dir = nullptr;
  bool remote = false;
  std::string url, key;
};

// The options naming the remote tier, or null with libtc's message printed.
Options remote_options(const CacheArgs& c) {
  std::string url = c.url, key = c.key;
  if (url.empty() && std::getenv("TC_CACHE_REMOTE")) url = std::getenv("TC_CACHE_REMOTE");
  if (key.empty() && std::getenv("TC_CACHE_REMOTE_KEY")) key = std::getenv("TC_CACHE_REMOTE_KEY");
  if (url.empty()) {
    std::fprintf(stderr, "tc: no remote cache: give --remote URL or set TC_CACHE_REMOTE\n");
    return nullptr;
  }
  tc_options* raw = nullptr;
  if (tc_options_create(&raw) != TC_OK) {
    report(1);
    return nullptr;
  }
  Options opts(raw);
  if (tc_options_set(raw, "cache.remote", url.c_str()) != TC_OK ||
      (!key.empty() && tc_options_set(raw, "cache.remote_key", key.c_str()) != TC_OK)) {
    report(1);
    return nullptr;
  }
  return opts;
}

// The listing of a cache or of the remote tier, or null with libtc's message printed.
Listing list_cache(const CacheArgs& c) {
  tc_cache_listing* raw = nullptr;
  Options remote = c.remote ? remote_options(c) : nullptr;
  if (c.remote && !remote) return nullptr;
  if ((c.remote ? tc_cache_list_remote(&raw, remote.get()) : tc_cache_list(&raw, c.dir)) != TC_OK) {
    report(1);
    return nullptr;
  }
  return Listing(raw);
}

std::vector<tc_cache_entry> entries_of(const tc_cache_listing* l) {
  size_t n = 0;
  tc_cache_listing_count(l, &n);
  std::vector<tc_cache_entry> out(n, TC_STRUCT_INIT(tc_cache_entry));
  for (size_t i = 0; i < n; ++i) tc_cache_listing_entry(l, i, &out[i]);
  return out;
}

std::string number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Rows of cells, each column as wide as its widest cell, two spaces apart.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 2, ' ') : "");
    std::printf("%s\n", line.c_str());
  }
}

// "2 damaged entries (tc cache verify names them)" on stderr, when there are any.
void note_damage(const tc_cache_listing* l) {
  size_t damaged = 0;
  tc_cache_listing_damage_count(l, &damaged);
  if (damaged > 0)
    std::fprintf(stderr, "tc: %zu damaged %s in the cache (tc cache verify names %s)\n", damaged,
                 damaged == 1 ? "entry" : "entries", damaged == 1 ? "it" : "them");
}

int cmd_cache_ls(const CacheArgs& dir) {
  Listing l = list_cache(dir);
  if (!l) return 1;
  std::vector<std::vector<std::string>> rows = {
      {"DEF", "SIZES", "BACKEND", "TARGET", "BEST MS", "DEFAULT MS", "SPEED-UP", "HISTORY", "DATE"}};
  for (const tc_cache_entry& e : entries_of(l.get())) {
    if (e.candidates == 0)  // code shared by kernels (a backend's runtime): nothing was measured
      rows.push_back({e.def, std::to_string((e.artefact_bytes + 1023) / 1024) + " KiB of code", e.backend, e.target,
                      "-", "-", "-", "-", e.date});
    else
      rows.push_back({e.def, e.sizes, e.backend, e.target, number("%.4g", e.best_ms), number("%.4g", e.default_ms),
                      speedup(e.default_ms, e.best_ms), std::to_string(e.history_count), e.date});
  }
  print_table(rows);
  size_t history = 0;
  tc_cache_listing_history_total(l.get(), &history);
  std::printf("%zu record%s, %zu history entr%s\n", rows.size() - 1, rows.size() == 2 ? "" : "s", history,
              history == 1 ? "y" : "ies");
  note_damage(l.get());
  return 0;
}

// `tc cache show`: each record (of def `filter`, or whose key hash starts with it) in full.
int cmd_cache_show(const CacheArgs& dir, const char* filter) {
  Listing l = list_cache(dir);
  if (!l) return 1;
  std::vector<tc_cache_entry> all = entries_of(l.get());
  size_t shown = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const tc_cache_entry& e = all[i];
    if (filter && std::strcmp(filter, e.def) != 0 && std::strncmp(filter, e.key_hash, std::strlen(filter)) != 0)
      continue;
    std::printf("%srecord %s\n", shown++ ? "\n" : "", e.key_hash);
    std::printf("  def         %s\n  sizes       %s\n  backend     %s\n  target      %s\n  knobs       %s\n", e.def,
                e.sizes, e.backend, e.target, e.knobs);
    std::printf("  best        %.4g ms (default %.4g ms, speed-up %s)\n", e.best_ms, e.default_ms,
                speedup(e.default_ms, e.best_ms).c_str());
    std::printf("  candidates  %lld\n  date        %s\n  libtc       %s\n  family      %s\n  artefact    %lld bytes\n",
                static_cast<long long>(e.candidates), e.date, e.libtc, e.family,
                static_cast<long long>(e.artefact_bytes));
    std::istringstream key(e.key);
    std::string line;
    for (const char* label = "  key         | "; std::getline(key, line); label = "              | ")
      std::printf("%s%s\n", label, line.c_str());
    std::printf("  history     %lld entr%s\n", static_cast<long long>(e.history_count), e.history_count == 1 ? "y" : "ies");
    for (int64_t j = 0; j < e.history_count; ++j) {
      tc_cache_history_entry h = TC_STRUCT_INIT(tc_cache_history_entry);
      tc_cache_listing_history(l.get(), i, static_cast<size_t>(j), &h);
      std::string ms = h.ms > 0 ? number("%.4g ms", h.ms) : "-";
      std::printf("    %-14s  %-12s  %s  %s%s%s\n", h.outcome, ms.c_str(), h.date, h.knobs, *h.why ? ": " : "", h.why);
    }
  }
  note_damage(l.get());
  if (filter && shown == 0) {
    std::fprintf(stderr, "tc: no record of a def '%s' or with a key hash starting '%s'\n", filter, filter);
    return 1;
  }
  return 0;
}

// `tc cache verify`: one line per damaged entry and exit 1, or a summary and exit 0.
int cmd_cache_verify(const CacheArgs& dir) {
  Listing l = list_cache(dir);
  if (!l) return 1;
  size_t damaged = 0, history = 0;
  tc_cache_listing_damage_count(l.get(), &damaged);
  tc_cache_listing_history_total(l.get(), &history);
  for (size_t i = 0; i < damaged; ++i) {
    const char *id = nullptr, *why = nullptr;
    tc_cache_listing_damage(l.get(), i, &id, &why);
    std::printf("damaged: %s: %s\n", id, why);
  }
  size_t records = entries_of(l.get()).size();
  std::printf("%zu record%s and %zu history entr%s sound, %zu damaged\n", records, records == 1 ? "" : "s", history,
              history == 1 ? "y" : "ies", damaged);
  return damaged == 0 ? 0 : 1;
}

// `tc cache push|pull`: one line with the number of records the other side stored.
int cmd_cache_move(const std::string& sub, const CacheArgs& c) {
  Options remote = remote_options(c);
  if (!remote) return 1;
  size_t stored = 0;
  int status = sub == "push" ? tc_cache_push(c.dir, remote.get(), &stored) : tc_cache_pull(c.dir, remote.get(), &stored);
  if (status != TC_OK) return report(status);
  std::printf("%zu record%s stored %s\n", stored, stored == 1 ? "" : "s",
              sub == "push" ? "in the remote cache" : "in the local cache");
  return 0;
}

}  // namespace

// `tc cache SUBCOMMAND [ARG] [--cache DIR] [--remote [URL]] [--remote-key FILE]`; without
// --cache the default directory (NULL).
int cmd_cache(int argc, char** argv) {
  if (argc < 3) return usage();
  std::string sub = argv[2];
  bool takes_file = sub == "export" || sub == "import";
  bool moves = sub == "push" || sub == "pull";
  bool lists = sub == "ls" || sub == "show" || sub == "verify";
  if (!takes_file && !moves && !lists && sub != "clear") return usage();
  const char* arg = nullptr;  // export/import: FILE (required); show: DEF or KEY-HASH prefix
  CacheArgs c;
  c.remote = moves;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cache") {
      if (i + 1 >= argc) return usage();
      c.dir = argv[++i];
    } else if (a == "--remote" && (moves || lists)) {
      c.remote = true;
      if (i + 1 < argc && std::strstr(argv[i + 1], "://")) c.url = argv[++i];
    } else if (a == "--remote-key" && (moves || lists)) {
      if (i + 1 >= argc) return usage();
      c.key = argv[++i];
    } else if (!arg && (takes_file || sub == "show") && (a.empty() || a[0] != '-' || a == "-")) {
      arg = argv[i];
    } else {
      return usage();
    }
  }
  if (lists && c.remote && c.dir) {
    std::fprintf(stderr, "tc: cache %s reads one cache: --cache DIR or --remote, not both\n", sub.c_str());
    return 2;
  }
  if (moves) return cmd_cache_move(sub, c);
  if (sub == "ls") return cmd_cache_ls(c);
  if (sub == "show") return cmd_cache_show(c, arg);
  if (sub == "verify") return cmd_cache_verify(c);
  if (sub == "clear") return tc_cache_clear(c.dir) == TC_OK ? 0 : report(1);
  if (!arg) return usage();
  int status = sub == "export" ? tc_cache_export(c.dir, arg) : tc_cache_import(c.dir, arg);
  if (status != TC_OK) return report(status);
  return 0;
}

}  // namespace tc_cli
