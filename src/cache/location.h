// location.h — where the cache lives and whether it may be used. The `cache` option names a
// directory, "off", or "auto": $TC_CACHE_DIR, else $XDG_CACHE_HOME/libtc, else
// $HOME/.cache/libtc. Compiled code in a cache is code execution in the process that loads it,
// so a directory is used only if this user owns it and neither group nor others can write it;
// libtc creates it 0700 (and its files 0600) when it writes.
#pragma once

#include <optional>
#include <string>

namespace tc::cache {

// The directory the option value names, or nullopt for "off" (or no home to derive one from).
std::optional<std::string> resolve_dir(const std::string& option_value);

// "" if `dir` exists and is safe to use; else why not ("... is writable by group or others").
// With `create`, a missing directory (and missing parents) is created 0700 first.
std::string check_dir(const std::string& dir, bool create);

// Permission bits as `ls -l`'s owner/group/other digits: "700", "644".
std::string mode_text(unsigned mode);

}  // namespace tc::cache
