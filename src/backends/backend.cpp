// backend.cpp — see backend.h: what a backend that cannot reload compiled code answers.
#include "backends/backend.h"

#include "support/error.h"

namespace tc::backends {

std::unique_ptr<Kernel> Backend::load(const ir::BoundDef&, const Target&, const KnobValues&, const std::string&) const {
  fail(TC_ERROR_UNSUPPORTED, std::string("the ") + name() + " backend cannot reload compiled code");
}

void Backend::use_shared_code(const Target&, const std::string&) const {
  fail(TC_ERROR_UNSUPPORTED, std::string("the ") + name() + " backend has no shared code");
}

}  // namespace tc::backends
