// reference_backend.h — the reference backend: an interpreter that walks each statement's
// inferred iteration domain in order and evaluates it with the language's scalar semantics.
// Slow, simple and complete: the oracle every other backend is tested against.
#pragma once

#include "backends/backend.h"

namespace tc::backends::reference {

const Backend& backend();  // runs on the host (kDLCPU); no knobs of its own

}  // namespace tc::backends::reference
