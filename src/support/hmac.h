// hmac.h — HMAC-SHA256 (RFC 2104 over FIPS 180-4) of a message under a secret key, as 64
// lowercase hex digits, and a comparison of two such digests whose time does not depend on
// where they differ. Signs the records of the remote cache tier (src/cache/remote.h). It holds
// no key and reads no file (src/cache/signing.h does).
#pragma once

#include <string>

namespace tc {

std::string hmac_sha256_hex(const std::string& key, const std::string& message);
// a == b, in time that depends only on their lengths.
bool digests_equal(const std::string& a, const std::string& b);

}  // namespace tc
