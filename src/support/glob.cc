#include "support/glob.h"

#include <fnmatch.h>

#include <algorithm>
#include <string>

namespace distir {

namespace {

bool Plain(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    return c == '[' || c == '\\' || static_cast<unsigned char>(c) >= 0x80 || c == '\0';
  });
}

// `*` and `?` only: the greedy match that backs up to the last `*`, which
// needs to retry only that one (a later `*` subsumes any earlier choice).
bool Wildcards(std::string_view p, std::string_view s) {
  size_t i = 0, j = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (j < s.size()) {
    if (i < p.size() && p[i] == '*') {
      star = i++;
      resume = j;
    } else if (i < p.size() && (p[i] == '?' || p[i] == s[j])) {
      ++i;
      ++j;
    } else if (star != std::string_view::npos) {
      i = star + 1;
      j = ++resume;
    } else {
      return false;
    }
  }
  while (i < p.size() && p[i] == '*') ++i;
  return i == p.size();
}

// `*`-free `p` against `s` of its length.
bool Chars(std::string_view p, std::string_view s) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '?' && p[i] != s[i]) return false;
  }
  return true;
}

// What follows the last `*` has a fixed length, so it matches the end of
// the name or nothing: checked first, it turns most names away at once.
// `last`: the position of p's last `*`, npos if none.
bool TailFirst(std::string_view p, size_t last, std::string_view s) {
  if (last == std::string_view::npos) return p.size() == s.size() && Chars(p, s);
  const std::string_view tail = p.substr(last + 1);
  if (tail.size() > s.size() || !Chars(tail, s.substr(s.size() - tail.size()))) return false;
  return Wildcards(p.substr(0, last + 1), s.substr(0, s.size() - tail.size()));
}

// `*`-only: `segments` is the pattern split at its stars (at least two). A
// star matches any run, so the first and last segments pin the name's ends
// and each middle one may as well match where it first occurs after the one
// before it (a later match leaves less room for the rest, never more).
bool Segments(const std::vector<std::string>& segments, std::string_view s) {
  const std::string& first = segments.front();
  const std::string& last = segments.back();
  if (first.size() + last.size() > s.size() || !s.starts_with(first) || !s.ends_with(last))
    return false;
  std::string_view rest = s.substr(first.size(), s.size() - first.size() - last.size());
  for (size_t i = 1; i + 1 < segments.size(); ++i) {
    const size_t at = rest.find(segments[i]);
    if (at == std::string_view::npos) return false;
    rest.remove_prefix(at + segments[i].size());
  }
  return true;
}

bool Fnmatch(std::string_view pattern, std::string_view name) {
  return fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), 0) == 0;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view name) {
  return GlobPattern(std::string(pattern)).Matches(name);
}

GlobPattern::GlobPattern(std::string pattern)
    : pattern_(std::move(pattern)),
      plain_(Plain(pattern_)),
      any_char_(pattern_.find('?') != std::string::npos),
      last_star_(pattern_.rfind('*')) {
  if (!plain_ || any_char_ || last_star_ == std::string::npos) return;
  size_t start = 0;
  for (size_t star = pattern_.find('*'); star != std::string::npos;
       star = pattern_.find('*', start)) {
    segments_.push_back(pattern_.substr(start, star - start));
    start = star + 1;
  }
  segments_.push_back(pattern_.substr(start));
}

// A plain pattern's literal characters are ASCII and match bytes alike
// whatever the name holds; only '?' reads the name by character.
bool GlobPattern::Matches(std::string_view name) const {
  if (!plain_ || (any_char_ && !Plain(name))) return Fnmatch(pattern_, name);
  if (!segments_.empty()) return Segments(segments_, name);
  return TailFirst(pattern_, last_star_, name);
}

}  // namespace distir
