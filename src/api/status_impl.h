// status_impl.h — template body of tc::api::guarded (see status.h).
#pragma once

#include <new>

#include "support/error.h"

namespace tc::api {

template <typename F>
int guarded(F&& f) {
  try {
    f();
    return TC_OK;
  } catch (const tc::Error& e) {
    set_last_error(e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return TC_ERROR_NO_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what());
    return TC_ERROR_INTERNAL;
  } catch (...) {
    set_last_error("internal error: unknown exception");
    return TC_ERROR_INTERNAL;
  }
}

}  // namespace tc::api
