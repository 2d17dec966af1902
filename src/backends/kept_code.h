// kept_code.h — compiled code kept on disk by the text it was compiled from, for every process
// of this user, as ccache keeps objects: the cuda emulation's host objects (cuda/emulate.h),
// NVRTC's cubins (cuda/nvrtc.h), the cpu backend's objects and its Halide runtime (cpu/jit.h).
// A compile of a text compiled before, by this process or another, takes the kept bytes instead
// of running the compiler. The corpus at several knob sets, the tuner's candidates and the
// sanitizer builds print many identical texts (in one run of the test suite 353 of 1377 emulated
// compiles and 224 of 915 NVRTC compiles were repeats, and 1008 of 2141 cpu compiles), and every
// process that compiles for the cpu needs the runtime (0.8 s to build; 102 processes of one run
// of the suite built it).
//
// A directory per kind of compiler, private to this user (0700, used only if it is this user's
// and no one else can write it: the bytes are code that is run), in $TMPDIR (else /tmp). One file
// per key, named by the SHA-256 of the key (a text naming everything the bytes depend on: the
// compiler, its options, the source), holding the bytes and then the SHA-256 of the bytes, checked
// on every read: a damaged file is a miss, compiled again and replaced. Written under a
// temporary name and renamed (atomic: a reader sees a whole file or none). Bounded: past
// kKeptFiles files the least recently used half is removed (a file's time is its last use).
// It is not the compilation cache (src/cache), which keeps tuned kernels by def, sizes and knobs
// in a directory the user chose; this is below it.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "support/error.h"

namespace tc::backends {

// $TMPDIR, else /tmp.
std::string temp_root();
// A new directory `prefix` + six random characters (mkdtemp: this user's alone); "" if it
// cannot be made.
std::string make_temp_dir(const std::string& prefix);
// Whether `dir` is a directory of this user's that no one else can write.
bool is_private_dir(const std::string& dir);

// The build of libtc this code is part of, as text: its GNU build ID (a hash of the linked
// code), else its file's path, size and modification time; "" when neither can be found. Code
// that libtc's own code generation made is kept under it, so that no other build takes it.
std::string library_build();

class KeptCode {
 public:
  static constexpr size_t kKeptFiles = 4096;

  // The directory temp_root()/`name`, made 0700 by the first keep() (a process that only
  // fails to compile leaves nothing in $TMPDIR); every lookup a miss and nothing kept while it
  // is not private.
  explicit KeptCode(const std::string& name);
  bool usable() const;  // it exists and is private
  const std::string& dir() const { return dir_; }

  // The file of `key`: dir/<SHA-256 of key>.
  std::string path(const std::string& key) const;
  // The bytes kept for `key`, or nullopt (none, unreadable, or damaged: its checksum is wrong).
  std::optional<std::string> find(const std::string& key) const;
  // Keeps `bytes` for `key` (replacing what is there); false when it could not (unusable, a
  // full disk): a compile never fails for that.
  bool keep(const std::string& key, const std::string& bytes) const;
  // The bytes kept for `key` put to use by use(bytes); where there are none, or use throws
  // tc::Error (they do not load here), make() instead, whose bytes are kept in their place. An
  // empty key: make() alone, nothing kept.
  template <class Use, class Make>
  void use_or_make(const std::string& key, Use&& use, Make&& make) const {
    if (std::optional<std::string> bytes = key.empty() ? std::nullopt : find(key)) {
      try {
        use(std::move(*bytes));
        return;
      } catch (const Error&) {
      }
    }
    const std::string made = make();
    if (!key.empty()) keep(key, made);
  }

 private:
  void prune() const;
  std::string dir_;
};

}  // namespace tc::backends
