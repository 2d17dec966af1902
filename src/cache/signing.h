// signing.h — the secret that signs the remote tier's records, and the signed form of a value.
// Whoever can write to a shared cache can make every machine that loads from it run their
// machine code; a record is therefore loaded from the remote tier only if it carries an
// HMAC-SHA256, under a secret only the cluster's users hold, over the Redis key and field it
// is stored under and its bytes. The secret is read from a file that must be this user's and
// readable by no one else (as ssh refuses a private key others can read). It knows nothing of
// Redis (remote.h) or of what the signed bytes mean (record.h, history.h).
#pragma once

#include <optional>
#include <string>

namespace tc::cache {

// The secret in `path`: its bytes, trailing newline characters removed (a key written with
// `echo` and one written with `printf` agree). Throws TC_ERROR_CACHE naming the file when it
// cannot be read, is not a regular file, is not this user's, can be read or written by group
// or others, or holds fewer than 16 bytes.
std::string read_secret_key(const std::string& path);

// "tc-signed 1 <64 hex digits of the HMAC>\n" followed by `payload`; the HMAC covers the
// Redis key, the field ("" for a plain value) and the payload.
std::string sign(const std::string& secret, const std::string& redis_key, const std::string& field,
                 const std::string& payload);
// The payload of a signed value, or nullopt with `why` set: not a signed value, or a signature
// that does not verify (another secret signed it, or the bytes, key or field were changed).
std::optional<std::string> verify(const std::string& secret, const std::string& redis_key, const std::string& field,
                                  const std::string& value, std::string& why);

}  // namespace tc::cache
