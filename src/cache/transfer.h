// transfer.h — moving a cache between machines: export writes every record of a store to one
// portable file (a versioned stream of the records' own checksummed encodings), import merges
// such a file into a store keeping the faster entry per key. Records for another target are
// carried along and kept; they are simply never looked up on a machine whose key differs.
#pragma once

#include <string>

#include "cache/store.h"

namespace tc::cache {

// Returns the number of records written. Throws TC_ERROR_CACHE naming the file or the store.
size_t export_to(const Store& store, const std::string& file);
// Returns the number of records stored (faster than or new to the store). A damaged file is
// TC_ERROR_CACHE before anything is stored.
size_t import_from(Store& store, const std::string& file);

}  // namespace tc::cache
