// location.cpp — see location.h.
#include "cache/location.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tc::cache {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// mkdir -p with mode 0700 for what it creates.
bool make_dirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    std::string prefix = dir.substr(0, at);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> resolve_dir(const std::string& value) {
  if (value == "off") return std::nullopt;
  if (value != "auto" && !value.empty()) return value;
  if (!env("TC_CACHE_DIR").empty()) return env("TC_CACHE_DIR") == "off" ? std::nullopt : std::optional(env("TC_CACHE_DIR"));
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/libtc";
  if (!env("HOME").empty()) return env("HOME") + "/.cache/libtc";
  return std::nullopt;
}

std::string check_dir(const std::string& dir, bool create) {
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || !create) return "cache directory '" + dir + "' does not exist";
    if (!make_dirs(dir)) return "cannot create cache directory '" + dir + "': " + std::strerror(errno);
    if (::stat(dir.c_str(), &st) != 0) return "cannot use cache directory '" + dir + "': " + std::strerror(errno);
  }
  if (!S_ISDIR(st.st_mode)) return "cache path '" + dir + "' is not a directory";
  if (st.st_uid != ::geteuid())
    return "cache directory '" + dir + "' belongs to another user (uid " + std::to_string(st.st_uid) +
           "); libtc loads kernels only from a cache its user owns";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "cache directory '" + dir + "' is writable by group or others (mode " + mode_text(st.st_mode) + "); libtc loads kernels only from a directory no one else can write (chmod 700)";
  return "";
}

std::string mode_text(unsigned mode) {
  return std::to_string((mode >> 6) & 7) + std::to_string((mode >> 3) & 7) + std::to_string(mode & 7);
}

}  // namespace tc::cache
