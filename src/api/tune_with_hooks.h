// tune_with_hooks.h — tc_tune with a test's hooks into the search (tune/tuner.h's TuneHooks):
// what tc_tune runs, with none. Not part of the API and not exported: the tests of the tuner
// link libtc's stages and call it; libtc.so's callers cannot reach it.
#pragma once

#include <cstddef>

#include "tc/tc.h"
#include "tune/tuner.h"

namespace tc::api {

int tune_with_hooks(tc_kernel** out, const tc_program* program, const char* entry, const DLTensor* inputs,
                    size_t num_inputs, const tc_options* options, tc_tune_callback callback, void* user,
                    const tune::TuneHooks* hooks);

}  // namespace tc::api
