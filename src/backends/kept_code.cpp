// kept_code.cpp — see kept_code.h.
#include "backends/kept_code.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

namespace {

// dl_iterate_phdr's search for the object holding `address` and its GNU build ID.
struct BuildSearch {
  uintptr_t address;
  std::string id;  // hex
};

int find_build(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<BuildSearch*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    holds = ph.p_type == PT_LOAD && s->address >= start && s->address < start + ph.p_memsz;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((n->n_namesz + 3) & ~3u);
      if (desc + n->n_descsz > end) break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char* hex = "0123456789abcdef";
        for (size_t k = 0; k < n->n_descsz; ++k)
          s->id += {hex[static_cast<unsigned char>(desc[k]) >> 4], hex[static_cast<unsigned char>(desc[k]) & 15]};
        return 1;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

std::string find_library_build() {
  BuildSearch search{reinterpret_cast<uintptr_t>(&find_build)};
  dl_iterate_phdr(find_build, &search);
  if (!search.id.empty()) return "build-id " + search.id;
  Dl_info info;
  struct stat st;
  if (dladdr(reinterpret_cast<void*>(&find_build), &info) == 0 || info.dli_fname == nullptr ||
      stat(info.dli_fname, &st) != 0)
    return "";
  return std::string("file ") + info.dli_fname + " " + std::to_string(st.st_size) + " " +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

std::string library_build() {
  static const std::string build = find_library_build();
  return build;
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
