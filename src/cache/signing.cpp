// signing.cpp — see signing.h.
#include "cache/signing.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cache/location.h"
#include "support/error.h"
#include "support/hmac.h"

namespace tc::cache {
namespace {

const char kMagic[] = "tc-signed 1 ";
constexpr size_t kMagicLength = sizeof kMagic - 1;
constexpr size_t kDigestLength = 64;
constexpr size_t kMinKeyBytes = 16;

std::string mac(const std::string& secret, const std::string& redis_key, const std::string& field,
                const std::string& payload) {
  // Lengths first, so that no split of key, field and payload reads as another.
  return hmac_sha256_hex(secret, std::to_string(redis_key.size()) + ":" + redis_key + std::to_string(field.size()) +
                                     ":" + field + payload);
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  fail(TC_ERROR_CACHE, "remote cache key file '" + path + "' " + why);
}

}  // namespace

std::string read_secret_key(const std::string& path) {
  if (path.empty())
    fail(TC_ERROR_CACHE, "option cache.remote needs cache.remote_key: the path of the secret key file that signs "
                         "the remote cache's records");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) refuse(path, std::string("cannot be read: ") + std::strerror(errno));
  struct stat st{};
  std::string secret;
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::string("cannot be read: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "is not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    problem = "belongs to another user (uid " + std::to_string(st.st_uid) + "); the key must be yours";
  } else if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    problem = "can be read or written by group or others (mode " + mode_text(st.st_mode) +
              "); a key others can read signs code for them (chmod 600)";
  } else {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 && secret.size() < (1u << 20)) secret.append(buf, static_cast<size_t>(n));
    if (n < 0) problem = std::string("cannot be read: ") + std::strerror(errno);
  }
  ::close(fd);
  if (!problem.empty()) refuse(path, problem);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.size() < kMinKeyBytes)
    refuse(path, "holds " + std::to_string(secret.size()) + " bytes; a key needs at least " +
                     std::to_string(kMinKeyBytes) + " (head -c 32 /dev/urandom | base64 > FILE)");
  return secret;
}

std::string sign(const std::string& secret, const std::string& redis_key, const std::string& field,
                 const std::string& payload) {
  return kMagic + mac(secret, redis_key, field, payload) + "\n" + payload;
}

std::optional<std::string> verify(const std::string& secret, const std::string& redis_key, const std::string& field,
                                  const std::string& value, std::string& why) {
  size_t header = kMagicLength + kDigestLength + 1;
  if (value.size() < header || value.compare(0, kMagicLength, kMagic) != 0 || value[header - 1] != '\n') {
    why = "not a signed libtc record (unsigned, or written by something else)";
    return std::nullopt;
  }
  std::string payload = value.substr(header);
  if (!digests_equal(value.substr(kMagicLength, kDigestLength), mac(secret, redis_key, field, payload))) {
    why = "signature does not verify (signed with another key, or changed since it was signed)";
    return std::nullopt;
  }
  return payload;
}

}  // namespace tc::cache
