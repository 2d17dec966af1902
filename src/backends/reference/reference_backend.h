// reference_backend.h — the reference backend: an interpreter that walks each statement's
// inferred iteration domain in order and evaluates it with the language's scalar semantics.
// Slow, simple and complete: the oracle every other backend is tested against.
#pragma once

#include <memory>

#include "backends/kernel.h"
#include "ir/bind.h"
#include "support/options.h"

namespace tc::backends::reference {

std::unique_ptr<Kernel> compile(const ir::BoundDef& bound, const Options& options);

}  // namespace tc::backends::reference
