// error_of.h — the one helper every white-box (GoogleTest) test uses to expect a tc::Error.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "support/error.h"

namespace tc_test {

// Runs `f`, which must throw tc::Error with `status`; returns the message ("" and a test
// failure otherwise).
template <class F>
std::string error_of(F&& f, int status) {
  try {
    f();
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-tc::Error exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected a tc::Error with status " << status << ", nothing was thrown";
  return "";
}

}  // namespace tc_test
