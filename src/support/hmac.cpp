// hmac.cpp — see hmac.h. HMAC(K, m) = H((K' ^ opad) || H((K' ^ ipad) || m)), K' the key padded
// to SHA-256's 64-byte block (a longer key hashed first), ipad 0x36 and opad 0x5c repeated.
#include "support/hmac.h"

#include "support/sha256.h"

namespace tc {
namespace {

constexpr size_t kBlock = 64;

std::string padded(const std::string& key, unsigned char pad) {
  std::string k = key.size() > kBlock ? sha256_bytes(key) : key;
  k.resize(kBlock, '\0');
  for (char& c : k) c = static_cast<char>(static_cast<unsigned char>(c) ^ pad);
  return k;
}

}  // namespace

std::string hmac_sha256_hex(const std::string& key, const std::string& message) {
  return sha256_hex(padded(key, 0x5c) + sha256_bytes(padded(key, 0x36) + message));
}

bool digests_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace tc
