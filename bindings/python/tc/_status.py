"""_status.py - libtc's error statuses (enum tc_status in include/tc/tc.h) by value.

Only the table: errors.py turns statuses into exceptions. This module imports nothing and loads
no library, so tests/e2e/tclib.py can name statuses before libtc is built (CMake lists the e2e
corpus at configure time, and its cases name the status they expect).
"""

STATUS_NAMES = {
    -1: "TC_ERROR_INVALID_ARGUMENT", -2: "TC_ERROR_SYNTAX", -3: "TC_ERROR_SEMANTIC",
    -4: "TC_ERROR_SHAPE", -5: "TC_ERROR_UNSUPPORTED", -6: "TC_ERROR_COMPILE",
    -7: "TC_ERROR_RUNTIME", -8: "TC_ERROR_CACHE", -9: "TC_ERROR_NO_MEMORY",
    -10: "TC_ERROR_INTERNAL",
}
