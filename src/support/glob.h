// Shell-style name patterns (`layers.*.attention.qkv.mm`), as fnmatch(3)
// with no flags matches them: `*` any run of characters ('.' and '/'
// included), `?` any one character, every other character itself.
//
// The sharding rules match every value of a model against every rule for
// each configuration of a search; fnmatch was 3 % of a GPT-3 175B search
// (docs/cost_model.md §6). GlobMatch does the two wildcards itself and
// leaves what it does not do (bracket expressions, backslash escapes,
// bytes outside ASCII, which fnmatch reads by the locale) to fnmatch.

#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace distir {

/// Whether `name` matches `pattern`: fnmatch(pattern, name, 0) == 0.
bool GlobMatch(std::string_view pattern, std::string_view name);

/// A pattern read once for many names: GlobPattern(p).Matches(n) ==
/// GlobMatch(p, n).
class GlobPattern {
 public:
  GlobPattern() = default;
  explicit GlobPattern(std::string pattern);
  bool Matches(std::string_view name) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  bool plain_ = true;                     // no bracket, backslash or byte outside ASCII
  bool any_char_ = false;                 // has '?', which fnmatch reads by character
  size_t last_star_ = std::string::npos;  // of the last `*`; npos: none
  // A plain pattern of literals and `*` only, split at its stars (so
  // `segments_.size()` is the stars + 1): the first segment is the name's
  // prefix, the last its suffix, the others found in order between them.
  std::vector<std::string> segments_;
};

}  // namespace distir
