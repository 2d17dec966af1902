// remote_transfer.h — moving records and tuning history between the local cache (store.h) and
// the remote tier (remote.h): everything (`tc cache push|pull`), or one key's (tc_tune pulls
// what other machines measured of its key before searching and publishes its winner and its
// history after). Records keep the faster of the two sides (the remote's compare-and-set, the
// store's keep-the-faster write); history entries of the same key and knobs are replaced.
// Damaged or refused entries are not carried. Throws TC_ERROR_CACHE from either side.
#pragma once

#include <cstddef>
#include <string>

#include "cache/remote.h"
#include "cache/store.h"

namespace tc::cache {

struct Moved {
  size_t offered = 0;  // records read from the sending side
  size_t records = 0;  // stored on the receiving side (new there, or faster)
  size_t history = 0;  // history entries written
};

Moved push(const Store& local, const Remote& remote);
Moved pull(Store& local, const Remote& remote);
// The same for the record and history of one key text only.
Moved push_key(const Store& local, const Remote& remote, const std::string& key_text);
Moved pull_key(Store& local, const Remote& remote, const std::string& key_text);

}  // namespace tc::cache
