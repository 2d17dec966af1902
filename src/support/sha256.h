// sha256.h — SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits. Used where a
// digest must not collide in practice: cache keys and record checksums. Not for secrets.
#pragma once

#include <string>

namespace tc {

std::string sha256_hex(const std::string& data);
// The same digest as its 32 bytes (what HMAC feeds back into the hash).
std::string sha256_bytes(const std::string& data);
// The same digest by the portable code alone, where sha256_hex uses the CPU's SHA instructions
// (tests compare the two).
std::string sha256_hex_portable(const std::string& data);

}  // namespace tc
