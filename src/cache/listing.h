// listing.h — what `tc cache ls|show|verify [--remote]` read: every record of a store (or of the remote tier) with its key hash
// and its tuning history, every history entry counted, and every damaged entry named (a record
// or history entry whose checksum, encoding or schema fails, or that is stored under another
// key's hash), each checked as the lookups and the tuner check them. It reads; it never
// repairs or removes (Store::clear does).
#pragma once

#include <string>
#include <vector>

#include "cache/remote.h"
#include "cache/store.h"

namespace tc::cache {

struct Listing {
  struct Entry {
    std::string key_hash;               // the record's database key
    Record record;
    std::vector<HistoryEntry> history;  // of the record's key: timed ones fastest first, then failures
  };
  struct Damage {
    std::string id;   // "record <first 16 hex digits of its key>", "history <16 hex>:<16 hex>"
    std::string why;
  };
  std::vector<Entry> entries;  // in key-hash order
  size_t history_entries = 0;  // every sound history entry, those of keys without a record included
  std::vector<Damage> damage;
};

Listing list(const Store& store);
// The remote tier's, its refused entries as damage.
Listing list(const Remote& remote);

}  // namespace tc::cache
