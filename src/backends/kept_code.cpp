// kept_code.cpp — see kept_code.h.
#include "backends/kept_code.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "support/sha256.h"

namespace tc::backends {
namespace {

constexpr size_t kChecksumChars = 64;  // SHA-256 in hex, after the bytes

}  // namespace

std::string temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

std::string make_temp_dir(const std::string& prefix) {
  std::vector<char> buf(prefix.begin(), prefix.end());
  for (char c : std::string("XXXXXX")) buf.push_back(c);
  buf.push_back('\0');
  return mkdtemp(buf.data()) ? std::string(buf.data()) : std::string();
}

bool is_private_dir(const std::string& dir) {
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 022) == 0;
}

KeptCode::KeptCode(const std::string& name) : dir_(temp_root() + "/" + name) {}

bool KeptCode::usable() const { return is_private_dir(dir_); }

std::string KeptCode::path(const std::string& key) const { return dir_ + "/" + sha256_hex(key); }

std::optional<std::string> KeptCode::find(const std::string& key) const {
  if (!usable()) return std::nullopt;
  std::ifstream in(path(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string file = ss.str();
  if (file.size() < kChecksumChars) return std::nullopt;
  std::string bytes = file.substr(0, file.size() - kChecksumChars);
  if (sha256_hex(bytes) != file.substr(bytes.size())) return std::nullopt;
  utimensat(AT_FDCWD, path(key).c_str(), nullptr, 0);  // used now: the prune removes the least recently used
  return bytes;
}

bool KeptCode::keep(const std::string& key, const std::string& bytes) const {
  if (mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) return false;
  if (!usable()) return false;
  std::string staged = dir_ + "/.staged-XXXXXX";
  int fd = mkstemp(staged.data());
  if (fd < 0) return false;
  const std::string file = bytes + sha256_hex(bytes);
  size_t written = 0;
  while (written < file.size()) {
    ssize_t n = write(fd, file.data() + written, file.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  bool ok = close(fd) == 0 && written == file.size() && std::rename(staged.c_str(), path(key).c_str()) == 0;
  if (!ok) {
    std::remove(staged.c_str());
    return false;
  }
  prune();
  return true;
}

// At most once every 256 files kept by this process (a directory listing per compile would cost
// more than it saves): past kKeptFiles files, the least recently used half goes, and any staged
// file of a process that died before its rename, once an hour old.
void KeptCode::prune() const {
  static std::atomic<unsigned> kept{0};
  if (kept++ % 256 != 0) return;
  std::vector<std::pair<time_t, std::string>> files;
  const time_t now = time(nullptr);
  if (DIR* d = opendir(dir_.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name, file = dir_ + "/" + name;
      struct stat st;
      if (name == "." || name == ".." || stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (name.rfind(".staged-", 0) == 0) {
        if (now - st.st_mtime > 3600) std::remove(file.c_str());
        continue;
      }
      files.emplace_back(st.st_mtime, file);
    }
    closedir(d);
  }
  if (files.size() <= kKeptFiles) return;
  std::sort(files.begin(), files.end());
  for (size_t k = 0; k < files.size() / 2; ++k) std::remove(files[k].second.c_str());
}

}  // namespace tc::backends
